package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// FuzzSQL sends arbitrary statements through the front door (pgconn, the
// simple or the extended protocol) to a server holding a small topic, and
// fails on any internal error (XX000: an assertion, or a recovered panic),
// when the server stops answering, and when a statement runs on past its
// statement_timeout: the session sets one of fuzzTimeout, so every
// statement must end within fuzzGrace of it, with its rows or 57014. One
// that does not names an iterator that never checks for cancellation and
// would hold a session and a core forever (the stall issue 13 saw: fuzz
// workers at 0 execs/s while the run still passed). DDL and COPY are left
// out so that the fixture stays as it is; the seed corpus is every query
// of testdata/*.test, and testdata/fuzz/FuzzSQL keeps the inputs that
// once stalled it.
//
//	go test ./cmd/topicgate -run XXX -fuzz FuzzSQL -fuzztime 60s
func FuzzSQL(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/*.test")
	for _, p := range files {
		for _, q := range logicQueries(p) {
			f.Add(q)
		}
	}
	a := startTestServer(f)
	ctx := context.Background()
	connect := func() *pgconn.PgConn {
		c, err := pgconn.Connect(ctx, a.dsn()+"&statement_timeout="+strconv.Itoa(int(fuzzTimeout/time.Millisecond)))
		if err != nil {
			f.Fatal(err)
		}
		return c
	}
	c := connect()
	defer func() { c.Close(ctx) }()
	for _, q := range []string{
		"CREATE TOPIC s (CONSUMER c, CONSUMER w WITH (type = 'shared')) WITH (min_active_partitions = 2)",
		`INSERT INTO s (partition, data, attrs, producer_id, seqno) VALUES (0, 'alpha', '{"k": "a"}', 'p', 1), (1, 'delta', '{}', 'q', 2), (1, 'echo', '{"k": "e"}', NULL, NULL)`,
		`INSERT INTO s (partition, key, headers, data) VALUES (0, 'k1', '[{"key": "h", "value": "\\x00ff"}, {"key": "h", "value": null}]', 'kafka'), (1, 'k1', '[]', NULL)`,
	} {
		if _, err := c.Exec(ctx, q).ReadAll(); err != nil {
			f.Fatal(err)
		}
	}
	skip := regexp.MustCompile(`(?i)\b(drop|alter|create|copy|wait|pg_sleep|begin|start|set|reset|discard)\b`)
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 2000 || skip.MatchString(q) || strings.ContainsRune(q, 0) {
			return
		}
		qctx, cancel := context.WithTimeout(ctx, fuzzTimeout+fuzzGrace)
		start := time.Now()
		var err error
		if len(q)%2 == 0 { // half the inputs take the extended protocol
			err = c.ExecParams(qctx, q, nil, nil, nil, nil).Read().Err
		} else {
			_, err = c.Exec(qctx, q).ReadAll()
		}
		cancel()
		if d := time.Since(start); d > fuzzTimeout+fuzzGrace {
			t.Fatalf("%q ran %v, past its statement_timeout of %v: something it runs does not check for cancellation", q, d.Round(time.Millisecond), fuzzTimeout)
		}
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "XX000" {
			t.Fatalf("%q: internal error: %s", q, pe.Message)
		}
		if err != nil && !errors.As(err, &pe) && c.IsClosed() {
			c = connect() // a fatal protocol error or a timeout closed it
		}
		if _, err := c.Exec(ctx, "ROLLBACK; SELECT 1").ReadAll(); err != nil {
			t.Fatalf("%q: the server stopped answering: %v", q, err)
		}
	})
}

// fuzzTimeout is FuzzSQL's statement_timeout; a statement must end within
// fuzzGrace of it.
const fuzzTimeout, fuzzGrace = time.Second, 2 * time.Second

// logicQueries returns the SQL of every record of a logic-test file.
func logicQueries(path string) []string {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	want := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "query") || strings.HasPrefix(l, "statement"):
			want = true
		case want && l != "" && l != "----":
			out = append(out, l)
			want = false
		default:
			want = false
		}
	}
	return out
}
