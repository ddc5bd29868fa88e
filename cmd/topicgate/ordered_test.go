package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestOrderedScans: ORDER BY offset [DESC], partition [DESC] and
// partition, offset DESC are served by the scan itself (no sort), and give
// what a real sort gives: the same offsets in the same order, every row
// the message it names. The reference query sorts by offset + 0, an
// expression, which the planner cannot hand to the scan.
func TestOrderedScans(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC o WITH (min_active_partitions = 3)")
	for p, n := range []int{50, 7, 1200} { // partition 2 spans several windows
		b := &pgx.Batch{}
		for i := 0; i < n; i++ {
			b.Queue("INSERT INTO o (partition, data, attrs) VALUES ($1, $2, $3)",
				p, fmt.Sprintf("p%d-%d", p, i), fmt.Sprintf(`{"k":"%d"}`, i%3))
		}
		require.NoError(t, c.SendBatch(ctx, b).Close())
	}
	type row struct {
		part, off int64
		data      string
	}
	read := func(q string) []row {
		rows, err := c.Query(ctx, q)
		require.NoError(t, err, q)
		var out []row
		for rows.Next() {
			var r row
			require.NoError(t, rows.Scan(&r.part, &r.off, &r.data), q)
			require.Equal(t, fmt.Sprintf("p%d-%d", r.part, r.off), r.data, q)
			out = append(out, r)
		}
		require.NoError(t, rows.Err(), q)
		return out
	}
	plan := func(q string) string {
		var lines []string
		rows, err := c.Query(ctx, "EXPLAIN "+q)
		require.NoError(t, err)
		for rows.Next() {
			var l string
			require.NoError(t, rows.Scan(&l))
			lines = append(lines, l)
		}
		return strings.Join(lines, "\n")
	}
	offsets := func(rs []row) []int64 {
		out := make([]int64, len(rs))
		for i, r := range rs {
			out[i] = r.off
		}
		return out
	}
	for _, where := range []string{"", "WHERE attrs->>'k' = '1'", "WHERE partition IN (0, 2) AND offset < 1000",
		"WHERE offset >= 40 AND attrs->>'k' <> '0'", "WHERE partition = 1"} {
		for _, cut := range []string{"", "LIMIT 1", "LIMIT 10", "LIMIT 10 OFFSET 5", "LIMIT 600", "OFFSET 1190"} {
			for _, dir := range []string{"DESC", "ASC"} {
				sel := "SELECT partition, offset, convert_from(data, 'UTF8') FROM o " + where
				got := read(fmt.Sprintf("%s ORDER BY offset %s %s", sel, dir, cut))
				want := read(fmt.Sprintf("%s ORDER BY offset + 0 %s %s", sel, dir, cut))
				require.Equal(t, offsets(want), offsets(got), "%s ORDER BY offset %s %s", sel, dir, cut)

				// Partition then offset is a total order: rows must be equal.
				q := fmt.Sprintf("%s ORDER BY partition DESC, offset %s %s", sel, dir, cut)
				ref := fmt.Sprintf("%s ORDER BY partition + 0 DESC, offset + 0 %s %s", sel, dir, cut)
				require.Equal(t, read(ref), read(q), q)
			}
		}
	}
	tail := "SELECT partition, offset, convert_from(data, 'UTF8') FROM o ORDER BY offset DESC LIMIT 3"
	require.NotContains(t, plan(tail), "Sort Key:", "the tail of a topic needs no sort")
	require.Contains(t, plan(tail), "Order: offset DESC, partitions merged")
	require.Equal(t, []row{{2, 1199, "p2-1199"}, {2, 1198, "p2-1198"}, {2, 1197, "p2-1197"}}, read(tail))
	require.Contains(t, plan("SELECT data FROM o ORDER BY written_at DESC"), "Sort Key:")
}
