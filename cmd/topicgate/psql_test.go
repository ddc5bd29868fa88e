package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// psqlPath is the PostgreSQL 15 client the front-door test drives. The test
// fails (never skips) when it is missing: psql compatibility is a feature.
const psqlPath = "/usr/bin/psql"

// psqlResult is one psql run: its stdout, stderr and exit code.
type psqlResult struct {
	stdout, stderr string
	code           int
}

// runPsql runs psql -X against a, with the given extra arguments, and
// returns what it printed. The environment is cleaned of PG* variables so
// that the developer's settings cannot leak in.
func runPsql(t *testing.T, a *app, args ...string) psqlResult {
	t.Helper()
	return runPsqlAt(t, a.Addr(), "postgres", args...)
}

// runPsqlAt is runPsql against the server at addr (topicgate or
// PostgreSQL), logged in as user.
func runPsqlAt(t *testing.T, addr, user string, args ...string) psqlResult {
	t.Helper()
	if _, err := os.Stat(psqlPath); err != nil {
		t.Fatalf("psql is required for this test: %v", err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append([]string{"-X", "-h", host, "-p", port, "-U", user, "-d", "postgres"}, args...)
	cmd := osexec.CommandContext(ctx, psqlPath, full...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "PSQL") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PGCONNECT_TIMEOUT=10", "PGAPPNAME=topicgate-psql-test", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res := psqlResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *osexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		res.code = ee.ExitCode()
	default:
		t.Fatalf("psql %q: %v\nstdout:\n%s\nstderr:\n%s", full, err, res.stdout, res.stderr)
	}
	t.Logf("psql %s -> exit %d", strings.Join(args, " "), res.code)
	return res
}

// psqlRequireOK fails the test unless psql exited 0.
func psqlRequireOK(t *testing.T, r psqlResult) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("psql exit code %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// psqlRequireText compares two multi-line texts and shows both in full on
// a mismatch (psql's alignment makes diffs easier to read that way).
func psqlRequireText(t *testing.T, want, got, what string) {
	t.Helper()
	if want != got {
		t.Fatalf("%s mismatch\n--- want ---\n%s\n--- got ---\n%s", what, want, got)
	}
}

// TestPsql drives the real psql binary through docs/walkthrough.md: DDL,
// dedup INSERTs (with the NOTICE of a skipped duplicate), a zstd-coded
// insert, convert_from, COPY FROM STDIN inside a script, sys.partitions,
// ALTER TOPIC, DROP TOPIC and error reporting with ON_ERROR_STOP.
func TestPsql(t *testing.T) {
	a := startTestServer(t)
	dir := t.TempDir()

	// 1. The walkthrough as one script in tuples-only, unaligned mode.
	script := `CREATE TOPIC orders (CONSUMER analytics) WITH (min_active_partitions = 4,
    retention_period = Interval('PT18H'), supported_codecs = 'raw,gzip,zstd,lzop');
INSERT INTO orders (producer_id, seqno, data, attrs)
  VALUES ('acct-17', 1, 'deposit 100', '{"kind":"deposit"}');
INSERT INTO orders (producer_id, seqno, data) VALUES ('acct-17', 1, 'deposit 100');
INSERT INTO orders (data) VALUES ('no dedup'), ('still no dedup');
INSERT INTO orders (data, codec) VALUES ('compress me', 'zstd');
COPY orders (data) FROM STDIN;
copied one
copied\ttwo
copied \\\\ three
\.
INSERT INTO orders (producer_id, seqno, data) VALUES ('acct-17', 2, 'withdraw 30'), ('acct-17', 1, 'deposit 100');
SELECT partition, offset, seqno, producer_id, codec, attrs, convert_from(data, 'UTF8') AS body FROM orders;
SELECT count(*) FROM orders;
SELECT partition, start_offset, end_offset, messages FROM sys.partitions WHERE topic = 'orders';
SELECT producer_id, partition, max_seqno FROM sys.producers WHERE topic = 'orders';
ALTER TOPIC orders SET (retention_period = Interval('P1D')), ADD CONSUMER audit;
SELECT topic, partitions, retention_period, supported_codecs, consumers FROM sys.topics WHERE topic = 'orders';
`
	path := filepath.Join(dir, "walkthrough.sql")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-A", "-t", "-f", path)
	psqlRequireOK(t, r)
	// Round robin: acct-17 binds partition 0, the unbound writes take 1, 2
	// and 3 (one partition per statement), and acct-17 stays on 0.
	psqlRequireText(t, strings.Join([]string{
		"CREATE TOPIC",
		"INSERT 0 1",
		"INSERT 0 0",
		"INSERT 0 2",
		"INSERT 0 1",
		"COPY 3",
		"INSERT 0 1",
		`0|0|1|acct-17|raw|{"kind": "deposit"}|deposit 100`,
		"0|1|2|acct-17|raw|{}|withdraw 30",
		"1|0|||raw|{}|no dedup",
		"1|1|||raw|{}|still no dedup",
		"2|0|||zstd|{}|compress me",
		"3|0|||raw|{}|copied one",
		"3|1|||raw|{}|copied\ttwo",
		`3|2|||raw|{}|copied \ three`,
		"8",
		"0|0|2|2",
		"1|0|2|2",
		"2|0|1|1",
		"3|0|3|3",
		"acct-17|0|2",
		"ALTER TOPIC",
		"orders|4|1 day|raw,gzip,zstd,lzop|analytics,audit",
		"",
	}, "\n"), r.stdout, "walkthrough output")
	// Both duplicates are reported on stderr as a NOTICE, with the script line.
	for _, want := range []string{
		"walkthrough.sql:5: NOTICE:  skipped 1 duplicate message(s)",
		"walkthrough.sql:13: NOTICE:  skipped 1 duplicate message(s)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "NOTICE:"); n != 2 {
		t.Errorf("want 2 NOTICEs on stderr, got %d:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stderr, "ERROR") || strings.Contains(r.stderr, "WARNING") {
		t.Errorf("unexpected stderr:\n%s", r.stderr)
	}

	// 2. Aligned output (psql's default format) of a SELECT.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c",
		"SELECT partition, offset, seqno, producer_id, codec, convert_from(data, 'UTF8') AS body FROM orders WHERE partition = 0 AND offset >= 0 LIMIT 10")
	psqlRequireOK(t, r)
	psqlRequireText(t, strings.Join([]string{
		" partition | offset | seqno | producer_id | codec |    body     ",
		"-----------+--------+-------+-------------+-------+-------------",
		"         0 |      0 |     1 | acct-17     | raw   | deposit 100",
		"         0 |      1 |     2 | acct-17     | raw   | withdraw 30",
		"(2 rows)",
		"",
		"",
	}, "\n"), r.stdout, "aligned output")
	if r.stderr != "" {
		t.Errorf("unexpected stderr:\n%s", r.stderr)
	}

	// 2b. \d+ ends with the topic's Options footer (pg_class.reloptions),
	// and SHOW CREATE TOPIC prints the DDL that recreates it.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", `\d+ orders`)
	psqlRequireOK(t, r)
	if want := "Options: partitions=4 active of 4, min_active_partitions=4, retention_period=P1D, " +
		"supported_codecs=raw,gzip,zstd,lzop, consumer analytics=streaming, consumer audit=streaming\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("\\d+ orders lacks %q:\n%s", want, r.stdout)
	}
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-A", "-t", "-c", "SHOW CREATE TOPIC orders")
	psqlRequireOK(t, r)
	psqlRequireText(t, "orders|CREATE TOPIC orders (CONSUMER analytics, CONSUMER audit) WITH (min_active_partitions = 4, "+
		"retention_period = Interval('P1D'), supported_codecs = 'raw,gzip,zstd,lzop')\n", r.stdout, "SHOW CREATE TOPIC")

	// 3. Errors: with ON_ERROR_STOP=0 the script goes on past the error and
	// psql exits 0 (psql's exit code reflects only the last statement when
	// not stopping); with ON_ERROR_STOP=1 it stops and exits 3 (script) / 1 (-c).
	errScript := "SELECT data FROM nosuch;\nSELECT count(*) FROM orders;\n"
	errPath := filepath.Join(dir, "errors.sql")
	if err := os.WriteFile(errPath, []byte(errScript), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=0", "-A", "-t", "-f", errPath)
	if r.code != 0 {
		t.Errorf("ON_ERROR_STOP=0: exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	psqlRequireText(t, "8\n", r.stdout, "ON_ERROR_STOP=0 output")
	if want := `errors.sql:1: ERROR:  topic "nosuch" does not exist`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}

	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-A", "-t", "-f", errPath)
	if r.code != 3 { // psql: 3 = an error occurred in a script with ON_ERROR_STOP
		t.Errorf("ON_ERROR_STOP=1 script: exit %d, want 3", r.code)
	}
	if r.stdout != "" {
		t.Errorf("ON_ERROR_STOP=1 must stop before the second statement; stdout:\n%s", r.stdout)
	}
	if want := `ERROR:  topic "nosuch" does not exist`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}

	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "SELECT * FROM nosuch")
	if r.code == 0 {
		t.Errorf("ON_ERROR_STOP=1 -c: exit 0, want non-zero")
	}
	// The error's position puts psql's caret under the culprit, as with
	// PostgreSQL.
	psqlRequireText(t, "ERROR:  topic \"nosuch\" does not exist\nLINE 1: SELECT * FROM nosuch\n                      ^\n", r.stderr, "-c error stderr")

	// A failed statement leaves the data alone: a bad codec in a multi-row
	// INSERT writes nothing.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "INSERT INTO orders (data, codec) VALUES ('a', 'raw'), ('b', 'brotli')")
	if r.code == 0 || !strings.Contains(r.stderr, "ERROR:") {
		t.Errorf("bad codec: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = runPsql(t, a, "-A", "-t", "-c", "SELECT count(*) FROM orders")
	psqlRequireOK(t, r)
	psqlRequireText(t, "8\n", r.stdout, "count after failed insert")

	// psql's meta-commands: \dt and \d list the topics as tables, \dn the
	// schemas, \l the database (their catalog queries join pg_catalog
	// tables).
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-A", "-t", "-c", `\dt`, "-c", `\d`, "-c", `\dn`, "-c", `\l`)
	psqlRequireOK(t, r)
	psqlRequireText(t, strings.Join([]string{
		"public|orders|table|postgres",
		"public|orders|table|postgres",
		"public|pg_database_owner", // as in PostgreSQL 15
		"sys|postgres",
		"postgres|postgres|UTF8|C|C||libc|",
		"",
	}, "\n"), r.stdout, "meta-commands")

	// 4. DROP TOPIC, then the topic is gone.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "DROP TOPIC orders")
	psqlRequireOK(t, r)
	psqlRequireText(t, "DROP TOPIC\n", r.stdout, "drop output")
	r = runPsql(t, a, "-A", "-t", "-c", "SELECT count(*) FROM sys.topics WHERE topic = 'orders'")
	psqlRequireOK(t, r)
	psqlRequireText(t, "0\n", r.stdout, "sys.topics after drop")
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "SELECT * FROM orders")
	if r.code == 0 || !strings.Contains(r.stderr, `ERROR:  topic "orders" does not exist`) {
		t.Errorf("select after drop: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
