package main

// The logic-test runner: testdata/*.test files hold statements and queries
// with their expected results, run through a real pgx connection to an
// in-process server (one fresh server and data directory per file).
//
// File format (blank lines separate records, # starts a comment):
//
//	statement ok
//	CREATE TOPIC t
//
//	statement error 42P07 topic "t" already exists
//	CREATE TOPIC t
//
//	query
//	SELECT partition, offset FROM t
//	----
//	0|0
//
//	query colnames       (the first result line is the column names)
//	SELECT 1::int8
//	----
//	int8
//	1
//
//	statement ok         (a COPY ... FROM STDIN: the lines after the
//	COPY t FROM STDIN     statement are its data, sent as they are, in
//	a<TAB>b               COPY's text format here: fields split by tabs)
//
//	connection other     (switch to, or open, a named connection)
//	user alice           (switch to, or open, a connection logged in as role
//	                      alice: the files run with trust authentication)
//	mode extended        (send with the extended protocol; default: simple)
//
// The text after an error code must be a substring of the server's message.
// Query rows print values in PostgreSQL's text format joined by '|', NULL as
// NULL, and NOTICE messages as lines starting with "NOTICE: ". Run with
// -rewrite to regenerate expected results and error lines.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

var rewrite = flag.Bool("rewrite", false, "rewrite expected results of logic tests")

type logicRecord struct {
	kind     string // statement, query, connection, mode
	arg      string // rest of the header line
	sql      string
	expected []string
	line     int
	comments []string // comment lines before the record, kept by -rewrite
}

func parseLogicFile(t *testing.T, path string) []logicRecord {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []logicRecord
	var comments []string
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "#") {
			comments = append(comments, lines[i])
			continue
		}
		if l == "" {
			continue
		}
		kind, arg, _ := strings.Cut(l, " ")
		rec := logicRecord{kind: kind, arg: strings.TrimSpace(arg), line: i + 1, comments: comments}
		comments = nil
		switch kind {
		case "connection", "mode", "user":
			recs = append(recs, rec)
			continue
		case "statement", "query":
		default:
			t.Fatalf("%s:%d: unknown directive %q", path, i+1, kind)
		}
		var sqlLines []string
		i++
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && lines[i] != "----"; i++ {
			sqlLines = append(sqlLines, lines[i])
		}
		rec.sql = strings.Join(sqlLines, "\n")
		if i < len(lines) && lines[i] == "----" {
			for i++; i < len(lines) && lines[i] != ""; i++ {
				rec.expected = append(rec.expected, lines[i])
			}
		}
		recs = append(recs, rec)
	}
	return recs
}

// logicConn runs statements and renders results.
type logicConn struct {
	c       *pgconn.PgConn
	notices []string
}

// logicConnector returns a function that opens, on first use, the named
// connection of a logic file ("connection name") to dsn, and returns it
// again after; the connections close when the test ends.
func logicConnector(t *testing.T, dsn string) func(name string) *logicConn {
	ctx := context.Background()
	conns := map[string]*logicConn{}
	return func(name string) *logicConn {
		if lc, ok := conns[name]; ok {
			return lc
		}
		cfg, err := pgconn.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		if role, ok := strings.CutPrefix(name, "user "); ok {
			cfg.User = role
		}
		lc := &logicConn{}
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { lc.notices = append(lc.notices, n.Message) }
		c, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		lc.c = c
		t.Cleanup(func() { c.Close(context.Background()) })
		conns[name] = lc
		return lc
	}
}

func (lc *logicConn) run(ctx context.Context, sql string, extended, colnames bool) ([]string, error) {
	lc.notices = nil
	var out []string
	if stmt, data, ok := copyFromStdin(sql); ok {
		_, err := lc.c.CopyFrom(ctx, strings.NewReader(data), stmt)
		return nil, err
	}
	header := func(fds []pgconn.FieldDescription) {
		if !colnames {
			return
		}
		names := make([]string, len(fds))
		for i, fd := range fds {
			names[i] = fd.Name
		}
		out = append(out, strings.Join(names, "|"))
	}
	render := func(rows [][][]byte) {
		for _, r := range rows {
			vals := make([]string, len(r))
			for i, v := range r {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = string(v)
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	if extended {
		res := lc.c.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
		if res.Err != nil {
			return nil, res.Err
		}
		header(res.FieldDescriptions)
		render(res.Rows)
	} else {
		results, err := lc.c.Exec(ctx, sql).ReadAll()
		if err != nil {
			return nil, err
		}
		for _, r := range results {
			header(r.FieldDescriptions)
			render(r.Rows)
		}
	}
	for _, n := range lc.notices {
		out = append(out, "NOTICE: "+n)
	}
	return out, nil
}

// copyFromStdin splits a record's SQL that is a COPY ... FROM STDIN into
// the statement (its first line) and its data (the lines after it).
func copyFromStdin(sql string) (stmt, data string, ok bool) {
	stmt, data, _ = strings.Cut(sql, "\n")
	u := strings.ToUpper(stmt)
	if !strings.HasPrefix(u, "COPY ") || !strings.Contains(u, " FROM STDIN") {
		return "", "", false
	}
	if data != "" {
		data += "\n"
	}
	return stmt, data, true
}

func TestLogic(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*.test")
	if err != nil || len(files) == 0 {
		t.Fatalf("no logic test files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".test"), func(t *testing.T) { runLogicFile(t, f, startTestServer(t), *rewrite) })
	}
}

// clusterPending lists the logic files that use what the cluster store
// does not do yet, with the reason; docs/cluster/testing.md lists
// the same. Every other file runs on a gateway and must give the embedded
// store's answers.
var clusterPending = map[string]string{}

// TestLogicOnCluster runs the logic tests through a gateway on a real
// three-node NATS JetStream cluster (R3), so that both stores answer the
// same SQL alike; it never rewrites the files.
func TestLogicOnCluster(t *testing.T) {
	if onCluster() {
		t.Skip("TestLogic runs on the cluster already")
	}
	files, err := filepath.Glob("../../testdata/*.test")
	if err != nil || len(files) == 0 {
		t.Fatalf("no logic test files: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".test")
		t.Run(name, func(t *testing.T) {
			if why, ok := clusterPending[name]; ok {
				t.Skip(why)
			}
			runLogicFile(t, f, startServer(t, clusterConfig(t)), false)
		})
	}
}

func runLogicFile(t *testing.T, path string, a *app, rewrite bool) {
	ctx := context.Background()
	connect := logicConnector(t, a.dsn())
	cur := connect("default")
	extended := false
	recs := parseLogicFile(t, path)
	var out strings.Builder
	for _, rec := range recs {
		for _, c := range rec.comments {
			fmt.Fprintln(&out, c)
		}
		switch rec.kind {
		case "connection":
			cur = connect(rec.arg)
			fmt.Fprintf(&out, "connection %s\n\n", rec.arg)
			continue
		case "user":
			cur = connect("user " + rec.arg)
			fmt.Fprintf(&out, "user %s\n\n", rec.arg)
			continue
		case "mode":
			extended = rec.arg == "extended"
			fmt.Fprintf(&out, "mode %s\n\n", rec.arg)
			continue
		}
		colnames := rec.kind == "query" && rec.arg == "colnames"
		rows, err := cur.run(ctx, rec.sql, extended, colnames)
		var pgErr *pgconn.PgError
		switch {
		case err != nil && !errors.As(err, &pgErr):
			t.Fatalf("%s:%d: %v", path, rec.line, err)
		case rec.kind == "statement":
			header := "statement ok"
			if err != nil {
				header = "statement error " + pgErr.Code + " " + pgErr.Message
			}
			if !rewrite {
				checkStatement(t, path, rec, pgErr)
			}
			fmt.Fprintf(&out, "%s\n%s\n\n", header, rec.sql)
		default:
			if err != nil {
				if !rewrite {
					t.Errorf("%s:%d: query failed: %v\n%s", path, rec.line, err, rec.sql)
				}
				fmt.Fprintf(&out, "statement error %s %s\n%s\n\n", pgErr.Code, pgErr.Message, rec.sql)
				continue
			}
			if !rewrite && strings.Join(rows, "\n") != strings.Join(rec.expected, "\n") {
				t.Errorf("%s:%d: %s\nexpected:\n%s\ngot:\n%s", path, rec.line, rec.sql,
					strings.Join(rec.expected, "\n"), strings.Join(rows, "\n"))
			}
			fmt.Fprintf(&out, "%s\n%s\n----\n", strings.TrimSpace("query "+rec.arg), rec.sql)
			for _, r := range rows {
				fmt.Fprintln(&out, r)
			}
			fmt.Fprintln(&out)
		}
	}
	if rewrite {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkStatement(t *testing.T, path string, rec logicRecord, pgErr *pgconn.PgError) {
	want := rec.arg
	if want == "ok" {
		if pgErr != nil {
			t.Errorf("%s:%d: expected ok, got %s %s\n%s", path, rec.line, pgErr.Code, pgErr.Message, rec.sql)
		}
		return
	}
	rest, ok := strings.CutPrefix(want, "error ")
	if !ok {
		t.Fatalf("%s:%d: bad statement header %q", path, rec.line, want)
	}
	code, msg, _ := strings.Cut(rest, " ")
	if pgErr == nil {
		t.Errorf("%s:%d: expected error %s, got ok\n%s", path, rec.line, code, rec.sql)
		return
	}
	if pgErr.Code != code || !strings.Contains(pgErr.Message, msg) {
		t.Errorf("%s:%d: expected error %s %q, got %s %q\n%s", path, rec.line, code, msg, pgErr.Code, pgErr.Message, rec.sql)
	}
}
