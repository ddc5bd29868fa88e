"""asyncpg scenario: binary extended protocol with statement preparation and
server-reported parameter types, conn.transaction(), copy_records_to_table,
copy_to_table, copy_from_query."""
import asyncio
import datetime
import io
import json

import asyncpg

from scenario_common import (DATA64K, ROLE_PASSWORD, WRONG_PASSWORD, Mismatch, Runner, credentials, expect, expect_bad_password,
                             expect_eq, host_port, prefix, role_setup)

P = prefix("asyncpg")
HOST, PORT = host_port()
USER, PASSWORD = credentials()
r = Runner("asyncpg")
r.version(asyncpg.__version__)

conn = None


async def connect():
    global conn
    if conn is not None and not conn.is_closed():
        try:
            await conn.close(timeout=2)
        except Exception:
            pass
    conn = await asyncpg.connect(host=HOST, port=PORT, user=USER, password=PASSWORD, database="postgres", timeout=10)
    return conn


async def healthy():
    if conn is None or conn.is_closed():
        await connect()
        return
    try:
        if conn.is_in_transaction():
            await conn.execute("ROLLBACK")
        await conn.fetchval("SELECT 1")
    except Exception:
        await connect()


async def select1():
    expect_eq(await conn.fetchval("SELECT 1"), 1, "SELECT 1 after the error")


async def check(name, fn, *args):
    await healthy()
    try:
        detail = await fn(*args)
    except Exception as e:
        exc = e

        def raiser():
            raise exc
        return r.run(name, raiser)
    return r.run(name, lambda: detail)


async def c_connect():
    await connect()
    expect_eq(await conn.fetchval("SELECT 1"), 1, "SELECT 1")
    return "server_version %s" % conn.get_settings().server_version


async def c_create():
    for t in ("in (CONSUMER c)", "out", "bin", "copy"):
        expect_eq(await conn.execute("CREATE TOPIC " + P + t), "CREATE TOPIC", "tag")
    return "4 topics (simple protocol)"


INSERT = "INSERT INTO " + P + "in (producer_id, seqno, data, attrs) VALUES ($1, $2, $3, $4)"


async def c_insert_params():
    for i in range(1, 6):
        tag = await conn.execute(INSERT, "prod", i, ("m%d" % i).encode(), '{"k":"v"}')
        expect_eq(tag, "INSERT 0 1", "tag of INSERT seqno %d" % i)
    tag = await conn.execute(INSERT, "prod", 3, b"dup", '{"k":"v"}')
    expect_eq(tag, "INSERT 0 0", "tag of the duplicate (prod, 3)")
    return "5 inserts INSERT 0 1, duplicate INSERT 0 0"


async def c_insert_prepared():
    st = await conn.prepare(INSERT)
    types = [t.name for t in st.get_parameters()]
    expect_eq(types, ["text", "int8", "bytea", "jsonb"], "parameter types")
    for i in range(6, 11):
        await st.fetch("prod", i, ("m%d" % i).encode(), '{"k":"v"}')
        expect_eq(st.get_statusmsg(), "INSERT 0 1", "tag of prepared INSERT seqno %d" % i)
    await st.fetch("prod", 6, b"dup", '{"k":"v"}')
    expect_eq(st.get_statusmsg(), "INSERT 0 0", "tag of the prepared duplicate")
    return "parameters %s; 5 prepared inserts, duplicate INSERT 0 0" % types


async def c_executemany():
    await conn.executemany("INSERT INTO " + P + "out (producer_id, seqno, data) VALUES ($1, $2, $3)",
                           [("many", 1, b"a"), ("many", 2, b"b"), ("many", 2, b"dup")])
    rows = await conn.fetch("SELECT seqno, data FROM " + P + "out WHERE producer_id = 'many' ORDER BY offset")
    expect_eq([tuple(x) for x in rows], [(1, b"a"), (2, b"b")], "executemany rows (duplicate skipped)")
    return "3 rows, duplicate skipped"


async def c_bytea():
    tag = await conn.execute("INSERT INTO " + P + "bin (data) VALUES ($1)", DATA64K)
    expect_eq(tag, "INSERT 0 1", "tag")
    got = await conn.fetchval("SELECT data FROM " + P + "bin")
    expect(got == DATA64K, "64 KiB bytea differs (got %d bytes)" % len(got))
    return "65536 bytes (binary)"


TS = datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)


async def c_timestamptz():
    await conn.execute("INSERT INTO " + P + "bin (data, created_at, message_group_id) VALUES ($1, $2, $3)", b"ts", TS, "g1")
    rows = await conn.fetch("SELECT created_at, message_group_id FROM " + P + "bin WHERE data = $1 AND written_at >= $2", b"ts", TS)
    expect_eq([tuple(x) for x in rows], [(TS, "g1")], "created_at read back")
    return "created_at = %s; written_at >= a datetime parameter" % TS.isoformat()


async def c_jsonb():
    row = await conn.fetchrow("SELECT attrs, attrs->>'k' AS k FROM " + P + "in WHERE seqno = $1", 1)
    expect_eq(json.loads(row["attrs"]), {"k": "v"}, "attrs")
    expect_eq(row["k"], "v", "attrs->>'k'")
    return "attrs %s" % row["attrs"]


async def c_stateless():
    rows = await conn.fetch("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "in ORDER BY offset")
    expect_eq([tuple(x) for x in rows], [(i, "m%d" % i) for i in range(1, 11)], "all messages")
    rows = await conn.fetch("SELECT offset FROM " + P + "in WHERE offset >= $1 ORDER BY offset LIMIT $2", 7, 2)
    expect_eq([x[0] for x in rows], [7, 8], "offset >= 7 LIMIT 2")
    got = await conn.fetchval("SELECT offset FROM " + P + "in WHERE producer_id = $1 AND seqno = $2", "prod", 3)
    expect_eq(got, 2, "the original of the duplicate")
    return "10 rows in order; WHERE/LIMIT parameters"


async def c_array_param():
    got = await conn.fetchval("SELECT count(*) FROM " + P + "in WHERE partition = ANY($1) AND offset = ANY($2)", [0, 5], [0, 1, 2])
    expect_eq(got, 3, "count")
    return "lists as int8[] parameters (= ANY)"


async def c_cursor():
    async with conn.transaction():
        got = [r["seqno"] async for r in conn.cursor("SELECT seqno FROM " + P + "in ORDER BY offset", prefetch=4)]
        cur = await conn.cursor("SELECT seqno FROM " + P + "in ORDER BY offset")
        first = [r[0] for r in await cur.fetch(3)]
        more = [r[0] for r in await cur.fetch(3)]
    expect_eq(got, list(range(1, 11)), "rows through the iterating cursor")
    expect_eq((first, more), ([1, 2, 3], [4, 5, 6]), "fetch 3, fetch 3")
    return "conn.cursor: prefetch 4, fetch 3 twice (Execute with a row limit, PortalSuspended)"


async def c_cursor_forward():
    async with conn.transaction():
        cur = await conn.cursor("SELECT seqno FROM " + P + "in ORDER BY offset")
        await cur.forward(5)  # asyncpg sends MOVE FORWARD 5 FROM <portal>
        rest = [r[0] for r in await cur.fetch(10)]
    expect_eq(rest, [6, 7, 8, 9, 10], "fetch after forward(5)")
    return "Cursor.forward (MOVE on the protocol-level portal)"


async def consume(c, n):
    rows = await c.fetch("SELECT offset, data FROM " + P + "in WITH (CONSUMER = c) LIMIT $1", n)
    return [(x["offset"], x["data"].decode()) for x in rows]


async def c_consumer():
    expect_eq(await consume(conn, 3), [(0, "m1"), (1, "m2"), (2, "m3")], "first consumer read")
    expect_eq(await consume(conn, 3), [(3, "m4"), (4, "m5"), (5, "m6")], "second consumer read")
    return "offsets 0-2 then 3-5"


async def c_rpw():
    async with conn.transaction():
        got = await consume(conn, 2)
        expect_eq(got, [(6, "m7"), (7, "m8")], "read in the transaction")
        for o, d in got:
            await conn.execute("INSERT INTO " + P + "out (producer_id, seqno, data) VALUES ($1, $2, $3)", "rpw", o, d.upper().encode())
    rows = await conn.fetch("SELECT seqno, data FROM " + P + "out WHERE producer_id = 'rpw' ORDER BY offset")
    expect_eq([tuple(x) for x in rows], [(6, b"M7"), (7, b"M8")], "committed output")
    return "read 6-7, wrote 2, committed"


class Rollback(Exception):
    pass


async def c_rollback():
    try:
        async with conn.transaction():
            expect_eq(await consume(conn, 2), [(8, "m9"), (9, "m10")], "read in the transaction")
            await conn.execute("INSERT INTO " + P + "out (data) VALUES ($1)", b"never")
            raise Rollback()
    except Rollback:
        pass
    expect_eq(await consume(conn, 10), [(8, "m9"), (9, "m10")], "read again after ROLLBACK")
    expect_eq(await conn.fetchval("SELECT count(*) FROM " + P + "out WHERE data = 'never'"), 0, "rolled-back message")
    return "8-9 read again, nothing written"


async def c_copy_records():
    tag = await conn.copy_records_to_table(P + "copy", records=[("cp", 1, b"c1"), ("cp", 2, b"c2"), ("cp", 2, b"dup")],
                                           columns=["producer_id", "seqno", "data"])
    rows = await conn.fetch("SELECT seqno, data FROM " + P + "copy ORDER BY offset")
    expect_eq([tuple(x) for x in rows], [(1, b"c1"), (2, b"c2")], "copied rows (the duplicate skipped)")
    return "copy_records_to_table (binary) %r" % tag


async def c_copy_to_table():
    tag = await conn.copy_to_table(P + "copy", source=io.BytesIO(b"cp\t3\tc3\ncp\t4\tc4\n"), columns=["producer_id", "seqno", "data"])
    expect_eq(await conn.fetchval("SELECT count(*) FROM " + P + "copy"), 4, "messages after copy_to_table")
    return "copy_to_table (text) %r" % tag


async def c_copy_out_noargs():
    buf = io.BytesIO()
    await conn.copy_from_query("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "copy ORDER BY offset LIMIT 2", output=buf)
    expect_eq(buf.getvalue(), b"1\tc1\n2\tc2\n", "copy_from_query output")
    buf = io.BytesIO()
    await conn.copy_from_table(P + "copy", columns=["seqno"], output=buf)
    expect_eq(buf.getvalue(), b"1\n2\n3\n4\n", "copy_from_table output")
    return "copy_from_query without arguments, copy_from_table"


async def c_copy_out():
    # With arguments asyncpg interpolates them itself, through
    # SELECT quote_literal($1::text) (asyncpg.utils._mogrify).
    buf = io.BytesIO()
    await conn.copy_from_query("SELECT seqno, convert_from(data, 'UTF8') FROM " + P + "copy ORDER BY offset LIMIT $1", 2, output=buf)
    expect_eq(buf.getvalue(), b"1\tc1\n2\tc2\n", "copy_from_query output")
    return "2 rows out"


def expect_error(q, args, code):
    async def fn():
        try:
            if args is None:
                await conn.execute(q)
            else:
                await conn.fetch(q, *args)
        except asyncpg.PostgresError as e:
            expect_eq(e.sqlstate, code, "SQLSTATE of %r" % q)
        else:
            raise Mismatch("no error from %r" % q)
        await select1()
        return "%s, then SELECT 1" % code
    return fn


async def c_bad_param_client():
    try:
        await conn.fetch("SELECT offset FROM " + P + "in WHERE seqno = $1", "abc")
    except asyncpg.DataError:
        pass
    else:
        raise Mismatch("asyncpg encoded 'abc' as int8")
    await select1()
    return "asyncpg refused 'abc' for the int8 parameter, then SELECT 1"


async def c_error_copy():
    try:
        await conn.copy_to_table(P + "copy", source=io.BytesIO(b"cp\tabc\tbad\n"), columns=["producer_id", "seqno", "data"])
    except asyncpg.PostgresError as e:
        expect_eq(e.sqlstate, "22P02", "SQLSTATE of the COPY")
    else:
        raise Mismatch("no error from a COPY row with seqno 'abc'")
    await select1()
    return "22P02 from a COPY row, then SELECT 1"


async def c_error_in_txn():
    tr = conn.transaction()
    await tr.start()
    try:
        await conn.fetch("SELECT 1/$1", 0)
    except asyncpg.PostgresError as e:
        expect_eq(e.sqlstate, "22012", "first error")
    else:
        raise Mismatch("no error")
    try:
        await conn.fetch("SELECT 1")
    except asyncpg.PostgresError as e:
        expect_eq(e.sqlstate, "25P02", "statement in the failed transaction")
    else:
        raise Mismatch("no 25P02")
    await tr.rollback()
    await select1()
    return "22012, 25P02, ROLLBACK, SELECT 1"


ROLE, GRANTED = P + "writer", P + "granted"
rconn = None  # the role's connection


def role_conn():
    if rconn is None or rconn.is_closed():
        raise Mismatch("no connection as %s (roles_login failed)" % ROLE)
    return rconn


async def c_roles_grant():
    for q in role_setup(ROLE, GRANTED):
        await conn.execute(q)
    return "CREATE ROLE %s LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC" % ROLE


async def c_roles_login():
    global rconn
    rconn = await asyncpg.connect(host=HOST, port=PORT, user=ROLE, password=ROLE_PASSWORD, database="postgres", timeout=10)
    expect_eq(await rconn.fetchval("SELECT current_user"), ROLE, "current_user")
    return "asyncpg.connect as the role (SCRAM-SHA-256), current_user %s" % ROLE


async def c_roles_insert():
    rc = role_conn()
    expect_eq(await rc.execute("INSERT INTO " + GRANTED + " (data) VALUES ($1)", b"by-role"), "INSERT 0 1", "tag")
    expect_eq(await conn.fetchval("SELECT data FROM " + GRANTED), b"by-role", "the message, read as the bootstrap user")
    return "INSERT with a bytes parameter: INSERT 0 1; read back as the bootstrap user"


async def c_roles_denied():
    rc = role_conn()
    try:
        await rc.fetch("SELECT data FROM " + GRANTED + " WHERE offset >= $1", 0)
    except asyncpg.PostgresError as e:
        expect_eq((e.sqlstate, e.message), ("42501", "permission denied for topic " + GRANTED), "sqlstate, message (%s)" % type(e).__name__)
    else:
        raise Mismatch("the SELECT as the role succeeded")
    expect_eq(await rc.fetchval("SELECT 1"), 1, "SELECT 1 after the error")
    return "42501 permission denied for topic %s (InsufficientPrivilegeError.sqlstate), SELECT 1" % GRANTED


async def c_roles_bad_password():
    try:
        bad = await asyncpg.connect(host=HOST, port=PORT, user=ROLE, password=WRONG_PASSWORD, database="postgres", timeout=10)
    except asyncpg.PostgresError as e:
        return expect_bad_password(e, ROLE, e.sqlstate) + " (%s)" % type(e).__name__
    await bad.close()
    raise Mismatch("a wrong password logged in")


async def main():
    await check("connect", c_connect)
    if conn is None:
        r.finish()
    await check("create_topics", c_create)
    await check("insert_params", c_insert_params)
    await check("insert_prepared", c_insert_prepared)
    await check("executemany", c_executemany)
    await check("bytea_roundtrip", c_bytea)
    await check("jsonb_attrs", c_jsonb)
    await check("timestamptz_param", c_timestamptz)
    await check("stateless_read", c_stateless)
    await check("array_param", c_array_param)
    await check("cursor_read", c_cursor)
    await check("cursor_forward", c_cursor_forward)
    await check("consumer_read", c_consumer)
    await check("rpw_txn", c_rpw)
    await check("rollback_rewind", c_rollback)
    await check("copy_in", c_copy_records)
    await check("copy_to_table", c_copy_to_table)
    await check("copy_out", c_copy_out_noargs)
    await check("copy_out_args", c_copy_out)
    await check("error_42601_simple", expect_error("SELEC 1", None, "42601"))
    await check("error_42601_extended", expect_error("SELEC $1", (1,), "42601"))
    await check("error_42P01_simple", expect_error("SELECT * FROM " + P + "missing", None, "42P01"))
    await check("error_42P01_extended", expect_error("SELECT * FROM " + P + "missing WHERE offset = $1", (1,), "42P01"))
    await check("error_22012_simple", expect_error("SELECT 1/0", None, "22012"))
    await check("error_22012_extended", expect_error("SELECT 1/$1", (0,), "22012"))
    await check("error_bad_param", expect_error("SELECT $1::text::int8", ("abc",), "22P02"))
    await check("error_bad_param_client", c_bad_param_client)
    await check("error_copy", c_error_copy)
    await check("error_25P02", c_error_in_txn)
    await check("roles_grant", c_roles_grant)
    await check("roles_login", c_roles_login)
    await check("roles_insert", c_roles_insert)
    await check("roles_denied", c_roles_denied)
    await check("roles_bad_password", c_roles_bad_password)
    if rconn is not None:
        await rconn.close()
    if conn is not None:
        await conn.close()
    r.finish()


asyncio.run(main())
