package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestQueryMemoryLimit: a sort without LIMIT or a grouping that would hold
// more than --max-query-mib fails with 54000 and leaves the session usable;
// the same sort with a LIMIT (kept in a bounded heap) and streaming reads
// are not limited.
func TestQueryMemoryLimit(t *testing.T) {
	a, err := start(config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError, MaxQueryMiB: 1})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC m WITH (min_active_partitions = 2)")
	rows := make([][]any, 3000)
	for i := range rows {
		rows[i] = []any{fmt.Appendf(nil, "%01000d", i)} // 3 MB in all
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"m"}, []string{"data"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	require.EqualValues(t, 3000, n)

	limited := func(q string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		var pe *pgconn.PgError
		require.True(t, errors.As(err, &pe), "%s: %v", q, err)
		require.Equal(t, "54000", pe.Code, q)
		require.Contains(t, pe.Message, "--max-query-mib")
	}
	limited("SELECT data FROM m ORDER BY written_at DESC")
	limited("SELECT data, count(*) FROM m GROUP BY data")
	limited("SELECT string_agg(convert_from(data, 'UTF8'), ',') FROM m")
	limited("SELECT DISTINCT data FROM m")
	limited("SELECT count(*) FROM m a JOIN m b ON a.data = b.data") // the right side is held
	// A recursion that does not end holds every row it produced: 54000,
	// not a loop for ever.
	limited("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t")
	limited("WITH RECURSIVE t(n) AS (SELECT 1::int8 UNION SELECT n + 1 FROM t) SELECT max(n) FROM t")

	var got int
	require.NoError(t, c.QueryRow(ctx, "SELECT 1").Scan(&got), "the session still works")
	require.Equal(t, 1, got)
	var first []byte
	require.NoError(t, c.QueryRow(ctx, "SELECT data FROM m ORDER BY written_at DESC, data DESC LIMIT 1").Scan(&first))
	require.Equal(t, fmt.Sprintf("%01000d", 2999), string(first))
	var total int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) + sum(length(data)) FROM m").Scan(&total), "aggregates without groups stream")
	require.EqualValues(t, 3000+3000*1000, total)
	var streamed int
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM m").Scan(&streamed))
	r, err := c.Query(ctx, "SELECT data FROM m ORDER BY partition, offset")
	require.NoError(t, err)
	for r.Next() {
		streamed--
	}
	require.NoError(t, r.Err(), "a read in scan order is not materialized")
	require.Equal(t, 0, streamed)
}

// TestJoinCancel: a long cross join stops when the client cancels it.
func TestJoinCancel(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC big")
	rows := make([][]any, 4000)
	for i := range rows {
		rows[i] = []any{[]byte("x")}
	}
	_, err := c.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"data"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var n int64 // 16M pairs, each through a residual condition: many seconds
	err = c.QueryRow(qctx, "SELECT count(*) FROM big a JOIN big b ON a.offset + b.offset = -1").Scan(&n)
	require.Error(t, err)
	require.Less(t, time.Since(start), 5*time.Second, "the cancel reached the join")
	c2 := connect(t, a)
	require.NoError(t, c2.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&n))
	require.EqualValues(t, 4000, n)
}
