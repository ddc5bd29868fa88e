package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPsqlDescribe drives psql 15's describe commands against topics and
// the sys views: each sends the catalog queries testdata/psql_catalog.test
// records, and psql gives up on the whole command when any one fails, so
// a command that prints its table here answered all of them.
func TestPsqlDescribe(t *testing.T) {
	a := startTestServer(t)
	r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "CREATE TOPIC orders (CONSUMER analytics) WITH (min_active_partitions = 2)",
		"-c", "INSERT INTO orders (data) VALUES ('a'), ('b')")
	psqlRequireOK(t, r)

	// \d t: the message columns with their types, as PostgreSQL prints a
	// table's.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", `\d orders`)
	psqlRequireOK(t, r)
	psqlRequireText(t, strings.Join([]string{
		`                            Table "public.orders"`,
		"      Column      |           Type           | Collation | Nullable | Default ",
		"------------------+--------------------------+-----------+----------+---------",
		" partition        | bigint                   |           |          | ",
		" offset           | bigint                   |           |          | ",
		" seqno            | bigint                   |           |          | ",
		" producer_id      | text                     |           |          | ",
		" message_group_id | text                     |           |          | ",
		" created_at       | timestamp with time zone |           |          | ",
		" written_at       | timestamp with time zone |           |          | ",
		" codec            | text                     |           |          | ",
		" attrs            | jsonb                    |           |          | ",
		" data             | bytea                    |           |          | ",
		" delay            | interval                 |           |          | ",
		" key              | bytea                    |           |          | ",
		" headers          | jsonb                    |           |          | ",
		"",
		"",
	}, "\n"), r.stdout, `\d orders`)
	if r.stderr != "" {
		t.Errorf(`\d orders: unexpected stderr: %s`, r.stderr)
	}

	// The other commands, unaligned (with footers such as "Access method"),
	// one psql run each.
	for _, tc := range []struct {
		cmd  string
		want []string // lines that must appear
	}{
		{`\d+ orders`, []string{"partition|bigint||||plain|||", "data|bytea||||extended|||", "Access method: heap"}},
		{`\dt`, []string{"public|orders|table|postgres"}},
		{`\dt orders`, []string{"public|orders|table|postgres"}},
		{`\dt ord*`, []string{"public|orders|table|postgres"}},
		{`\dt+`, []string{"public|orders|table|postgres|permanent|heap|"}},
		{`\dv sys.*`, []string{"sys|consumers|view|postgres", "sys|topics|view|postgres", "sys|transactions|view|postgres"}},
		{`\d sys.consumers`, []string{"topic|text|||", "committed_offset|bigint|||", "lag_time|interval|||"}},
		{`\d+ sys.topics`, []string{"partitions|bigint||||plain|", "View definition:"}},
		{`\dn+`, []string{"public|pg_database_owner|pg_database_owner=UC/pg_database_owner", "=U/pg_database_owner|standard public schema",
			"sys|postgres||"}},
		{`\l+`, []string{"postgres|postgres|UTF8|C|C||libc||"}},
		{`\du`, []string{"postgres|Superuser, Create role, Create DB, Replication, Bypass RLS|{}"}},
		{`\df`, nil},
		{`\di`, nil},
		{`\d`, []string{"public|orders|table|postgres"}},
		{`\dS pg_class`, []string{"relname|name|||"}},
		{`\db`, []string{"pg_default|postgres|"}},
		{`\dx`, nil},
		{`\dT`, nil},
		{`\dconfig`, []string{"application_name|topicgate-psql-test"}},
	} {
		r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-A", "-c", tc.cmd)
		if r.code != 0 || r.stderr != "" && !strings.HasPrefix(r.stderr, "Did not find any relation") {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", tc.cmd, r.code, r.stdout, r.stderr)
			continue
		}
		lines := strings.Split(r.stdout, "\n")
		for _, w := range tc.want {
			found := false
			for _, l := range lines {
				if strings.HasPrefix(l, w) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no line starting %q in:\n%s", tc.cmd, w, r.stdout)
			}
		}
	}

	// \dt+ sizes a topic by its stored bytes.
	r = runPsql(t, a, "-A", "-t", "-c", `\dt+ orders`)
	psqlRequireOK(t, r)
	if f := strings.Split(strings.TrimSpace(r.stdout), "|"); len(f) != 8 || f[6] == "0 bytes" || !strings.HasSuffix(f[6], "bytes") {
		t.Errorf(`\dt+ orders: want a non-zero size in bytes, got %q`, r.stdout)
	}

	// \x (expanded display) formats the same catalog answers.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", `\x`, "-c", `\dt orders`)
	psqlRequireOK(t, r)
	for _, w := range []string{"Expanded display is on.", "Schema | public", "Name   | orders", "Type   | table"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf(`\x \dt orders: stdout lacks %q:\n%s`, w, r.stdout)
		}
	}
}

// TestPsqlTabCompletion types into an interactive psql (a terminal from
// script(1), so that readline is on) a query whose topic name ends in a
// TAB: the query runs only if psql's completion query found the topic.
// Each input waits for psql's prompt (or the completed name) on the
// terminal, never for a fixed time.
func TestPsqlTabCompletion(t *testing.T) {
	scriptPath, err := osexec.LookPath("script")
	if err != nil {
		t.Fatalf("script(1) (util-linux) is needed for a terminal: %v", err)
	}
	a := startTestServer(t)
	r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "CREATE TOPIC completion_target",
		"-c", "INSERT INTO completion_target (data) VALUES ('a'), ('b'), ('c')")
	psqlRequireOK(t, r)
	host, port, err := net.SplitHostPort(a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := osexec.CommandContext(ctx, scriptPath, "-qfec",
		fmt.Sprintf("%s -X -P pager=off -h %s -p %s -U postgres -d postgres", psqlPath, host, port), "/dev/null")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "PSQL") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "LC_ALL=C", "TERM=dumb")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term := newTermReader(outR)
	steps := []struct{ waitFor, send string }{
		{"postgres=# ", "SELECT count(*) AS counted FROM completion_t\t"},
		{"completion_target", ";\n"},
		{"(1 row)", "\\q\n"},
	}
	for _, st := range steps {
		if err := term.waitFor(ctx, st.waitFor); err != nil {
			t.Fatalf("waiting for %q: %v\n%q", st.waitFor, err, term.text())
		}
		if _, err := io.WriteString(in, st.send); err != nil {
			t.Fatal(err)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Logf("script: %v", err)
	}
	text := strings.ReplaceAll(term.text(), "\r", "")
	if !strings.Contains(text, "counted") || !strings.Contains(text, " 3\n") || strings.Contains(text, "ERROR") {
		t.Fatalf("the completed query did not run:\n%q", text)
	}
}

// termReader collects what a terminal program prints and wakes waiters
// when more arrives.
type termReader struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{} // closed and replaced at each read; nil once EOF
}

func newTermReader(r io.Reader) *termReader {
	tr := &termReader{more: make(chan struct{})}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := r.Read(b)
			tr.mu.Lock()
			tr.buf.Write(b[:n])
			close(tr.more)
			if err != nil {
				tr.more = nil
				tr.mu.Unlock()
				return
			}
			tr.more = make(chan struct{})
			tr.mu.Unlock()
		}
	}()
	return tr
}

func (tr *termReader) text() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.buf.String()
}

// waitFor returns once the output so far contains s.
func (tr *termReader) waitFor(ctx context.Context, s string) error {
	for {
		tr.mu.Lock()
		found, more := strings.Contains(tr.buf.String(), s), tr.more
		tr.mu.Unlock()
		switch {
		case found:
			return nil
		case more == nil:
			return io.EOF
		}
		select {
		case <-more:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
