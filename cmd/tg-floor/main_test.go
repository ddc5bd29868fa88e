package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestBenchStatements drives the floor with the statements the bench's
// ingest workloads send (tg.go in ../shared/bench), through pgx, on both
// logs: what it stores is what the checking queries return.
func TestBenchStatements(t *testing.T) {
	for _, usePebble := range []bool{false, true} {
		st := &state{last: map[string]int64{}}
		var err error
		if usePebble {
			st.log, err = openPebble(filepath.Join(t.TempDir(), "pebble"))
		} else {
			st.log, err = openLog(filepath.Join(t.TempDir(), "floor.log"), 1<<20, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = st.accept(ln) }()
		ctx := context.Background()
		c, err := pgx.Connect(ctx, "postgres://u@"+ln.Addr().String()+"/db?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		mustExec := func(sql string, args ...any) {
			t.Helper()
			if _, err := c.Exec(ctx, sql, args...); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		mustExec("DROP TOPIC IF EXISTS bench_log")
		mustExec("CREATE TOPIC bench_log WITH (min_active_partitions = 4)")
		mustExec("INSERT INTO bench_log (data) VALUES ($1)", []byte("a"))
		mustExec("INSERT INTO bench_log (data) VALUES ($1),($2)", []byte("b"), []byte("c"))
		n, err := c.CopyFrom(ctx, pgx.Identifier{"bench_log"}, []string{"data"},
			pgx.CopyFromRows([][]any{{[]byte("d")}, {[]byte("e")}, {[]byte("f")}}))
		if err != nil || n != 3 {
			t.Fatalf("COPY: %d rows, %v", n, err)
		}
		for _, seqno := range []int64{1, 2, 2, 3} { // 2 twice: a retry
			mustExec("INSERT INTO bench_log (producer_id, seqno, data) VALUES ($1, $2, $3)", "p0", seqno, []byte("g"))
		}
		rows, err := c.Query(ctx, "SELECT partition, offset FROM bench_log")
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for rows.Next() {
			var part, off int64
			if err := rows.Scan(&part, &off); err != nil {
				t.Fatal(err)
			}
			count++
		}
		if rows.Err() != nil || count != 9 {
			t.Fatalf("pebble %v: %d messages stored (%v), want 9", usePebble, count, rows.Err())
		}
		var pairs []int64
		rows, _ = c.Query(ctx, "SELECT producer_id, seqno FROM bench_log")
		for rows.Next() {
			var p string
			var s int64
			if err := rows.Scan(&p, &s); err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, s)
		}
		if rows.Err() != nil || len(pairs) != 3 || pairs[2] != 3 {
			t.Fatalf("pebble %v: stored seqnos %v (%v), want [1 2 3]", usePebble, pairs, rows.Err())
		}
		c.Close(ctx)
		ln.Close()
	}
}
