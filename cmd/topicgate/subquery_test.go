package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPgxSubqueries: parameters inside subqueries, derived tables, VALUES
// lists and WITH queries are described and bound like any other, through
// pgx's extended protocol.
func TestPgxSubqueries(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC s WITH (min_active_partitions = 2)")
	exec(t, c, "INSERT INTO s (partition, data) VALUES (0, 'a'), (0, 'b'), (1, 'c')")

	var n int64
	require.NoError(t, c.QueryRow(ctx,
		"SELECT count(*) FROM s WHERE offset IN (SELECT offset FROM s WHERE partition = $1)", 1).Scan(&n))
	require.EqualValues(t, 2, n, "offset 0 in both partitions")
	require.NoError(t, c.QueryRow(ctx,
		"WITH p AS (SELECT partition, count(*) AS k FROM s GROUP BY partition) SELECT k FROM p WHERE partition = $1", 0).Scan(&n))
	require.EqualValues(t, 2, n)
	var x int32
	var y string
	require.NoError(t, c.QueryRow(ctx, "SELECT a, b FROM (VALUES (1, $1::text), ($2::int, 'z')) v(a, b) ORDER BY a DESC LIMIT 1", "q", 7).Scan(&x, &y))
	require.Equal(t, int32(7), x)
	require.Equal(t, "z", y)
	var ok bool
	require.NoError(t, c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM s WHERE data = $1)", []byte("c")).Scan(&ok))
	require.True(t, ok)
}

// TestCorrelatedOnTopic: the newest message of each partition of a 20k
// message topic through a correlated subquery (run once per partition:
// its result is kept per outer value), with a bind parameter inside it,
// and a prepared statement run twice sees the writes made in between.
func TestCorrelatedOnTopic(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	fillTopic(t, c, "cs", 4, 20000)
	newest := func() map[int32]string {
		t.Helper()
		r, err := c.Query(ctx, "SELECT partition, convert_from(data, 'UTF8') FROM cs o WHERE offset = (SELECT max(offset) - $1 FROM cs WHERE partition = o.partition)", 0)
		require.NoError(t, err)
		got := map[int32]string{}
		for r.Next() {
			var p int32
			var d string
			require.NoError(t, r.Scan(&p, &d))
			got[p] = d
		}
		require.NoError(t, r.Err())
		return got
	}
	require.Equal(t, map[int32]string{0: "19996", 1: "19997", 2: "19998", 3: "19999"}, newest())
	exec(t, c, "INSERT INTO cs (partition, data) VALUES (2, 'later')")
	require.Equal(t, map[int32]string{0: "19996", 1: "19997", 2: "later", 3: "19999"}, newest())
}
