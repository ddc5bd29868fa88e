package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestDrivers runs one real scenario per PostgreSQL client against an
// in-process server (testdata/drivers/README.md lists the checks). The
// clients are installed by .ci/run; a missing one is a failure that names
// its install step, never a skip.
//
// Each scenario reports one line per check ("ok <check>: ..." or
// "FAIL <check>: ..."). A failed check fails the test unless
// knownDriverFailures lists it, and a listed check that passes fails the
// test too, so the list stays honest.

// knownDriverFailures: driver → check → why it fails today, as far as it
// was traced (the query the driver sends, the protocol message, the error,
// the code it needs). They are outside what the driver work may change:
// the pg_catalog emulation, the executor's functions and portals, the
// transaction manager (savepoints, implicit transactions), DECLARE/MOVE.
// Remove an entry when its check passes (the test says so).
var knownDriverFailures = map[string]map[string]string{}

// driverCheck is one check's outcome.
type driverCheck struct {
	name, detail string
	ok           bool
}

// driverReport is what one scenario reported.
type driverReport struct {
	version string
	checks  []driverCheck
	out     string // everything it printed, for the failure message
}

// parseDriverReport reads a scenario's "version/ok/FAIL" lines.
func parseDriverReport(out string) *driverReport {
	rep := &driverReport{out: out}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var ok bool
		var rest string
		switch {
		case strings.HasPrefix(line, "version "):
			rep.version = strings.TrimPrefix(line, "version ")
			continue
		case strings.HasPrefix(line, "ok "):
			ok, rest = true, strings.TrimPrefix(line, "ok ")
		case strings.HasPrefix(line, "FAIL "):
			rest = strings.TrimPrefix(line, "FAIL ")
		default:
			continue
		}
		name, detail, _ := strings.Cut(rest, ":")
		rep.checks = append(rep.checks, driverCheck{name: strings.TrimSpace(name), detail: strings.TrimSpace(detail), ok: ok})
	}
	return rep
}

// driverProblems compares a scenario's report with known (its entry of
// knownDriverFailures). It returns what fails the test: a check that failed
// and is not listed, a listed check that passed or did not run, and a
// scenario that ended abnormally (runErr) other than through listed
// failures. allowed are the listed failures seen.
func driverProblems(known map[string]string, rep *driverReport, runErr error) (problems, allowed []string) {
	seen := map[string]bool{}
	unexpected := 0
	for _, c := range rep.checks {
		seen[c.name] = true
		_, listed := known[c.name]
		switch {
		case !c.ok && !listed:
			unexpected++
			problems = append(problems, fmt.Sprintf("check failed: %s: %s", c.name, c.detail))
		case !c.ok && listed:
			allowed = append(allowed, fmt.Sprintf("%s (%s)", c.name, c.detail))
		case c.ok && listed:
			problems = append(problems, fmt.Sprintf("check %s now passes: remove it from knownDriverFailures", c.name))
		}
	}
	var missing []string
	for name := range known {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		problems = append(problems, fmt.Sprintf("listed check %s did not run (renamed? update knownDriverFailures)", m))
	}
	if rep.version == "" {
		problems = append(problems, "the scenario printed no version line")
	}
	if len(rep.checks) == 0 {
		problems = append(problems, "the scenario reported no checks")
	}
	// A scenario with failed checks exits 1, and only then.
	var ee *osexec.ExitError
	exit1 := errors.Is(runErr, errChecksFailed) || errors.As(runErr, &ee) && ee.ExitCode() == 1
	switch {
	case runErr != nil && !(exit1 && len(allowed) > 0 && unexpected == 0):
		problems = append(problems, fmt.Sprintf("scenario ended with %v", runErr))
	case runErr == nil && len(allowed)+unexpected > 0:
		problems = append(problems, "the scenario exited 0 after failed checks")
	}
	return problems, allowed
}

// errChecksFailed is how an in-process Go scenario ends when a check
// failed (a child process exits 1).
var errChecksFailed = errors.New("checks failed")

// judgeDriver fails t for each of driverProblems.
func judgeDriver(t *testing.T, driver string, rep *driverReport, runErr error) {
	t.Helper()
	problems, allowed := driverProblems(knownDriverFailures[driver], rep, runErr)
	t.Logf("%s %s: %d checks, %d known failures", driver, rep.version, len(rep.checks), len(allowed))
	for _, a := range allowed {
		t.Logf("known failure: %s", a)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", driver, p)
	}
	if len(problems) > 0 {
		t.Logf("%s output:\n%s", driver, rep.out)
	}
}

// TestDriverAllowlist checks the allowlist logic itself: unexpected
// failures, listed checks that pass or vanish, and crashes fail.
func TestDriverAllowlist(t *testing.T) {
	known := map[string]string{"b": "known"}
	exitCode := func(code int) error {
		return osexec.Command("/bin/sh", "-c", fmt.Sprintf("exit %d", code)).Run()
	}
	exit1 := exitCode(1)
	for _, tc := range []struct {
		out    string
		runErr error
		want   int
	}{
		{"version x\nok a: fine\nFAIL b: known bug\n", exit1, 0},
		{"version x\nFAIL a: new bug\nFAIL b: known bug\n", exit1, 2},
		{"version x\nok a: fine\nok b: fixed\n", nil, 1},
		{"version x\nok a: fine\n", nil, 1},
		{"version x\nok a: fine\nFAIL b: known bug\n", exitCode(2), 1},
		{"version x\nok a: fine\nFAIL b: known bug\n", nil, 1},
		{"version x\nok a: fine\nFAIL b: known bug\n", errors.New("signal: killed"), 1},
		{"ok a: fine\nFAIL b: known\n", exit1, 1},
	} {
		problems, _ := driverProblems(known, parseDriverReport(tc.out), tc.runErr)
		if len(problems) != tc.want {
			t.Errorf("%q (%v): %d problems %q, want %d", tc.out, tc.runErr, len(problems), problems, tc.want)
		}
	}
}

// childDriver is a scenario run as a child process.
type childDriver struct {
	name    string
	install string   // the step of .ci/run that installs the client
	need    []string // files that must exist (the client, its runtime)
	probe   []string // a command that must succeed (e.g. importing the module)
	// cmd returns the scenario's command line; tmp is a temporary directory.
	cmd func(t *testing.T, tmp string) []string
	// ownServer runs the scenario against a server of its own: pgcli
	// refreshes its completions from the whole catalog in the background,
	// and another scenario's topic created or dropped between its tables
	// and its columns query fails that refresh (pgcli's race, not ours).
	ownServer bool
}

const debianPython = "/usr/bin/python3" // pyenv's python3 on PATH lacks Debian's packages

func driversDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "testdata", "drivers"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var childDrivers = []childDriver{
	{
		name: "psql", install: "apt-get install postgresql-client",
		need: []string{"/usr/bin/psql", "/bin/bash"},
		cmd:  func(t *testing.T, _ string) []string { return []string{"/bin/bash", "psql_scenario.sh"} },
	},
	{
		name: "psycopg2", install: "apt-get install python3-psycopg2",
		need:  []string{debianPython},
		probe: []string{debianPython, "-c", "import psycopg2"},
		cmd: func(t *testing.T, _ string) []string {
			return []string{debianPython, "-E", "-s", "psycopg2_scenario.py"}
		},
	},
	{
		name: "psycopg3", install: "apt-get install python3-psycopg",
		need:  []string{debianPython},
		probe: []string{debianPython, "-c", "import psycopg"},
		cmd: func(t *testing.T, _ string) []string {
			return []string{debianPython, "-E", "-s", "psycopg3_scenario.py"}
		},
	},
	{
		name: "asyncpg", install: "apt-get install python3-asyncpg",
		need:  []string{debianPython},
		probe: []string{debianPython, "-c", "import asyncpg"},
		cmd: func(t *testing.T, _ string) []string {
			return []string{debianPython, "-E", "-s", "asyncpg_scenario.py"}
		},
	},
	{
		name: "pgjdbc", install: "apt-get install libpostgresql-jdbc-java default-jdk-headless",
		need: []string{"/usr/share/java/postgresql.jar", "/usr/bin/javac", "/usr/bin/java"},
		cmd: func(t *testing.T, tmp string) []string {
			const jar = "/usr/share/java/postgresql.jar"
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := osexec.CommandContext(ctx, "/usr/bin/javac", "-d", tmp, "-cp", jar, filepath.Join(driversDir(t), "jdbc", "Scenario.java")).CombinedOutput()
			if err != nil {
				t.Fatalf("javac Scenario.java: %v\n%s", err, out)
			}
			return []string{"/usr/bin/java", "-cp", tmp + ":" + jar, "Scenario"}
		},
	},
	{
		name: "node-postgres", install: "npm ci --prefix testdata/drivers/node (with Debian's nodejs/npm)",
		need:  []string{"node/node_modules/pg/package.json", "node/node_modules/pg-copy-streams/package.json", "node/node_modules/pg-cursor/package.json"},
		probe: []string{"node", "--version"},
		cmd:   func(t *testing.T, _ string) []string { return []string{"node", filepath.Join("node", "scenario.js")} },
	},
	{
		name: "ruby-pg", install: "apt-get install ruby-pg",
		need:  []string{"/usr/bin/ruby"},
		probe: []string{"/usr/bin/ruby", "-e", "require 'pg'"},
		cmd:   func(t *testing.T, _ string) []string { return []string{"/usr/bin/ruby", "ruby_pg_scenario.rb"} },
	},
	{
		name: "pgcli", install: "apt-get install pgcli",
		need:      []string{"/usr/bin/pgcli", debianPython},
		cmd:       func(t *testing.T, _ string) []string { return []string{debianPython, "-E", "-s", "pgcli_scenario.py"} },
		ownServer: true,
	},
}

// The scenarios' server asks for passwords (SCRAM-SHA-256), so that every
// driver's SCRAM exchange is exercised and the roles_* checks log in as a
// role with a password that matters. driverUser is its bootstrap
// superuser, the scenarios' usual connection.
const (
	driverUser     = "postgres"
	driverPassword = "drivers-pw"
)

// startDriverServer starts a test server with --auth scram-sha-256 and
// driverUser as its bootstrap user.
func startDriverServer(t *testing.T) *app {
	t.Helper()
	cfg := testConfig(t)
	cfg.Auth, cfg.Users = "scram-sha-256", map[string]string{driverUser: driverPassword}
	return startServer(t, cfg)
}

// driverDSN is the scenarios' connection URL, with driverUser's password.
func driverDSN(a *app) string {
	return dsnAs(fmt.Sprintf("postgres://%s/postgres?sslmode=disable", a.Addr()), driverUser, driverPassword)
}

// dsnAs is dsn with user and password replaced (the roles_* checks log in
// as a role).
func dsnAs(dsn, user, password string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

// driverEnv is the environment of a scenario: the caller's without PG*
// settings, a private HOME (pgcli writes its config and history there),
// the server's address and the bootstrap user's credentials.
func driverEnv(a *app, home, prefix string) []string {
	host, port, _ := net.SplitHostPort(a.Addr())
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "TOPICGATE_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "TOPICGATE_DSN="+driverDSN(a), "TOPICGATE_HOST="+host,
		"TOPICGATE_PORT="+port, "TOPICGATE_USER="+driverUser, "TOPICGATE_PASSWORD="+driverPassword, "TOPICGATE_PREFIX="+prefix, "LC_ALL=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1")
}

func TestDrivers(t *testing.T) {
	a := startDriverServer(t)
	dir := driversDir(t)
	for _, d := range childDrivers {
		d := d
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			for _, f := range d.need {
				p := f
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("%s is not installed (%v): .ci/run installs it with `%s`", d.name, err, d.install)
				}
			}
			if d.probe != nil {
				if out, err := osexec.Command(d.probe[0], d.probe[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%s is not installed (%s: %v %s): .ci/run installs it with `%s`", d.name, strings.Join(d.probe, " "), err, bytes.TrimSpace(out), d.install)
				}
			}
			tmp := t.TempDir()
			argv := d.cmd(t, tmp)
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Dir = dir
			srv := a
			if d.ownServer {
				srv = startDriverServer(t)
			}
			cmd.Env = driverEnv(srv, tmp, "d_"+strings.ReplaceAll(d.name, "-", "_")+"_")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			if ctx.Err() != nil {
				err = fmt.Errorf("timed out after %v: %w", time.Since(start).Round(time.Millisecond), err)
			}
			out := stdout.String()
			if stderr.Len() > 0 {
				out += "--- stderr ---\n" + stderr.String()
			}
			t.Logf("%s ran in %v", d.name, time.Since(start).Round(time.Millisecond))
			judgeDriver(t, d.name, parseDriverReport(out), err)
		})
	}
	for _, d := range goDrivers {
		d := d
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			r := &goScenario{prefix: "d_" + strings.ReplaceAll(d.name, "-", "_") + "_"}
			var out strings.Builder
			r.out = &out
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			start := time.Now()
			d.run(ctx, r, driverDSN(a))
			t.Logf("%s ran in %v", d.name, time.Since(start).Round(time.Millisecond))
			var runErr error
			if strings.Contains(out.String(), "\nFAIL ") || strings.HasPrefix(out.String(), "FAIL ") {
				runErr = errChecksFailed
			}
			judgeDriver(t, d.name, parseDriverReport(out.String()), runErr)
		})
	}
}

// goScenario is the reporter of the in-process Go scenarios: it prints
// the same lines as the child processes do.
type goScenario struct {
	prefix string
	out    *strings.Builder
}

type goDriver struct {
	name string
	run  func(ctx context.Context, r *goScenario, dsn string)
}

var goDrivers []goDriver // filled by drivers_*_test.go

func (r *goScenario) version(v string) { fmt.Fprintf(r.out, "version %s\n", v) }

// check runs fn as check name; fn returns what it checked, or an error.
func (r *goScenario) check(name string, fn func() (string, error)) {
	detail, err := func() (d string, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return fn()
	}()
	if err != nil {
		fmt.Fprintf(r.out, "FAIL %s: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " | "))
		return
	}
	fmt.Fprintf(r.out, "ok %s: %s\n", name, detail)
}

// mismatch is a check's failure message.
func mismatch(format string, args ...any) error { return fmt.Errorf(format, args...) }

// expectEqual returns a mismatch unless got equals want (compared as %#v).
func expectEqual(got, want any, what string) error {
	if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w {
		return mismatch("%s: got %s, want %s", what, g, w)
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// data64K is 64 KiB of bytes 0..255 repeated.
func data64K() []byte {
	b := make([]byte, 64*1024)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// The roles_* checks of every scenario: the bootstrap connection creates
// role <prefix>writer with password rolePassword and topic
// <prefix>granted, and grants the role INSERT (not SELECT) on it; the
// role then logs in through the driver's connect path, inserts with a
// parameter, is refused the SELECT (42501) and logs in with a wrong
// password (28P01).
const (
	rolePassword      = "writer-pw"
	roleWrongPassword = "wrong-pw"
)

// roleSetup is the statements of roles_grant, as the bootstrap user.
func roleSetup(role, topic string) []string {
	return []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD '" + rolePassword + "'",
		"CREATE TOPIC " + topic,
		"GRANT INSERT ON TOPIC " + topic + " TO " + role,
	}
}
