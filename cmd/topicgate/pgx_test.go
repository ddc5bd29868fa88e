package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

func connect(t testing.TB, a *app) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), a.dsn())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func exec(t testing.TB, c *pgx.Conn, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	tag, err := c.Exec(context.Background(), sql, args...)
	require.NoError(t, err, sql)
	return tag
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestPgxStatements sends the dialect's core statements (CREATE TOPIC,
// INSERT with and without producer dedup, SELECT over the message columns:
// docs/dialect/) the way pgx does by default: prepared, binary
// int8/bytea/int8[] parameters and results.
func TestPgxStatements(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC bench_log WITH (min_active_partitions = 4)")

	tag := exec(t, c, "INSERT INTO bench_log (data) VALUES ($1)", []byte("one"))
	require.Equal(t, "INSERT 0 1", tag.String())
	tag = exec(t, c, "INSERT INTO bench_log (data) VALUES ($1), ($2), ($3)", []byte("a"), []byte("b"), []byte("c"))
	require.Equal(t, "INSERT 0 3", tag.String())
	for i := 1; i <= 3; i++ {
		exec(t, c, "INSERT INTO bench_log (producer_id, seqno, data) VALUES ($1, $2, $3)", "p1", int64(i), []byte(fmt.Sprint("m", i)))
	}
	tag = exec(t, c, "INSERT INTO bench_log (producer_id, seqno, data) VALUES ($1, $2, $3)", "p1", int64(2), []byte("retry"))
	require.Equal(t, "INSERT 0 0", tag.String(), "a retried seqno is skipped")

	rows, err := c.Query(ctx, "SELECT producer_id, seqno FROM bench_log WHERE producer_id = $1", "p1")
	require.NoError(t, err)
	var seqs []int64
	for rows.Next() {
		var p string
		var s int64
		require.NoError(t, rows.Scan(&p, &s))
		seqs = append(seqs, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []int64{1, 2, 3}, seqs)

	// partition = $1 AND offset = ANY($2) with an int8[] parameter.
	var part int64
	require.NoError(t, c.QueryRow(ctx, "SELECT partition FROM bench_log WHERE producer_id = 'p1' LIMIT 1").Scan(&part))
	rows, err = c.Query(ctx, "SELECT offset, data FROM bench_log WHERE partition = $1 AND offset = ANY($2)", part, []int64{0, 2})
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var off int64
		var data []byte
		require.NoError(t, rows.Scan(&off, &data))
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 2, n)

	// Typed results in binary.
	var cnt0 int64
	var (
		ts      time.Time
		attrs   map[string]string
		codec   string
		delay   *time.Duration
		groupID *string
	)
	exec(t, c, "INSERT INTO bench_log (partition, data, attrs, message_group_id) VALUES ($1, $2, $3, $4)", int64(3), []byte("x"), map[string]string{"k": "v"}, "g")
	require.NoError(t, c.QueryRow(ctx, "SELECT written_at, attrs, codec, delay, message_group_id FROM bench_log WHERE partition = 3 AND attrs->>'k' = $1", "v").
		Scan(&ts, &attrs, &codec, &delay, &groupID))
	require.WithinDuration(t, time.Now(), ts, time.Minute)
	require.Equal(t, map[string]string{"k": "v"}, attrs)
	require.Equal(t, "raw", codec)
	require.Nil(t, delay)
	require.Equal(t, "g", *groupID)

	// date in binary both ways (pgx sends and reads days since 2000-01-01),
	// and a day's messages grouped by written_at::date.
	var d1, d2 time.Time
	var between int64
	require.NoError(t, c.QueryRow(ctx, "SELECT '2024-05-17'::date, $1::date + 1, $1::date - '2024-01-01'::date",
		time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)).Scan(&d1, &d2, &between))
	require.Equal(t, time.Date(2024, 5, 17, 0, 0, 0, 0, time.UTC), d1)
	require.Equal(t, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), d2)
	require.Equal(t, int64(-8767), between)
	var day, at time.Time
	require.NoError(t, c.QueryRow(ctx, "SELECT written_at::date, written_at FROM bench_log LIMIT 1").Scan(&day, &at))
	require.Equal(t, at.UTC().Format("2006-01-02"), day.Format("2006-01-02"))
	rows, err = c.Query(ctx, "SELECT written_at::date, count(*) FROM bench_log GROUP BY 1")
	require.NoError(t, err)
	for rows.Next() {
		var n int64
		require.NoError(t, rows.Scan(&day, &n))
		cnt0 += n
	}
	require.NoError(t, rows.Err())
	require.Equal(t, int64(8), cnt0)

	// Parameters inside FILTER and inside an aggregate's ORDER BY.
	var filtered int64
	var joined string
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FILTER (WHERE partition = $1), "+
		"string_agg(convert_from(data, 'UTF8'), ',' ORDER BY offset + $2) FILTER (WHERE partition = $1) FROM bench_log", int64(3), int64(0)).
		Scan(&filtered, &joined))
	require.Equal(t, int64(1), filtered)
	require.Equal(t, "x", joined)

	// Errors keep the connection usable.
	_, err = c.Exec(ctx, "INSERT INTO nosuch (data) VALUES ($1)", []byte("x"))
	require.Equal(t, "42P01", pgCode(err))
	_, err = c.Exec(ctx, "INSERT INTO bench_log (data, codec) VALUES ($1, $2)", []byte("x"), "brotli")
	require.Equal(t, "22023", pgCode(err))
	var cnt int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM bench_log").Scan(&cnt))
	require.Equal(t, int64(8), cnt)
}

// TestCopy covers COPY FROM STDIN in binary (pgx CopyFrom), text and csv.
func TestCopy(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC bench_log WITH (min_active_partitions = 4)")

	const n = 2000
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = []byte(fmt.Sprintf("payload-%04d", i))
	}
	got, err := c.CopyFrom(ctx, pgx.Identifier{"bench_log"}, []string{"partition", "data"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) { return []any{int64(i % 4), payloads[i]}, nil }))
	require.NoError(t, err)
	require.Equal(t, int64(n), got)
	got, err = c.CopyFrom(ctx, pgx.Identifier{"bench_log"}, []string{"data"},
		pgx.CopyFromSlice(10, func(i int) ([]any, error) { return []any{payloads[i]}, nil }))
	require.NoError(t, err)
	require.Equal(t, int64(10), got)

	var parts [4]int64
	rows, err := c.Query(ctx, "SELECT partition, end_offset FROM sys.partitions WHERE topic = 'bench_log'")
	require.NoError(t, err)
	var total int64
	for rows.Next() {
		var p, end int64
		require.NoError(t, rows.Scan(&p, &end))
		parts[p] = end
		total += end
	}
	require.NoError(t, rows.Err())
	require.Equal(t, int64(n+10), total)
	require.GreaterOrEqual(t, parts[0], int64(n/4))

	// Offsets per partition are contiguous and data round-trips in order.
	rows, err = c.Query(ctx, "SELECT offset, data FROM bench_log WHERE partition = 1 AND offset < 500")
	require.NoError(t, err)
	want := int64(0)
	for rows.Next() {
		var off int64
		var data []byte
		require.NoError(t, rows.Scan(&off, &data))
		require.Equal(t, want, off)
		require.Equal(t, fmt.Sprintf("payload-%04d", 1+4*off), string(data))
		want++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, int64(500), want)

	// Text and CSV through pgconn.
	pc := c.PgConn()
	exec(t, c, "CREATE TOPIC txt")
	tag, err := pc.CopyFrom(ctx, strings.NewReader("p1\t1\thello\\tworld\t{\"a\":\"b\"}\n\\N\t\\N\t\\\\x41\t\\N\n"),
		"COPY txt (producer_id, seqno, data, attrs) FROM STDIN")
	require.NoError(t, err)
	require.Equal(t, "COPY 2", tag.String())
	tag, err = pc.CopyFrom(ctx, strings.NewReader("data,codec\n\"a,b\",zstd\n\"multi\nline\",gzip\n"),
		"COPY txt (data, codec) FROM STDIN WITH (FORMAT csv, HEADER true)")
	require.NoError(t, err)
	require.Equal(t, "COPY 2", tag.String())
	rows, err = c.Query(ctx, "SELECT convert_from(data, 'UTF8'), codec, attrs::text FROM txt")
	require.NoError(t, err)
	var lines []string
	for rows.Next() {
		var d, codec, attrs string
		require.NoError(t, rows.Scan(&d, &codec, &attrs))
		lines = append(lines, d+"|"+codec+"|"+attrs)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"hello\tworld|raw|{\"a\": \"b\"}", "A|raw|{}", "a,b|zstd|{}", "multi\nline|gzip|{}"}, lines)

	// A bad row fails the whole COPY: nothing is written, connection usable.
	_, err = pc.CopyFrom(ctx, strings.NewReader("ok\nalso ok\n"), "COPY txt (data, codec) FROM STDIN")
	require.Error(t, err)
	_, err = pc.CopyFrom(ctx, strings.NewReader("ok\tzstd\nbad\tsnappy\n"), "COPY txt (data, codec) FROM STDIN")
	require.Equal(t, "22023", pgCode(err))
	var cnt int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM txt").Scan(&cnt))
	require.Equal(t, int64(4), cnt)
}

// TestConcurrentDedupProducers: 16 connections each publish as their own
// producer, retrying every tenth statement; every producer's messages land
// in one partition, in seqno order, exactly once, with contiguous offsets.
func TestConcurrentDedupProducers(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC d WITH (min_active_partitions = 4)")
	const clients, per = 16, 60
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for k := 0; k < clients; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			c, err := pgx.Connect(ctx, a.dsn())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(ctx)
			for s := int64(1); s <= per; s++ {
				if _, err := c.Exec(ctx, "INSERT INTO d (producer_id, seqno, data) VALUES ($1, $2, $3)", fmt.Sprint("p", k), s, []byte("x")); err != nil {
					errs <- err
					return
				}
				if s%10 == 0 {
					if _, err := c.Exec(ctx, "INSERT INTO d (producer_id, seqno, data) VALUES ($1, $2, $3)", fmt.Sprint("p", k), s, []byte("x")); err != nil {
						errs <- err
						return
					}
				}
			}
		}(k)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	rows, err := setup.Query(ctx, "SELECT partition, offset, producer_id, seqno FROM d")
	require.NoError(t, err)
	lastSeq := map[string]int64{}
	partOf := map[string]int64{}
	nextOff := map[int64]int64{}
	count := 0
	for rows.Next() {
		var p, off, seq int64
		var prod string
		require.NoError(t, rows.Scan(&p, &off, &prod, &seq))
		require.Equal(t, nextOff[p], off, "contiguous offsets")
		nextOff[p]++
		if q, ok := partOf[prod]; ok {
			require.Equal(t, q, p, "producer stays on one partition")
		}
		partOf[prod] = p
		require.Equal(t, lastSeq[prod]+1, seq, "FIFO, exactly once")
		lastSeq[prod] = seq
		count++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, clients*per, count)
}

// TestOversizeMessage: a body over 12 MiB is refused with 54000 and the
// connection stays usable.
func TestOversizeMessage(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC big")
	_, err := c.Exec(context.Background(), "INSERT INTO big (data) VALUES ($1)", make([]byte, 12<<20+1))
	require.Equal(t, "54000", pgCode(err))
	exec(t, c, "INSERT INTO big (data, codec) VALUES ($1, 'zstd')", make([]byte, 12<<20))
	var n int64
	require.NoError(t, c.QueryRow(context.Background(), "SELECT length(data) FROM big").Scan(&n))
	require.Equal(t, int64(12<<20), n)
}
