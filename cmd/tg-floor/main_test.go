package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestBenchStatements drives the floor with the statements the bench's
// ingest workloads send (tg.go in ../shared/bench), through pgx, on both
// logs: what it stores is what the checking queries return.
func TestBenchStatements(t *testing.T) {
	for _, usePebble := range []bool{false, true} {
		c := floorConn(t, usePebble)
		ctx := context.Background()
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
	}
}

// TestQueueStatements drives the queue floor with the bench's queue
// statements (tg.go's tgQueueWorker): a prefill COPY of (partition, data),
// acquisitions of ten, acknowledgements as one pipelined DELETE per
// partition. Every message is handed out exactly once, and nothing is left.
func TestQueueStatements(t *testing.T) {
	for _, usePebble := range []bool{false, true} {
		c := floorConn(t, usePebble)
		ctx := context.Background()
		if _, err := c.Exec(ctx, "CREATE TOPIC bench_queue (CONSUMER w WITH (type = 'shared')) WITH (min_active_partitions = 4)"); err != nil {
			t.Fatal(err)
		}
		prefill(t, c, "bench_queue", 4, 25)
		seen := map[string]bool{}
		for {
			got := readRows(t, c, "SELECT partition, offset, data FROM bench_queue WITH (CONSUMER = w) LIMIT 10")
			if len(got) == 0 {
				break
			}
			offsets := map[int64][]int64{}
			for _, m := range got {
				if want := fmt.Sprint("m", m.off*4+m.part); string(m.data) != want || seen[want] {
					t.Fatalf("pebble %v: acquired %s at %d/%d (seen before: %v)", usePebble, m.data, m.part, m.off, seen[want])
				}
				seen[string(m.data)] = true
				offsets[m.part] = append(offsets[m.part], m.off)
			}
			b := &pgx.Batch{}
			for p, offs := range offsets {
				b.Queue("DELETE FROM bench_queue WITH (CONSUMER = w) WHERE partition = $1 AND offset = ANY($2)", p, offs)
			}
			if err := c.SendBatch(ctx, b).Close(); err != nil {
				t.Fatal(err)
			}
		}
		if len(seen) != 25 {
			t.Fatalf("pebble %v: %d of 25 messages acquired", usePebble, len(seen))
		}
		c.Close(ctx)
	}
}

// prefill copies n messages m0, m1, ... into topic, message i into
// partition i%parts, as the bench's drain workloads prefill.
func prefill(t *testing.T, c *pgx.Conn, topic string, parts, n int) {
	t.Helper()
	var rows [][]any
	for i := range n {
		rows = append(rows, []any{int64(i % parts), []byte(fmt.Sprint("m", i))})
	}
	if got, err := c.CopyFrom(context.Background(), pgx.Identifier{topic}, []string{"partition", "data"}, pgx.CopyFromRows(rows)); err != nil || got != int64(n) {
		t.Fatalf("prefill: %d rows, %v", got, err)
	}
}

// readRows runs a (partition, offset, data) query.
func readRows(t *testing.T, c *pgx.Conn, sql string) []qrow {
	t.Helper()
	got, err := pgx.CollectRows(mustQuery(t, c, sql), func(r pgx.CollectableRow) (qrow, error) {
		var m qrow
		return m, r.Scan(&m.part, &m.off, &m.data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

type qrow struct {
	part, off int64
	data      []byte
}

func mustQuery(t *testing.T, c *pgx.Conn, sql string) pgx.Rows {
	t.Helper()
	rows, err := c.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// floorConn starts a floor on a fresh log (Pebble or the file) and
// connects to it; the listener closes with the test.
func floorConn(t *testing.T, usePebble bool) *pgx.Conn {
	t.Helper()
	c, _ := floorState(t, usePebble)
	return c
}

// floorState is floorConn, also returning the floor's state.
func floorState(t *testing.T, usePebble bool) (*pgx.Conn, *state) {
	t.Helper()
	st := &state{last: map[string]int64{}, queue: queue{freed: make(chan int, 16)}}
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
	t.Cleanup(func() { ln.Close() })
	go func() { _ = st.accept(ln) }()
	c, err := pgx.Connect(context.Background(), "postgres://u@"+ln.Addr().String()+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

// TestConsumeStatements drives the consume floor as the bench's consume
// workload does (tg.go's tgReader): a partition is one session's, a read
// returns the next rows of it, and a session that ends frees its partition
// for another to go on from where it stopped.
func TestConsumeStatements(t *testing.T) {
	for _, usePebble := range []bool{false, true} {
		a, st := floorState(t, usePebble)
		ctx := context.Background()
		if _, err := a.Exec(ctx, "CREATE TOPIC bench_log (CONSUMER c) WITH (min_active_partitions = 2)"); err != nil {
			t.Fatal(err)
		}
		prefill(t, a, "bench_log", 2, 20)
		b, c := connectAgain(t, a), connectAgain(t, a)
		read := func(conn *pgx.Conn) []qrow {
			t.Helper()
			return readRows(t, conn, "SELECT partition, offset, data FROM bench_log WITH (CONSUMER = c) LIMIT 3")
		}
		seen := map[string]bool{}
		note := func(got []qrow, part int64) {
			t.Helper()
			for _, m := range got {
				if want := fmt.Sprint("m", m.off*2+m.part); m.part != part || string(m.data) != want || seen[want] {
					t.Fatalf("pebble %v: read %s at %d/%d, want partition %d, each once", usePebble, m.data, m.part, m.off, part)
				}
				seen[string(m.data)] = true
			}
		}
		note(read(a), 0)
		note(read(b), 1)
		if got := read(c); len(got) != 0 {
			t.Fatalf("pebble %v: a third session read %d rows with both partitions taken", usePebble, len(got))
		}
		note(read(a), 0)
		a.Close(ctx)
		if p := <-st.queue.freed; p != 0 {
			t.Fatalf("pebble %v: partition %d freed, want 0", usePebble, p)
		}
		for got := read(c); len(got) > 0; got = read(c) { // c takes partition 0 where a stopped
			note(got, 0)
		}
		for got := read(b); len(got) > 0; got = read(b) {
			note(got, 1)
		}
		if len(seen) != 20 {
			t.Fatalf("pebble %v: %d of 20 messages read", usePebble, len(seen))
		}
	}
}

// connectAgain opens another connection to the floor c is connected to.
func connectAgain(t *testing.T, c *pgx.Conn) *pgx.Conn {
	t.Helper()
	cfg := c.Config()
	d, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://u@%s:%d/db?sslmode=disable", cfg.Host, cfg.Port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

// TestRPWStatements drives the read-process-write floor as the bench's rpw
// workload does (tg.go's tgProcessor): BEGIN, a consumer read, an INSERT
// of what it read, COMMIT. A rolled-back transaction's read is read again;
// a committed one's output is counted and read back.
func TestRPWStatements(t *testing.T) {
	for _, usePebble := range []bool{false, true} {
		a := floorConn(t, usePebble)
		ctx := context.Background()
		for _, q := range []string{"CREATE TOPIC rpw_in (CONSUMER c) WITH (min_active_partitions = 2)", "CREATE TOPIC rpw_out WITH (min_active_partitions = 2)"} {
			if _, err := a.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		prefill(t, a, "rpw_in", 2, 10)
		process := func(commit bool) []string {
			t.Helper()
			tx, err := a.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			var bodies []string
			var args []any
			got, err := tx.Query(ctx, "SELECT partition, offset, data FROM rpw_in WITH (CONSUMER = c) LIMIT 3")
			if err != nil {
				t.Fatal(err)
			}
			for got.Next() {
				var p, o int64
				var d []byte
				if err := got.Scan(&p, &o, &d); err != nil {
					t.Fatal(err)
				}
				bodies, args = append(bodies, string(d)), append(args, d)
			}
			if len(args) == 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, "INSERT INTO rpw_out (data) VALUES "+strings.Repeat("($1),", len(args)-1)+fmt.Sprintf("($%d)", len(args)), args...); err != nil {
				t.Fatal(err)
			}
			if commit {
				err = tx.Commit(ctx)
			} else {
				err = tx.Rollback(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			return bodies
		}
		first := process(true)
		undone := process(false)
		again := process(true)
		if strings.Join(undone, ",") != strings.Join(again, ",") || len(first) != 3 || first[0] == again[0] {
			t.Fatalf("pebble %v: read %v, rolled back %v, then read %v", usePebble, first, undone, again)
		}
		for process(true) != nil {
		}
		var out []string
		got, err := a.Query(ctx, "SELECT data FROM rpw_out")
		if err != nil {
			t.Fatal(err)
		}
		for got.Next() {
			var d []byte
			if err := got.Scan(&d); err != nil {
				t.Fatal(err)
			}
			out = append(out, string(d))
		}
		// Partition 0, then (drained) partition 1, each message once.
		if strings.Join(out, ",") != "m0,m2,m4,m6,m8,m1,m3,m5,m7,m9" {
			t.Fatalf("pebble %v: rpw_out holds %v, want each message once, partition 0 first", usePebble, out)
		}
		for name, want := range map[string]int{"rpw_in": 10, "rpw_out": 10} {
			rows, err := pgx.CollectRows(mustQuery(t, a, "SELECT partition, offset FROM "+name), func(pgx.CollectableRow) (bool, error) { return true, nil })
			if err != nil || len(rows) != want {
				t.Fatalf("pebble %v: %s counts %d (%v), want %d", usePebble, name, len(rows), err, want)
			}
		}
	}
}

// TestLatencyStatements drives the latency floor as the bench's latency
// workload does (tg.go's Publish and NewTailer): a read with WAIT returns
// what an INSERT made durable, whether it was waiting already or not, each
// message once, and an empty read returns when its wait ends.
func TestLatencyStatements(t *testing.T) {
	const wait = "SELECT partition, offset, data FROM bench_latency WITH (CONSUMER = c, WAIT = '%s') LIMIT 1000"
	for _, usePebble := range []bool{false, true} {
		a := floorConn(t, usePebble)
		ctx := context.Background()
		if _, err := a.Exec(ctx, "CREATE TOPIC bench_latency (CONSUMER c) WITH (min_active_partitions = 4)"); err != nil {
			t.Fatal(err)
		}
		r := connectAgain(t, a)
		var got []qrow
		for i := range 3 {
			done := make(chan error)
			go func() { // the read, waiting unless the INSERT came first
				rows, _ := r.Query(ctx, fmt.Sprintf(wait, "10s"))
				more, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (qrow, error) {
					var m qrow
					return m, row.Scan(&m.part, &m.off, &m.data)
				})
				got = append(got, more...)
				done <- err
			}()
			if _, err := a.Exec(ctx, "INSERT INTO bench_latency (data) VALUES ($1)", []byte(fmt.Sprint("m", i))); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != 3 {
			t.Fatalf("pebble %v: %d of 3 messages read", usePebble, len(got))
		}
		for i, m := range got {
			if string(m.data) != fmt.Sprint("m", i) || m.part != int64(i%4) || m.off != int64(i/4) {
				t.Fatalf("pebble %v: read %s at %d/%d as message %d", usePebble, m.data, m.part, m.off, i)
			}
		}
		if rest := readRows(t, r, fmt.Sprintf(wait, "10ms")); len(rest) != 0 {
			t.Fatalf("pebble %v: %d messages read again", usePebble, len(rest))
		}
	}
}
