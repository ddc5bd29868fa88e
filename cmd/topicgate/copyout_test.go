package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyOut drives COPY ... TO STDOUT through pgconn in the text, csv
// and binary formats, checks the exact bytes of the text formats, and
// round-trips a binary export into another topic with COPY FROM.
func TestCopyOut(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC src (CONSUMER c) WITH (min_active_partitions = 2)")
	exec(t, c, "CREATE TOPIC dst WITH (min_active_partitions = 2)")
	exec(t, c, `INSERT INTO src (partition, producer_id, seqno, data, attrs) VALUES
		(0, 'p', 1, $1, '{"k":"v, w"}'), (0, 'p', 2, 'b', '{}'), (1, NULL, NULL, '', '{}')`,
		[]byte("a\ttab\\back, \"q\"\nline"))

	copyOut := func(sql string) (string, string) {
		t.Helper()
		var buf bytes.Buffer
		tag, err := c.PgConn().CopyTo(ctx, &buf, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return buf.String(), tag.String()
	}

	got, tag := copyOut("COPY src (partition, offset, seqno, producer_id, data) TO STDOUT")
	want := "0\t0\t1\tp\t\\\\x61097461625c6261636b2c20227122" + "0a6c696e65\n" +
		"0\t1\t2\tp\t\\\\x62\n" +
		"1\t0\t\\N\t\\N\t\\\\x\n"
	if got != want || tag != "COPY 3" {
		t.Fatalf("text: tag %q\n got %q\nwant %q", tag, got, want)
	}

	got, _ = copyOut(`COPY (SELECT offset, convert_from(data, 'UTF8') AS body, attrs, seqno FROM src)
		TO STDOUT WITH (FORMAT csv, HEADER)`)
	want = "offset,body,attrs,seqno\n" +
		"0,\"a\ttab\\back, \"\"q\"\"\nline\",\"{\"\"k\"\": \"\"v, w\"\"}\",1\n" +
		"1,b,{},2\n" +
		"0,\"\",{},\n"
	if got != want {
		t.Fatalf("csv:\n got %q\nwant %q", got, want)
	}

	got, _ = copyOut(`COPY (SELECT partition, convert_from(data, 'UTF8') FROM src WHERE partition = 0)
		TO STDOUT (DELIMITER '|', NULL 'nil')`)
	want = "0|a\\ttab\\\\back, \"q\"\\nline\n0|b\n"
	if got != want {
		t.Fatalf("text with options:\n got %q\nwant %q", got, want)
	}

	// Binary out, binary back in: the same bodies and producer fields.
	bin, tag := copyOut("COPY src (partition, producer_id, seqno, data) TO STDOUT (FORMAT binary)")
	if tag != "COPY 3" || !strings.HasPrefix(bin, "PGCOPY\n\xff\r\n\x00") {
		t.Fatalf("binary: tag %q, header %q", tag, bin[:min(len(bin), 11)])
	}
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(bin),
		"COPY dst (partition, producer_id, seqno, data) FROM STDIN (FORMAT binary)"); err != nil {
		t.Fatal(err)
	}
	rows := func(topic string) string {
		var b strings.Builder
		r, err := c.Query(ctx, "SELECT partition, offset, coalesce(producer_id, '-'), coalesce(seqno, -1), encode(data, 'hex') FROM "+topic)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			vals, err := r.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if s, d := rows("src"), rows("dst"); s != d {
		t.Fatalf("binary round trip:\nsrc\n%s\ndst\n%s", s, d)
	}

	// A consumer read through COPY moves the position like the SELECT.
	got, _ = copyOut("COPY (SELECT partition, offset FROM src WITH (CONSUMER = c) LIMIT 10) TO STDOUT")
	if got != "0\t0\n1\t0\n0\t1\n" && got != "0\t0\n0\t1\n1\t0\n" {
		t.Fatalf("consumer COPY: %q", got)
	}
	if got, _ = copyOut("COPY (SELECT partition, offset FROM src WITH (CONSUMER = c) LIMIT 10) TO STDOUT"); got != "" {
		t.Fatalf("second consumer COPY should find nothing new, got %q", got)
	}

	// The end-of-data marker is quoted only where it could end the data:
	// in a one-column CSV export.
	if got, _ = copyOut(`COPY (SELECT '\.' AS a, 1 AS b) TO STDOUT (FORMAT csv)`); got != "\\.,1\n" {
		t.Fatalf("csv \\. in two columns: %q", got)
	}
	if got, _ = copyOut(`COPY (SELECT '\.' AS a) TO STDOUT (FORMAT csv)`); got != "\"\\.\"\n" {
		t.Fatalf("csv \\. in one column: %q", got)
	}

	// A streaming consumer read commits its positions only after the last
	// row was written: a COPY that fails after reading moves nothing.
	// (The second row divides by zero.)
	exec(t, c, "CREATE TOPIC keep (CONSUMER k)")
	exec(t, c, "INSERT INTO keep (data) VALUES ('1'), ('2')")
	if _, err := c.PgConn().CopyTo(ctx, &bytes.Buffer{}, `COPY (SELECT 10 / (1 - offset) AS x
		FROM keep WITH (CONSUMER = k) LIMIT 2) TO STDOUT (FORMAT binary)`); pgCode(err) != "22012" {
		t.Fatalf("the failing COPY: %v, want 22012", err)
	}
	if got, _ = copyOut("COPY (SELECT offset FROM keep WITH (CONSUMER = k) LIMIT 10) TO STDOUT"); got != "0\n1\n" {
		t.Fatalf("after a failed consumer COPY the messages must still be there: %q", got)
	}

	// COPY FROM keeps accepting what PostgreSQL accepts.
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader("xy\n"),
		`COPY dst (data) FROM STDIN WITH (FORMAT csv, DELIMITER '\')`); err != nil {
		t.Fatalf("csv with a backslash delimiter: %v", err)
	}

	// Errors name the problem and leave the connection usable.
	for sql, code := range map[string]string{
		"COPY nope TO STDOUT":                               "42P01",
		"COPY src TO STDOUT (FORMAT binary, HEADER)":        "0A000",
		"COPY src TO STDOUT (FORMAT binary, DELIMITER ',')": "42601",
		"COPY src TO STDOUT (DELIMITER '||')":               "0A000",
		"COPY src TO STDOUT (DELIMITER '')":                 "0A000",
		"COPY src TO STDOUT (DELIMITER ',', DELIMITER ';')": "42601",
		"COPY src TO STDOUT (DELIMITER 'a')":                "22023",
		`COPY src TO STDOUT (QUOTE '"')`:                    "0A000",
		`COPY src TO STDOUT (FORMAT csv, DELIMITER '"')`:    "22023",
		"COPY src TO STDOUT (FORMAT csv, QUOTE ',')":        "22023",
		"COPY src TO STDOUT (FORMAT csv, NULL 'a,b')":       "0A000",
		`COPY src TO STDOUT (FORMAT csv, NULL '"')`:         "0A000",
		`COPY src TO STDOUT (NULL E'x\ny')`:                 "22023",
		"COPY src (nope) TO STDOUT":                         "42703",
	} {
		_, err := c.PgConn().CopyTo(ctx, &bytes.Buffer{}, sql)
		if code2 := pgCode(err); code2 != code {
			t.Errorf("%s: got %v (SQLSTATE %q), want %s", sql, err, code2, code)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM dst").Scan(&n); err != nil || n != 4 {
		t.Fatalf("after errors: %v, %d", err, n)
	}
}

// TestPsqlCopyTo exports a topic with psql's \copy ... to, the way users
// dump a topic to a file.
func TestPsqlCopyTo(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC t")
	exec(t, c, "INSERT INTO t (data) VALUES ('one'), ('two, three')")
	out := filepath.Join(t.TempDir(), "t.csv")
	r := runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c",
		`\copy (SELECT offset, convert_from(data, 'UTF8') FROM t) to '`+out+`' csv header`)
	psqlRequireOK(t, r)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	psqlRequireText(t, "offset,convert_from\n0,one\n1,\"two, three\"\n", string(b), "\\copy output")
}
