"""pgcli scenario: pgcli itself (Debian's /usr/bin/pgcli, on psycopg 3 and
pgspecial) fed statements on stdin: it connects, runs DDL, an INSERT, its
\\dt special command, queries, an error, and refreshes its completions on a
second connection in the background."""
import os
import subprocess

from scenario_common import Runner, credentials, expect, host_port, prefix

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
if r.failed and os.environ.get("TOPICGATE_TRACE"):
    print("--- pgcli stdout ---\n%s\n--- pgcli stderr ---\n%s" % (out, err))
r.finish()
