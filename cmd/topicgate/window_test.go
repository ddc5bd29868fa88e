package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWindowFramesOnTopic: a moving average over each partition's last
// messages and a count over a time range, checked against the same
// figures computed here; and a frame folded afresh for each of 40k rows
// (O(rows²)) stops at a CancelRequest with 57014, leaving the session
// usable.
func TestWindowFramesOnTopic(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	fillTopic(t, c, "f", 2, 40000)

	// Each partition holds i%2 == p in offset order; message i's data is
	// its decimal number, so a 3-message moving sum is easy to recompute.
	r, err := c.Query(ctx, `SELECT partition, offset, sum(convert_from(data, 'UTF8')::int8) OVER (PARTITION BY partition ORDER BY offset ROWS 2 PRECEDING),
		count(*) OVER (ORDER BY written_at RANGE BETWEEN UNBOUNDED PRECEDING AND interval '1 hour' FOLLOWING)
		FROM f WHERE offset < 5 ORDER BY partition, offset`)
	require.NoError(t, err)
	var got []string
	for r.Next() {
		var p, off, sum, cnt int64
		require.NoError(t, r.Scan(&p, &off, &sum, &cnt))
		got = append(got, fmt.Sprintf("%d/%d:%d:%d", p, off, sum, cnt))
	}
	require.NoError(t, r.Err())
	var want []string
	for p := int64(0); p < 2; p++ {
		for off := int64(0); off < 5; off++ {
			sum := int64(0)
			for k := max(off-2, 0); k <= off; k++ {
				sum += 2*k + p // message number of (p, k)
			}
			want = append(want, fmt.Sprintf("%d/%d:%d:%d", p, off, sum, 10)) // all 10 within the hour
		}
	}
	require.Equal(t, want, got)

	// A frame with an EXCLUDE is folded afresh for each row.
	slow := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, "SELECT max(offset) OVER (ORDER BY partition, offset ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) FROM f")
		slow <- err
	}()
	watcher := connect(t, a)
	waitFor(t, func() bool {
		var active int64
		require.NoError(t, watcher.QueryRow(ctx, "SELECT count(*) FROM sys.sessions WHERE pid = $1 AND state = 'active'", int64(c.PgConn().PID())).Scan(&active))
		return active == 1
	})
	require.NoError(t, c.PgConn().CancelRequest(ctx))
	select {
	case err := <-slow:
		require.Equal(t, "57014", pgCode(err), "%v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the statement did not stop at the CancelRequest")
	}
	var one int
	require.NoError(t, c.QueryRow(ctx, "SELECT 1").Scan(&one))
	require.Equal(t, 1, one)
}
