"""psycopg 3 scenario: server-side parameter binding (extended protocol),
prepare=True, pipeline mode, conn.transaction(), cursor.copy."""
import datetime

import psycopg
from psycopg import sql

from scenario_common import (DATA64K, ROLE_PASSWORD, WRONG_PASSWORD, Mismatch, Runner, credentials, expect, expect_bad_password,
                             expect_eq, host_port, prefix, role_setup)

P = prefix("psycopg3")
HOST, PORT = host_port()
USER, PASSWORD = credentials()
r = Runner("psycopg3")
r.version("%s (libpq %d)" % (psycopg.__version__, psycopg.pq.version()))

conn = None


def connect():
    global conn
    if conn is not None and not conn.closed:
        try:
            conn.close()
        except Exception:
            pass
    conn = psycopg.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, dbname="postgres", connect_timeout=10, autocommit=True)
    return conn


def healthy():
    if conn is None or conn.closed or conn.broken:
        connect()
        return
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.rollback()
        conn.execute("SELECT 1")
    except Exception:
        connect()


def select1():
    expect_eq(conn.execute("SELECT 1").fetchone(), (1,), "SELECT 1 after the error")


def check(name, fn, *args):
    healthy()
    return r.run(name, fn, *args)


def T(suffix):
    return sql.Identifier(P + suffix)


def c_connect():
    connect()
    expect_eq(conn.execute("SELECT 1").fetchone(), (1,), "SELECT 1")
    return "server_version %s" % conn.info.parameter_status("server_version")


def c_create():
    for t in ("in (CONSUMER c)", "out", "bin", "copy"):
        conn.execute("CREATE TOPIC " + P + t)
    return "4 topics"


INSERT = sql.SQL("INSERT INTO {} (producer_id, seqno, data, attrs) VALUES (%s, %s, %s, %s)").format(T("in"))


def c_insert_params():
    with conn.cursor() as cur:
        for i in range(1, 6):
            cur.execute(INSERT, ("prod", i, ("m%d" % i).encode(), '{"k":"v"}'))
            expect_eq(cur.rowcount, 1, "rowcount of INSERT seqno %d" % i)
        cur.execute(INSERT, ("prod", 3, b"dup", '{"k":"v"}'))
        expect_eq(cur.rowcount, 0, "rowcount of the duplicate (prod, 3)")
        expect_eq(cur.statusmessage, "INSERT 0 0", "tag of the duplicate")
    return "5 inserts (int, str, bytes parameters) count 1, duplicate counts 0"


def c_insert_prepared():
    with conn.cursor() as cur:
        for i in range(6, 11):
            cur.execute(INSERT, ("prod", i, ("m%d" % i).encode(), '{"k":"v"}'), prepare=True)
            expect_eq(cur.rowcount, 1, "rowcount of prepared INSERT seqno %d" % i)
        cur.execute(INSERT, ("prod", 6, b"dup", '{"k":"v"}'), prepare=True)
        expect_eq(cur.rowcount, 0, "rowcount of the prepared duplicate (prod, 6)")
    return "5 prepared inserts, duplicate counts 0"


def c_pipeline():
    ins = sql.SQL("INSERT INTO {} (producer_id, seqno, data) VALUES (%s, %s, %s)").format(T("out"))
    curs = [conn.cursor() for _ in range(4)]
    with conn.pipeline():
        for i, cur in enumerate(curs[:3]):
            cur.execute(ins, ("pipe", i + 1, b"p"))
        curs[3].execute(ins, ("pipe", 2, b"dup"))
    expect_eq([c.rowcount for c in curs], [1, 1, 1, 0], "rowcounts of the pipelined inserts")
    expect_eq(conn.execute(sql.SQL("SELECT count(*) FROM {}").format(T("out"))).fetchone(), (3,), "messages after the pipeline")
    return "4 pipelined inserts, duplicate counts 0"


def c_bytea():
    with conn.cursor() as cur:
        cur.execute(sql.SQL("INSERT INTO {} (data) VALUES (%s)").format(T("bin")), (DATA64K,))
        expect_eq(cur.rowcount, 1, "rowcount")
        got = cur.execute(sql.SQL("SELECT data FROM {}").format(T("bin"))).fetchone()[0]
        expect(got == DATA64K, "64 KiB bytea differs (text result, got %d bytes)" % len(got))
        cur2 = conn.cursor(binary=True)
        got = cur2.execute(sql.SQL("SELECT data FROM {}").format(T("bin"))).fetchone()[0]
        expect(got == DATA64K, "64 KiB bytea differs (binary result, got %d bytes)" % len(got))
    return "65536 bytes, text and binary results"


TS = datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)


def c_timestamptz():
    conn.execute(sql.SQL("INSERT INTO {} (data, created_at, message_group_id) VALUES (%s, %s, %s)").format(T("bin")), (b"ts", TS, "g1"))
    rows = conn.execute(sql.SQL("SELECT created_at, message_group_id FROM {} WHERE data = %s AND written_at >= %s").format(T("bin")), (b"ts", TS)).fetchall()
    expect_eq(rows, [(TS, "g1")], "created_at read back")
    return "created_at = %s; written_at >= a datetime parameter" % TS.isoformat()


def c_uuid_param():
    import uuid
    u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    with conn.cursor() as cur:
        for fmt in ("%s", "%b"):  # psycopg declares uuid (2950), text or binary
            cur.execute(sql.SQL("INSERT INTO {} (data, message_group_id) VALUES (%s, " + fmt + ")").format(T("bin")), (b"uuid", u))
            expect_eq(cur.rowcount, 1, "rowcount (%s)" % fmt)
        got = cur.execute(sql.SQL("SELECT %s::text, count(*) FROM {} WHERE message_group_id = %b::text").format(T("bin")), (u, u)).fetchone()
        expect_eq(got, (str(u), 2), "uuid as text")
    return "uuid.UUID (declared uuid, text and binary) into message_group_id and as ::text"


def c_binary_params():
    # %b: every parameter in binary; psycopg picks int2 for small ints.
    with conn.cursor() as cur:
        cur.execute(sql.SQL("INSERT INTO {} (producer_id, seqno, data, created_at) VALUES (%b, %b, %b, %b)").format(T("bin")), ("binp", 1, DATA64K, TS))
        expect_eq(cur.rowcount, 1, "rowcount")
        cur.execute(sql.SQL("INSERT INTO {} (producer_id, seqno, data) VALUES (%b, %b, %b)").format(T("bin")), ("binp", 1, b"dup"))
        expect_eq(cur.rowcount, 0, "rowcount of the duplicate")
        row = cur.execute(sql.SQL("SELECT seqno, data = %b, created_at FROM {} WHERE producer_id = %b").format(T("bin")), (DATA64K, "binp")).fetchone()
        expect_eq(row, (1, True, TS), "row")
    return "binary text/int2/bytea/timestamptz parameters, duplicate counts 0"


def c_jsonb():
    attrs, k = conn.execute(sql.SQL("SELECT attrs, attrs->>'k' FROM {} WHERE seqno = %s").format(T("in")), (1,)).fetchone()
    expect_eq(attrs, {"k": "v"}, "attrs")
    expect_eq(k, "v", "attrs->>'k'")
    attrs = conn.cursor(binary=True).execute(sql.SQL("SELECT attrs FROM {} WHERE seqno = %s").format(T("in")), (2,)).fetchone()[0]
    expect_eq(attrs, {"k": "v"}, "attrs (binary)")
    return "attrs {'k': 'v'}, text and binary"


def c_stateless():
    rows = conn.execute(sql.SQL("SELECT seqno, convert_from(data, 'UTF8') FROM {} ORDER BY offset").format(T("in"))).fetchall()
    expect_eq(rows, [(i, "m%d" % i) for i in range(1, 11)], "all messages")
    rows = conn.execute(sql.SQL("SELECT offset FROM {} WHERE offset >= %s ORDER BY offset LIMIT %s").format(T("in")), (7, 2)).fetchall()
    expect_eq(rows, [(7,), (8,)], "offset >= 7 LIMIT 2")
    rows = conn.execute(sql.SQL("SELECT offset FROM {} WHERE producer_id = %s AND seqno = %s").format(T("in")), ("prod", 3)).fetchall()
    expect_eq(rows, [(2,)], "the original of the duplicate")
    return "10 rows in order; WHERE/LIMIT parameters"


def c_array_param():
    got = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE partition = ANY(%s) AND offset = ANY(%b)").format(T("in")), ([0, 5], [0, 1, 2])).fetchone()
    expect_eq(got, (3,), "count")
    return "lists as text and binary arrays (= ANY)"


def c_named_cursor():
    with conn.transaction():
        with conn.cursor(name="scan") as cur:  # psycopg.ServerCursor: DECLARE, FETCH
            cur.itersize = 4
            cur.execute(sql.SQL("SELECT seqno FROM {} ORDER BY offset").format(T("in")))
            got = [r[0] for r in cur]
    expect_eq(got, list(range(1, 11)), "rows through the server cursor")
    return "10 rows through DECLARE/FETCH"


def consume(cur, n):
    cur.execute(sql.SQL("SELECT offset, data FROM {} WITH (CONSUMER = c) LIMIT %s").format(T("in")), (n,))
    return [(o, bytes(d).decode()) for o, d in cur.fetchall()]


def c_consumer():
    with conn.cursor() as cur:
        expect_eq(consume(cur, 3), [(0, "m1"), (1, "m2"), (2, "m3")], "first consumer read")
        expect_eq(consume(cur, 3), [(3, "m4"), (4, "m5"), (5, "m6")], "second consumer read")
    return "offsets 0-2 then 3-5 (LIMIT as a parameter)"


def c_rpw():
    with conn.transaction():
        with conn.cursor() as cur:
            got = consume(cur, 2)
            expect_eq(got, [(6, "m7"), (7, "m8")], "read in the transaction")
            for o, d in got:
                cur.execute(sql.SQL("INSERT INTO {} (producer_id, seqno, data) VALUES (%s, %s, %s)").format(T("out")), ("rpw", o, d.upper().encode()))
                expect_eq(cur.rowcount, 1, "INSERT in the transaction")
    rows = conn.execute(sql.SQL("SELECT seqno, data FROM {} WHERE producer_id = 'rpw' ORDER BY offset").format(T("out"))).fetchall()
    expect_eq(rows, [(6, b"M7"), (7, b"M8")], "committed output")
    return "read 6-7, wrote 2, committed"


def c_rollback():
    with conn.transaction(force_rollback=True):
        with conn.cursor() as cur:
            expect_eq(consume(cur, 2), [(8, "m9"), (9, "m10")], "read in the transaction")
            cur.execute(sql.SQL("INSERT INTO {} (data) VALUES (%s)").format(T("out")), (b"never",))
    with conn.cursor() as cur:
        expect_eq(consume(cur, 10), [(8, "m9"), (9, "m10")], "read again after ROLLBACK")
    expect_eq(conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE data = 'never'").format(T("out"))).fetchone(), (0,), "rolled-back message")
    return "8-9 read again, nothing written"


class _Rollback(Exception):
    pass


def c_nested_transaction():
    # A nested conn.transaction() is a savepoint.
    first = []  # the server's error, which the outer block's exit may mask
    try:
        with conn.transaction():
            conn.execute(sql.SQL("INSERT INTO {} (producer_id, seqno, data) VALUES ('nested', 1, 'outer')").format(T("out")))
            try:
                with conn.transaction():
                    conn.execute(sql.SQL("INSERT INTO {} (producer_id, seqno, data) VALUES ('nested', 2, 'inner')").format(T("out")))
                    raise _Rollback()
            except _Rollback:
                pass
            except psycopg.Error as e:
                first.append(e)
                raise
    except psycopg.Error:
        if first:
            raise first[0]
        raise
    rows = conn.execute(sql.SQL("SELECT seqno FROM {} WHERE producer_id = 'nested'").format(T("out"))).fetchall()
    expect_eq(rows, [(1,)], "the outer INSERT only")
    return "SAVEPOINT, ROLLBACK TO SAVEPOINT, COMMIT"


def c_copy_in():
    with conn.cursor() as cur:
        with cur.copy(sql.SQL("COPY {} (producer_id, seqno, data) FROM STDIN").format(T("copy"))) as cp:
            cp.write_row(("cp", 1, b"c1"))
            cp.write_row(("cp", 2, b"c2"))
            cp.write_row(("cp", 2, b"dup"))
        rows = cur.execute(sql.SQL("SELECT seqno, data FROM {} ORDER BY offset").format(T("copy"))).fetchall()
        expect_eq(rows, [(1, b"c1"), (2, b"c2")], "copied rows (the duplicate skipped)")
    return "3 rows in (text), duplicate skipped"


def c_copy_in_binary():
    with conn.cursor() as cur:
        with cur.copy(sql.SQL("COPY {} (producer_id, seqno, data) FROM STDIN (FORMAT binary)").format(T("copy"))) as cp:
            cp.set_types(["text", "int8", "bytea"])
            cp.write_row(("cp", 3, DATA64K))
        got = cur.execute(sql.SQL("SELECT data FROM {} WHERE seqno = 3").format(T("copy"))).fetchone()[0]
        expect(got == DATA64K, "binary COPY of 64 KiB differs")
    return "64 KiB row in binary COPY"


def c_copy_out():
    with conn.cursor() as cur:
        with cur.copy(sql.SQL("COPY (SELECT seqno, data FROM {} ORDER BY offset LIMIT 2) TO STDOUT").format(T("copy"))) as cp:
            cp.set_types(["int8", "bytea"])
            rows = list(cp.rows())
    expect_eq(rows, [(1, b"c1"), (2, b"c2")], "COPY TO STDOUT")
    return "2 rows out"


def expect_error(q, params, code):
    def fn():
        try:
            conn.execute(q, params)
        except psycopg.Error as e:
            expect_eq(e.sqlstate, code, "SQLSTATE of %r" % q)
        else:
            raise Mismatch("no error from %r" % q)
        select1()
        return "%s, then SELECT 1" % code
    return fn


def c_error_copy():
    try:
        with conn.cursor() as cur:
            with cur.copy(sql.SQL("COPY {} (producer_id, seqno, data) FROM STDIN").format(T("copy"))) as cp:
                cp.write(b"cp\tabc\tbad\n")
    except psycopg.Error as e:
        expect_eq(e.sqlstate, "22P02", "SQLSTATE of the COPY")
    else:
        raise Mismatch("no error from a COPY row with seqno 'abc'")
    select1()
    return "22P02 from a COPY row, then SELECT 1"


def c_error_pipeline():
    ins = sql.SQL("INSERT INTO {} (producer_id, seqno, data) VALUES (%s, %s, %s)").format(T("out"))
    try:
        with conn.pipeline():
            conn.execute(ins, ("pipe-err", 1, b"a"))
            conn.execute("SELECT 1/%s", (0,))
            conn.execute(ins, ("pipe-err", 2, b"b"))  # skipped: after the error, until Sync
    except psycopg.Error as e:
        expect_eq(e.sqlstate, "22012", "SQLSTATE in the pipeline")
    else:
        raise Mismatch("no error from the pipeline")
    rows = conn.execute(sql.SQL("SELECT seqno FROM {} WHERE producer_id = 'pipe-err'").format(T("out"))).fetchall()
    expect_eq(rows, [], "messages of the failed pipeline (one implicit transaction until Sync)")
    select1()
    return "22012 in a pipeline; the statements of its implicit transaction are not applied; SELECT 1"


def c_error_in_txn():
    try:
        with conn.transaction():
            try:
                conn.execute("SELECT 1/%s", (0,))
            except psycopg.Error as e:
                expect_eq(e.sqlstate, "22012", "first error")
            else:
                raise Mismatch("no error")
            try:
                conn.execute("SELECT 1")
            except psycopg.Error as e:
                expect_eq(e.sqlstate, "25P02", "statement in the failed transaction")
                raise
            raise Mismatch("no 25P02")
    except psycopg.errors.InFailedSqlTransaction:
        pass
    select1()
    return "22012, 25P02, ROLLBACK, SELECT 1"


ROLE, GRANTED = P + "writer", P + "granted"
rconn = None  # the role's connection, autocommit off as psycopg's default


def role_conn():
    if rconn is None or rconn.closed:
        raise Mismatch("no connection as %s (roles_login failed)" % ROLE)
    return rconn


def c_roles_grant():
    for q in role_setup(ROLE, GRANTED):
        conn.execute(q)
    return "CREATE ROLE %s LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC" % ROLE


def c_roles_login():
    global rconn
    rconn = psycopg.connect(host=HOST, port=PORT, user=ROLE, password=ROLE_PASSWORD, dbname="postgres", connect_timeout=10)
    expect_eq(rconn.execute("SELECT current_user").fetchone(), (ROLE,), "current_user")
    rconn.rollback()
    return "psycopg.connect as the role (SCRAM-SHA-256), current_user %s" % ROLE


def c_roles_insert():
    rc = role_conn()
    cur = rc.execute(sql.SQL("INSERT INTO {} (data) VALUES (%s)").format(T("granted")), (b"by-role",))
    expect_eq(cur.rowcount, 1, "rowcount")
    rc.commit()
    rows = conn.execute(sql.SQL("SELECT data FROM {}").format(T("granted"))).fetchall()
    expect_eq(rows, [(b"by-role",)], "the message, read as the bootstrap user")
    return "INSERT with a bytes parameter, committed; read back as the bootstrap user"


def c_roles_denied():
    rc = role_conn()
    try:
        rc.execute(sql.SQL("SELECT data FROM {} WHERE offset >= %s").format(T("granted")), (0,))
    except psycopg.Error as e:
        expect_eq((e.sqlstate, e.diag.message_primary), ("42501", "permission denied for topic " + GRANTED), "sqlstate, diag.message_primary")
    else:
        raise Mismatch("the SELECT as the role succeeded")
    rc.rollback()
    expect_eq(rc.execute("SELECT 1").fetchone(), (1,), "SELECT 1 after the error")
    rc.rollback()
    return "42501 permission denied for topic %s (e.sqlstate), rollback, SELECT 1" % GRANTED


def c_roles_bad_password():
    try:
        psycopg.connect(host=HOST, port=PORT, user=ROLE, password=WRONG_PASSWORD, dbname="postgres", connect_timeout=10).close()
    except psycopg.OperationalError as e:
        return expect_bad_password(e, ROLE, e.sqlstate)
    raise Mismatch("a wrong password logged in")


check("connect", c_connect)
if conn is None:
    r.finish()
check("create_topics", c_create)
check("insert_params", c_insert_params)
check("insert_prepared", c_insert_prepared)
check("pipeline", c_pipeline)
check("bytea_roundtrip", c_bytea)
check("jsonb_attrs", c_jsonb)
check("timestamptz_param", c_timestamptz)
check("binary_params", c_binary_params)
check("uuid_param", c_uuid_param)
check("stateless_read", c_stateless)
check("array_param", c_array_param)
check("named_cursor", c_named_cursor)
check("consumer_read", c_consumer)
check("rpw_txn", c_rpw)
check("rollback_rewind", c_rollback)
check("nested_transaction", c_nested_transaction)
check("copy_in", c_copy_in)
check("copy_in_binary", c_copy_in_binary)
check("copy_out", c_copy_out)
check("error_42601_simple", expect_error("SELEC 1", None, "42601"))
check("error_42601_extended", expect_error("SELEC %s", (1,), "42601"))
check("error_42P01_simple", expect_error("SELECT * FROM " + P + "missing", None, "42P01"))
check("error_42P01_extended", expect_error("SELECT * FROM " + P + "missing WHERE offset = %s", (1,), "42P01"))
check("error_22012_simple", expect_error("SELECT 1/0", None, "22012"))
check("error_22012_extended", expect_error("SELECT 1/%s", (0,), "22012"))
check("error_bad_param", expect_error("SELECT offset FROM " + P + "in WHERE seqno = %s", ("abc",), "22P02"))
check("error_copy", c_error_copy)
check("error_pipeline", c_error_pipeline)
check("error_25P02", c_error_in_txn)
check("roles_grant", c_roles_grant)
check("roles_login", c_roles_login)
check("roles_insert", c_roles_insert)
check("roles_denied", c_roles_denied)
check("roles_bad_password", c_roles_bad_password)
r.finish()
