package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// threeWay joins three 700-message topics, comma-joined, on keys written
// in WHERE: rule extractJoinKeys makes them hash-join keys.
const threeWay = "SELECT count(*) FROM j3a a, j3b b, j3c c WHERE a.data = b.data AND b.data = c.data"

func fillThreeWay(t testing.TB, a *app) {
	c := connect(t, a)
	for _, name := range []string{"j3a", "j3b", "j3c"} {
		fillTopic(t, c, name, 2, 700)
	}
}

// TestThreeWayJoin: equalities between comma-joined topics in WHERE are
// hash keys (EXPLAIN shows two hash joins, no nested loop), and the join
// of three 700-message topics takes well under a second (a filter over
// cross joins took about 85 s).
func TestThreeWayJoin(t *testing.T) {
	a := startTestServer(t)
	fillThreeWay(t, a)
	c := connect(t, a)
	ctx := context.Background()
	start := time.Now()
	var n int64
	require.NoError(t, c.QueryRow(ctx, threeWay).Scan(&n))
	require.EqualValues(t, 700, n)
	require.Less(t, time.Since(start), time.Second)

	rows, err := c.Query(ctx, "EXPLAIN "+threeWay)
	require.NoError(t, err)
	var plan []string
	for rows.Next() {
		var l string
		require.NoError(t, rows.Scan(&l))
		plan = append(plan, l)
	}
	require.NoError(t, rows.Err())
	text := strings.Join(plan, "\n")
	require.Equal(t, 2, strings.Count(text, "Hash Join"), text)
	require.NotContains(t, text, "Nested Loop", text)

	// The same keys from ON, from WHERE through derived tables, and mixed.
	for _, q := range []string{
		"SELECT count(*) FROM j3a a JOIN j3b b ON a.data = b.data JOIN j3c c ON b.data = c.data",
		"SELECT count(*) FROM (SELECT data FROM j3a) a, (SELECT data FROM j3b) b, j3c c WHERE a.data = b.data AND c.data = b.data",
		"WITH x AS (SELECT data FROM j3a) SELECT count(*) FROM x, j3b b, j3c c WHERE x.data = b.data AND b.data = c.data AND c.offset >= 0",
	} {
		start := time.Now()
		require.NoError(t, c.QueryRow(ctx, q).Scan(&n), q)
		require.EqualValues(t, 700, n, q)
		require.Less(t, time.Since(start), time.Second, q)
	}
}

// BenchmarkThreeWayJoin measures threeWay.
func BenchmarkThreeWayJoin(b *testing.B) {
	a := startTestServer(b)
	fillThreeWay(b, a)
	c := connect(b, a)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var n int64
		if err := c.QueryRow(ctx, threeWay).Scan(&n); err != nil || n != 700 {
			b.Fatal(err, n)
		}
	}
}

// TestQueryMemoryStatement: --max-query-mib bounds the whole statement,
// not each query block: three derived tables that each sort ~0.73 MB fit
// one by one under 1 MiB but not joined in one statement.
func TestQueryMemoryStatement(t *testing.T) {
	a := startServer(t, config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError, MaxQueryMiB: 1})
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC mm WITH (min_active_partitions = 2)")
	exec(t, c, "INSERT INTO mm (data) SELECT convert_to(lpad(g::text, 1000, '0'), 'UTF8') FROM generate_series(1, 700) g")
	// Each derived table holds its sorted rows (with the data they are
	// sorted by) while the joins read them; what the joins hold is small.
	sorted := "(SELECT offset, partition FROM mm ORDER BY data DESC)"
	var n int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM "+sorted+" x").Scan(&n), "one sort fits")
	require.EqualValues(t, 700, n)
	for _, q := range []string{
		"SELECT count(*) FROM " + sorted + " a JOIN " + sorted + " b ON a.offset = b.offset AND a.partition = b.partition JOIN " + sorted + " c ON b.offset = c.offset AND b.partition = c.partition",
		"SELECT count(*) FROM " + sorted + " a, (SELECT * FROM " + sorted + " y) b, (SELECT * FROM (SELECT * FROM " + sorted + " z) w) c WHERE a.offset = b.offset AND b.offset = c.offset AND a.partition = b.partition AND b.partition = c.partition",
	} {
		_, err := c.Exec(ctx, q)
		require.Equal(t, "54000", pgCode(err), q)
		require.Contains(t, err.Error(), "--max-query-mib", q)
	}
	// A sort above a lateral join holds the joined rows: the lateral
	// right side giving back its own memory per left row does not give
	// back the sort's (2100 rows of 1 KB).
	_, err := c.Exec(ctx, "SELECT l.d FROM mm x, LATERAL (SELECT x.data AS d, g FROM generate_series(1, 3) g) l ORDER BY l.d")
	require.Equal(t, "54000", pgCode(err))
	// Subqueries that run one after the other give back what their sorts
	// held once they end: only their results stay charged.
	require.NoError(t, c.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+sorted+" a) + (SELECT count(*) FROM "+sorted+" b) + (SELECT count(*) FROM "+sorted+" c)").Scan(&n))
	require.EqualValues(t, 2100, n)
}
