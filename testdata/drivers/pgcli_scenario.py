"""pgcli scenario: pgcli itself (Debian's /usr/bin/pgcli, on psycopg 3 and
pgspecial) fed statements on stdin: it connects, runs DDL, an INSERT, its
\\dt special command, queries, an error, and refreshes its completions on a
second connection in the background."""
import os
import subprocess

from scenario_common import (ROLE_PASSWORD, WRONG_PASSWORD, Mismatch, Runner, credentials, expect, expect_bad_password, expect_eq,
                             host_port, prefix, role_setup)

P = prefix("pgcli")
HOST, PORT = host_port()
USER, PASSWORD = credentials()
r = Runner("pgcli")
ver = subprocess.run(["pgcli", "--version"], capture_output=True, text=True).stdout.strip()
r.version(ver.replace("Version: ", ""))

T = P + "t"
script = "\n".join([
    # pgcli refreshes its completions in the background at startup and
    # again after CREATE; a CREATE that commits between the refresh's
    # tables query and its columns query makes pgcli's extend_columns
    # raise KeyError (its own race, with PostgreSQL too). This statement
    # (about a second) lets the startup refresh finish first.
    "SELECT count(*) AS settle FROM generate_series(1, 4000000)",
    "CREATE TOPIC %s (CONSUMER c)" % T,
    "INSERT INTO %s (producer_id, seqno, data) VALUES ('p', 1, 'hello')" % T,
    "INSERT INTO %s (producer_id, seqno, data) VALUES ('p', 1, 'again')" % T,
    "\\dt",
    "SELECT seqno, convert_from(data, 'UTF8') AS body FROM %s" % T,
    "SELECT offset, convert_from(data, 'UTF8') AS consumed FROM %s WITH (CONSUMER = c) LIMIT 10" % T,
    "SELEC 1",
    "SELECT 42 AS answer",
    # The completion refresh runs in a daemon thread on its own connection:
    # a 2 s long poll (the consumer has read everything) keeps pgcli up
    # until it has run, so its outcome does not depend on timing.
    "SELECT offset AS waited FROM %s WITH (CONSUMER = c, WAIT = '2s') LIMIT 10" % T,
    "",
])
env = dict(os.environ, TERM="dumb", COLUMNS="200", LINES="50")
if PASSWORD:
    env["PGPASSWORD"] = PASSWORD
proc = subprocess.run(
    ["pgcli", "-h", HOST, "-p", str(PORT), "-U", USER, "-w", "--less-chatty", "--warn", "off",
     "--row-limit", "0", "postgres"],
    input=script, capture_output=True, text=True, timeout=40, env=env)
out, err = proc.stdout, proc.stderr


def has(what, text=None):
    expect(what in (out if text is None else text), "%r not in pgcli's output" % what)


def c_connect():
    expect("could not connect" not in out + err and "connection failed" not in out + err, "connection failed: %s" % (out + err)[-500:])
    has("postgres@")
    return "prompt shown, exit %d" % proc.returncode


def c_ddl():
    has("CREATE TOPIC")
    return "CREATE TOPIC"


def c_insert():
    has("INSERT 0 1")
    has("INSERT 0 0")
    return "INSERT 0 1, duplicate INSERT 0 0"


def c_dt():
    line = [l for l in out.splitlines() if T in l and "public" in l]
    expect(line, "\\dt did not list %s" % T)
    expect("table" in line[0], "\\dt line: %r" % line[0])
    return "\\dt: %s" % " ".join(line[0].split())


def c_query():
    rows = [l for l in out.splitlines() if "hello" in l]
    expect(any("| 1 " in l for l in rows), "no row '1 | hello' in the SELECT's output")
    has("consumed")
    expect(any("| 0 " in l and "hello" in l for l in rows), "no consumer row '0 | hello'")
    return "stateless and consumer SELECT"


def c_error():
    has("syntax error at or near \"SELEC\"")
    has("| 42 ")
    has("waited")
    return "syntax error shown, then SELECT 42"


def c_completion():
    expect("Traceback" not in err and "Exception in thread" not in err,
           "completion refresh failed: " + " | ".join(sorted(set(
               l for l in err.splitlines() if l[:1].isalpha() and ": " in l and not l.startswith(("Traceback", "Exception in thread", "Warning"))))))
    return "no errors on stderr"


r.run("connect", c_connect)
r.run("create_topic", c_ddl)
r.run("insert", c_insert)
r.run("dt", c_dt)
r.run("query", c_query)
r.run("error_42601", c_error)
r.run("completion_refresh", c_completion)

# The roles_* checks (README.md): pgcli run again as the bootstrap user
# (setup, then the read-back), as the role, and with a wrong password.
ROLE, GRANTED = P + "writer", P + "granted"


def pgcli(user, password, statements):
    e = dict(env, PGPASSWORD=password) if password else env
    return subprocess.run(
        ["pgcli", "-h", HOST, "-p", str(PORT), "-U", user, "-w", "--less-chatty", "--warn", "off", "--row-limit", "0", "postgres"],
        input="\n".join(statements + [""]), capture_output=True, text=True, timeout=20, env=e)


role_run = None


def c_roles_grant():
    p = pgcli(USER, PASSWORD, [q + ";" for q in role_setup(ROLE, GRANTED)])
    for tag in ("CREATE ROLE", "CREATE TOPIC", "GRANT"):
        expect("\n%s\n" % tag in p.stdout, "%r not in pgcli's output: %s" % (tag, (p.stdout + p.stderr)[-500:]))
    return "CREATE ROLE %s LOGIN PASSWORD, CREATE TOPIC, GRANT INSERT ON TOPIC" % ROLE


def c_roles_login():
    global role_run
    role_run = pgcli(ROLE, ROLE_PASSWORD, [
        "SELECT current_user AS whoami",
        "INSERT INTO %s (data) VALUES ('by-role')" % GRANTED,
        "SELECT data FROM %s WHERE offset >= 0" % GRANTED,
        "SELECT 77 AS after_denial",
    ])
    o = role_run.stdout
    expect("%s@" % ROLE in o, "no prompt as %s: %s" % (ROLE, (o + role_run.stderr)[-500:]))
    expect(any("| %s " % ROLE in l for l in o.splitlines()), "current_user is not %s: %s" % (ROLE, o[-500:]))
    return "pgcli -U as the role (SCRAM-SHA-256), current_user %s" % ROLE


def role_output():
    if role_run is None:
        raise Mismatch("pgcli did not run as %s (roles_login failed)" % ROLE)
    return role_run.stdout


def c_roles_insert():
    expect("INSERT 0 1" in role_output(), "no 'INSERT 0 1' as the role")
    p = pgcli(USER, PASSWORD, ["SELECT convert_from(data, 'UTF8') AS readback FROM %s" % GRANTED])
    expect(any("| by-role " in l for l in p.stdout.splitlines()), "the message not read back: %s" % (p.stdout + p.stderr)[-500:])
    return "INSERT (a literal: pgcli has no parameters) INSERT 0 1; read back as the bootstrap user"


def c_roles_denied():
    o = role_output()
    expect("permission denied for topic %s\n" % GRANTED in o, "no 'permission denied for topic %s' in: %s" % (GRANTED, o[-500:]))
    expect(any("| 77 " in l for l in o.splitlines()), "no SELECT 77 after the denial")
    expect("Traceback" not in role_run.stderr, "pgcli failed as the role: %s" % role_run.stderr[-500:])
    return "'permission denied for topic %s' shown (pgcli shows no SQLSTATE), then SELECT 77" % GRANTED


def c_roles_bad_password():
    p = pgcli(ROLE, WRONG_PASSWORD, ["SELECT 1"])
    expect_eq(p.returncode != 0, True, "pgcli exited non-zero")
    return expect_bad_password(Exception(p.stdout + p.stderr), ROLE, None)


r.run("roles_grant", c_roles_grant)
r.run("roles_login", c_roles_login)
r.run("roles_insert", c_roles_insert)
r.run("roles_denied", c_roles_denied)
r.run("roles_bad_password", c_roles_bad_password)
if r.failed and os.environ.get("TOPICGATE_TRACE"):
    print("--- pgcli stdout ---\n%s\n--- pgcli stderr ---\n%s" % (out, err))
r.finish()
