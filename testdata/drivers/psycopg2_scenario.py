"""psycopg2 scenario: client-side parameter interpolation (%s), the simple
query protocol, `with conn:` transactions, copy_expert/copy_from."""
import datetime
import io

import psycopg2
import psycopg2.errors

from scenario_common import (DATA64K, ROLE_PASSWORD, WRONG_PASSWORD, Mismatch, Runner, credentials, expect, expect_bad_password,
                             expect_eq, host_port, prefix, role_setup)

P = prefix("psycopg2")
HOST, PORT = host_port()
USER, PASSWORD = credentials()
r = Runner("psycopg2")
r.version("%s (libpq %d)" % (psycopg2.__version__.split()[0], psycopg2.extensions.libpq_version()))

conn = None


def connect():
    global conn
    if conn is not None and not conn.closed:
        try:
            conn.close()
        except Exception:
            pass
    conn = psycopg2.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, dbname="postgres", connect_timeout=10)
    conn.autocommit = True
    return conn


def healthy():
    """Reopens the connection if a failed check left it broken."""
    if conn is None or conn.closed:
        connect()
        return
    try:
        if not conn.autocommit:
            conn.rollback()
            conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
    except Exception:
        connect()


def select1():
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        expect_eq(cur.fetchone(), (1,), "SELECT 1 after the error")


def check(name, fn, *args):
    healthy()
    return r.run(name, fn, *args)


def c_connect():
    connect()
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        expect_eq(cur.fetchone(), (1,), "SELECT 1")
    return "server_version %s" % conn.info.parameter_status("server_version")


def c_create():
    with conn.cursor() as cur:
        cur.execute("CREATE TOPIC %sin (CONSUMER c)" % P)
        cur.execute("CREATE TOPIC %sout" % P)
        cur.execute("CREATE TOPIC %sbin" % P)
        cur.execute("CREATE TOPIC %scopy" % P)
    return "4 topics"


INSERT = "INSERT INTO " + P + "in (producer_id, seqno, data, attrs) VALUES (%s, %s, %s, %s)"


def c_insert_params():
    with conn.cursor() as cur:
        for i in range(1, 11):
            cur.execute(INSERT, ("prod", i, ("m%d" % i).encode(), '{"k":"v"}'))
            expect_eq(cur.rowcount, 1, "rowcount of INSERT seqno %d" % i)
        cur.execute(INSERT, ("prod", 3, b"dup", '{"k":"v"}'))
        expect_eq(cur.rowcount, 0, "rowcount of the duplicate (prod, 3)")
        expect_eq(cur.statusmessage, "INSERT 0 0", "tag of the duplicate")
    return "10 inserts count 1, duplicate (prod, 3) counts 0"


def c_bytea():
    with conn.cursor() as cur:
        cur.execute("INSERT INTO " + P + "bin (data) VALUES (%s)", (psycopg2.Binary(DATA64K),))
        expect_eq(cur.rowcount, 1, "rowcount")
        cur.execute("SELECT data FROM " + P + "bin")
        got = bytes(cur.fetchone()[0])
        expect(got == DATA64K, "64 KiB bytea differs (got %d bytes)" % len(got))
    return "65536 bytes"


TS = datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)


def c_timestamptz():
    with conn.cursor() as cur:
        cur.execute("INSERT INTO " + P + "bin (data, created_at, message_group_id) VALUES (%s, %s, %s)", (b"ts", TS, "g1"))
        cur.execute("SELECT created_at, message_group_id FROM " + P + "bin WHERE data = %s AND written_at >= %s", (b"ts", TS))
        expect_eq(cur.fetchall(), [(TS, "g1")], "created_at read back")
    return "created_at = %s; written_at >= a datetime parameter" % TS.isoformat()


def c_execute_batch():
    import psycopg2.extras
    with conn.cursor() as cur:
        psycopg2.extras.execute_batch(cur, "INSERT INTO " + P + "copy (producer_id, seqno, data) VALUES (%s, %s, %s)",
                                      [("batch", 1, b"b1"), ("batch", 2, b"b2"), ("batch", 2, b"dup")])
        psycopg2.extras.execute_values(cur, "INSERT INTO " + P + "copy (producer_id, seqno, data) VALUES %s",
                                       [("values", 1, b"v1"), ("values", 2, b"v2")])
        expect_eq(cur.rowcount, 2, "rowcount of execute_values")
        cur.execute("SELECT producer_id, seqno FROM " + P + "copy WHERE producer_id IN ('batch', 'values') ORDER BY producer_id, seqno")
        expect_eq(cur.fetchall(), [("batch", 1), ("batch", 2), ("values", 1), ("values", 2)], "rows")
    return "execute_batch (statements joined by ';' in one simple query), execute_values"


def c_jsonb():
    with conn.cursor() as cur:
        cur.execute("SELECT attrs, attrs->>'k' FROM " + P + "in WHERE seqno = %s", (1,))
        attrs, k = cur.fetchone()
        expect_eq(attrs, {"k": "v"}, "attrs")
        expect_eq(k, "v", "attrs->>'k'")
    return "attrs {'k': 'v'}"


def c_stateless():
    with conn.cursor() as cur:
        cur.execute("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "in ORDER BY offset")
        rows = cur.fetchall()
        expect_eq(rows, [(i, "m%d" % i) for i in range(1, 11)], "all messages")
        cur.execute("SELECT offset FROM " + P + "in WHERE offset >= %s ORDER BY offset LIMIT %s", (7, 2))
        expect_eq(cur.fetchall(), [(7,), (8,)], "offset >= 7 LIMIT 2")
        cur.execute("SELECT offset FROM " + P + "in WHERE producer_id = %s AND seqno = %s", ("prod", 3))
        expect_eq(cur.fetchall(), [(2,)], "the original of the duplicate")
    return "10 rows in order; WHERE/LIMIT parameters"


def c_array_param():
    with conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM " + P + "in WHERE partition = ANY(%s) AND offset IN %s", ([0, 5], (0, 1, 2)))
        expect_eq(cur.fetchone(), (3,), "count")
    return "a list as ARRAY[...] (= ANY), a tuple as IN (...)"


def c_named_cursor():
    conn.autocommit = False
    try:
        with conn.cursor("scan") as cur:  # a server-side cursor: DECLARE, FETCH FORWARD
            cur.itersize = 4
            cur.execute("SELECT seqno FROM " + P + "in ORDER BY offset")
            got = [r[0] for r in cur]
        conn.commit()
    finally:
        if conn.status != psycopg2.extensions.STATUS_READY:
            conn.rollback()
        conn.autocommit = True
    expect_eq(got, list(range(1, 11)), "rows through the named cursor")
    return "10 rows through DECLARE/FETCH FORWARD 4"


def consume(cur, n):
    cur.execute("SELECT offset, data FROM %sin WITH (CONSUMER = c) LIMIT %d" % (P, n))
    return [(o, bytes(d).decode()) for o, d in cur.fetchall()]


def c_consumer():
    with conn.cursor() as cur:
        expect_eq(consume(cur, 3), [(0, "m1"), (1, "m2"), (2, "m3")], "first consumer read")
        expect_eq(consume(cur, 3), [(3, "m4"), (4, "m5"), (5, "m6")], "second consumer read")
    return "offsets 0-2 then 3-5"


def c_rpw():
    conn.autocommit = False
    with conn:  # psycopg2: BEGIN implicitly, COMMIT on exit
        with conn.cursor() as cur:
            got = consume(cur, 2)
            expect_eq(got, [(6, "m7"), (7, "m8")], "read in the transaction")
            for o, d in got:
                cur.execute("INSERT INTO " + P + "out (producer_id, seqno, data) VALUES (%s, %s, %s)", ("rpw", o, d.upper().encode()))
                expect_eq(cur.rowcount, 1, "INSERT in the transaction")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT seqno, data FROM " + P + "out ORDER BY offset")
        expect_eq([(s, bytes(d)) for s, d in cur.fetchall()], [(6, b"M7"), (7, b"M8")], "committed output")
    return "read 6-7, wrote 2, committed"


class Rollback(Exception):
    pass


def c_rollback():
    conn.autocommit = False
    try:
        with conn:  # an exception rolls back
            with conn.cursor() as cur:
                expect_eq(consume(cur, 2), [(8, "m9"), (9, "m10")], "read in the transaction")
                cur.execute("INSERT INTO " + P + "out (data) VALUES (%s)", (b"never",))
                raise Rollback()
    except Rollback:
        pass
    conn.autocommit = True
    with conn.cursor() as cur:
        expect_eq(consume(cur, 10), [(8, "m9"), (9, "m10")], "read again after ROLLBACK")
        cur.execute("SELECT count(*) FROM " + P + "out")
        expect_eq(cur.fetchone(), (2,), "messages in out after ROLLBACK")
    return "8-9 read again, nothing written"


def c_copy_expert():
    with conn.cursor() as cur:
        cur.copy_expert("COPY " + P + "copy (producer_id, seqno, data) FROM STDIN",
                        io.StringIO("cp\t1\tc1\ncp\t2\tc2\ncp\t2\tdup\n"))
        cur.execute("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "copy ORDER BY offset")
        expect_eq(cur.fetchall(), [(1, "c1"), (2, "c2")], "copied rows (the duplicate skipped)")
    return "3 rows in, duplicate skipped"


def c_copy_from():
    with conn.cursor() as cur:
        cur.copy_from(io.StringIO("cp\t3\tc3\ncp\t4\tc4\n"), P + "copy", columns=("producer_id", "seqno", "data"))
        cur.execute("SELECT count(*) FROM " + P + "copy")
        expect_eq(cur.fetchone(), (4,), "messages after copy_from")
    return "2 rows"


def c_copy_out():
    with conn.cursor() as cur:
        buf = io.StringIO()
        cur.copy_expert("COPY (SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "copy ORDER BY offset LIMIT 2) TO STDOUT", buf)
        expect_eq(buf.getvalue(), "1\tc1\n2\tc2\n", "COPY TO STDOUT")
    return "2 rows out"


def expect_error(sql, params, code):
    def fn():
        with conn.cursor() as cur:
            try:
                cur.execute(sql, params)
            except psycopg2.Error as e:
                expect_eq(e.pgcode, code, "SQLSTATE of %r" % sql)
            else:
                raise Mismatch("no error from %r" % sql)
        select1()
        return "%s, then SELECT 1" % code
    return fn


def c_error_copy():
    with conn.cursor() as cur:
        try:
            cur.copy_expert("COPY " + P + "copy (producer_id, seqno, data) FROM STDIN", io.StringIO("cp\tabc\tbad\n"))
        except psycopg2.Error as e:
            expect_eq(e.pgcode, "22P02", "SQLSTATE of the COPY")
        else:
            raise Mismatch("no error from a COPY row with seqno 'abc'")
    select1()
    return "22P02 from a COPY row, then SELECT 1"


def c_error_in_txn():
    conn.autocommit = False
    with conn.cursor() as cur:
        try:
            cur.execute("SELECT 1/0")
        except psycopg2.Error as e:
            expect_eq(e.pgcode, "22012", "first error")
        else:
            raise Mismatch("no error")
        try:
            cur.execute("SELECT 1")
        except psycopg2.Error as e:
            expect_eq(e.pgcode, "25P02", "statement in the failed transaction")
        else:
            raise Mismatch("no 25P02")
    conn.rollback()
    conn.autocommit = True
    select1()
    return "22012, 25P02, ROLLBACK, SELECT 1"


ROLE, GRANTED = P + "writer", P + "granted"
rconn = None  # the role's connection, autocommit off as psycopg2's default


def role_conn():
    if rconn is None or rconn.closed:
        raise Mismatch("no connection as %s (roles_login failed)" % ROLE)
    return rconn


def c_roles_grant():
    with conn.cursor() as cur:
        for q in role_setup(ROLE, GRANTED):
            cur.execute(q)
    return "CREATE ROLE %s LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC" % ROLE


def c_roles_login():
    global rconn
    rconn = psycopg2.connect(host=HOST, port=PORT, user=ROLE, password=ROLE_PASSWORD, dbname="postgres", connect_timeout=10)
    with rconn.cursor() as cur:
        cur.execute("SELECT current_user")
        expect_eq(cur.fetchone(), (ROLE,), "current_user")
    rconn.rollback()
    return "psycopg2.connect as the role (SCRAM-SHA-256), current_user %s" % ROLE


def c_roles_insert():
    rc = role_conn()
    with rc.cursor() as cur:
        cur.execute("INSERT INTO " + GRANTED + " (data) VALUES (%s)", (psycopg2.Binary(b"by-role"),))
        expect_eq(cur.rowcount, 1, "rowcount")
    rc.commit()
    with conn.cursor() as cur:
        cur.execute("SELECT convert_from(data, 'UTF8') FROM " + GRANTED)
        expect_eq(cur.fetchall(), [("by-role",)], "the message, read as the bootstrap user")
    return "INSERT with a Binary parameter, committed; read back as the bootstrap user"


def c_roles_denied():
    rc = role_conn()
    try:
        with rc.cursor() as cur:
            cur.execute("SELECT data FROM " + GRANTED + " WHERE offset >= %s", (0,))
    except psycopg2.Error as e:
        expect_eq((e.pgcode, e.diag.message_primary), ("42501", "permission denied for topic " + GRANTED), "pgcode, diag.message_primary")
    else:
        raise Mismatch("the SELECT as the role succeeded")
    rc.rollback()
    with rc.cursor() as cur:
        cur.execute("SELECT 1")
        expect_eq(cur.fetchone(), (1,), "SELECT 1 after the error")
    rc.rollback()
    return "42501 permission denied for topic %s (e.pgcode), rollback, SELECT 1" % GRANTED


def c_roles_bad_password():
    try:
        psycopg2.connect(host=HOST, port=PORT, user=ROLE, password=WRONG_PASSWORD, dbname="postgres", connect_timeout=10).close()
    except psycopg2.OperationalError as e:
        return expect_bad_password(e, ROLE, e.pgcode)
    raise Mismatch("a wrong password logged in")


check("connect", c_connect)
if conn is None:
    r.finish()
check("create_topics", c_create)
check("insert_params", c_insert_params)
check("bytea_roundtrip", c_bytea)
check("jsonb_attrs", c_jsonb)
check("timestamptz_param", c_timestamptz)
check("stateless_read", c_stateless)
check("array_param", c_array_param)
check("named_cursor", c_named_cursor)
check("consumer_read", c_consumer)
check("rpw_txn", c_rpw)
check("rollback_rewind", c_rollback)
check("copy_in", c_copy_expert)
check("copy_from", c_copy_from)
check("copy_out", c_copy_out)
check("execute_batch", c_execute_batch)
check("error_42601", expect_error("SELEC 1", None, "42601"))
check("error_42P01", expect_error("SELECT * FROM " + P + "missing", None, "42P01"))
check("error_22012", expect_error("SELECT 1/%s", (0,), "22012"))
check("error_bad_param", expect_error("SELECT offset FROM " + P + "in WHERE seqno = %s", ("abc",), "22P02"))
check("error_copy", c_error_copy)
check("error_25P02", c_error_in_txn)
check("roles_grant", c_roles_grant)
check("roles_login", c_roles_login)
check("roles_insert", c_roles_insert)
check("roles_denied", c_roles_denied)
check("roles_bad_password", c_roles_bad_password)
r.finish()
