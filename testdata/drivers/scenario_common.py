"""Reporting shared by the Python driver scenarios (see README.md here).

Each check is a function; a failure prints FAIL and the run goes on, so one
run lists every mismatch. The process exits 1 if any check failed.
"""
import os
import sys
import time
import traceback

DATA64K = bytes(i % 256 for i in range(64 * 1024))


def prefix(driver):
    return os.environ.get("TOPICGATE_PREFIX") or "drv_%s_%d_%d_" % (driver, os.getpid(), int(time.time()))


def host_port():
    return os.environ.get("TOPICGATE_HOST", "127.0.0.1"), int(os.environ.get("TOPICGATE_PORT", "5433"))


def credentials():
    """The bootstrap user and its password (None: the server trusts)."""
    return os.environ.get("TOPICGATE_USER", "postgres"), os.environ.get("TOPICGATE_PASSWORD") or None


# The roles_* checks (README.md): role <prefix>writer, topic <prefix>granted.
ROLE_PASSWORD = "writer-pw"
WRONG_PASSWORD = "wrong-pw"


def role_setup(role, topic):
    """The statements of roles_grant, run as the bootstrap user."""
    return ["CREATE ROLE %s LOGIN PASSWORD '%s'" % (role, ROLE_PASSWORD),
            "CREATE TOPIC " + topic,
            "GRANT INSERT ON TOPIC %s TO %s" % (topic, role)]


def expect_bad_password(e, role, sqlstate):
    """Checks a failed login's error: SQLSTATE 28P01 where the driver has
    one (libpq reports none for a failed connection), else the message."""
    msg = str(e)
    if sqlstate is not None:
        expect_eq(sqlstate, "28P01", "SQLSTATE (%s)" % msg.strip())
        return "28P01"
    expect('password authentication failed for user "%s"' % role in msg, "error: %r" % msg)
    return "'password authentication failed for user \"%s\"' (no SQLSTATE: libpq has none for a failed connection)" % role


class Mismatch(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Mismatch(what)


def expect_eq(got, want, what):
    if got != want:
        raise Mismatch("%s: got %r, want %r" % (what, got, want))


class Runner:
    def __init__(self, driver):
        self.driver = driver
        self.failed = []
        self.passed = 0

    def version(self, text):
        print("version %s %s" % (self.driver, text), flush=True)

    def run(self, name, fn, *args):
        """Runs fn(*args); returns True when it passed."""
        try:
            detail = fn(*args)
        except Mismatch as e:
            self._fail(name, str(e))
            return False
        except Exception as e:  # a driver error the check did not expect
            code = getattr(e, "pgcode", None) or getattr(e, "sqlstate", None)
            self._fail(name, "%s%s: %s" % (type(e).__name__, " [%s]" % code if code else "", str(e).strip().replace("\n", " | ")))
            if os.environ.get("TOPICGATE_TRACE"):
                traceback.print_exc()
            return False
        self.passed += 1
        print("ok %s: %s" % (name, detail or ""), flush=True)
        return True

    def _fail(self, name, msg):
        self.failed.append(name)
        print("FAIL %s: %s" % (name, msg), flush=True)

    def finish(self):
        print("summary %s: %d checks ok, %d failed%s" % (
            self.driver, self.passed, len(self.failed),
            (" (" + ", ".join(self.failed) + ")") if self.failed else ""), flush=True)
        sys.exit(1 if self.failed else 0)
