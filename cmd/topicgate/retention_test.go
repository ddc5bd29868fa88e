package main

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock is an injectable clock for tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func startClockServer(t *testing.T, clk *fakeClock) *app {
	t.Helper()
	a, err := start(config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError, Clock: clk.Now})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Close()) })
	return a
}

// TestRetention drives retention with an injected clock through the front
// door: important consumers and availability periods hold data back, and a
// consumer whose position was deleted reads from the new start.
func TestRetention(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, `CREATE TOPIC r (CONSUMER imp WITH (important = true), CONSUMER avail WITH (availability_period = Interval('PT48H')), CONSUMER plain)
		WITH (retention_period = Interval('PT1H'))`)
	for i := 0; i < 10; i++ {
		exec(t, c, "INSERT INTO r (data) VALUES ('old 1'), ('old 2')")
	}
	clk.Advance(2 * time.Hour)
	exec(t, c, "INSERT INTO r (data) VALUES ('new')")
	startOffset := func() (start, end int64) {
		require.NoError(t, c.QueryRow(ctx, "SELECT start_offset, end_offset FROM sys.partitions WHERE topic = 'r'").Scan(&start, &end))
		return
	}
	retain := func() int64 {
		n, err := a.store.RunRetention(ctx, clk.Now())
		require.NoError(t, err)
		return n
	}

	require.Zero(t, retain(), "the important consumer has committed nothing")
	exec(t, c, "UPDATE sys.consumers SET committed_offset = end_offset WHERE topic = 'r' AND consumer = 'imp'")
	require.Zero(t, retain(), "avail has not committed data younger than its 48h availability period")

	clk.Advance(47 * time.Hour) // the old messages are now 49h old
	require.Equal(t, int64(20), retain())
	start, end := startOffset()
	require.Equal(t, int64(20), start)
	require.Equal(t, int64(21), end)

	// plain's position (0) was deleted: it reads from the start.
	var got []string
	rows, err := c.Query(ctx, "SELECT convert_from(data, 'UTF8') FROM r WITH (CONSUMER = plain) LIMIT 10")
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		got = append(got, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"new"}, got)
	var n int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM r").Scan(&n))
	require.Equal(t, int64(1), n, "a stateless read starts at the start offset")
}

// TestRetentionStorageLimit keeps a partition within retention_storage_mb.
func TestRetentionStorageLimit(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC s WITH (retention_storage_mb = 1)")
	body := make([]byte, 64<<10)
	for i := 0; i < 48; i++ { // 3 MiB in 48 commits
		exec(t, c, "INSERT INTO s (data) VALUES ($1)", body)
	}
	n, err := a.store.RunRetention(ctx, clk.Now())
	require.NoError(t, err)
	require.Greater(t, n, int64(0))
	var bytes, msgs int64
	require.NoError(t, c.QueryRow(ctx, "SELECT bytes, messages FROM sys.partitions WHERE topic = 's'").Scan(&bytes, &msgs))
	require.LessOrEqual(t, bytes, int64(1<<20))
	require.Equal(t, int64(48)-n, msgs)
}

// TestIdleReadSessionHandsBack: a session that stops reading loses its
// partitions to the consumer's other sessions after the idle timeout.
func TestIdleReadSessionHandsBack(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	ctx := context.Background()
	c1, c2 := connect(t, a), connect(t, a)
	exec(t, c1, "CREATE TOPIC idle (CONSUMER c)")
	exec(t, c1, "INSERT INTO idle (data) VALUES ('x')")
	ps, err := readBatch(ctx, c1, "SELECT partition, offset FROM idle WITH (CONSUMER = c) LIMIT 0")
	require.NoError(t, err)
	require.Empty(t, ps)
	ps, err = readBatch(ctx, c2, "SELECT partition, offset FROM idle WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Empty(t, ps, "c1 holds the only partition")
	clk.Advance(61 * time.Second)
	ps, err = readBatch(ctx, c2, "SELECT partition, offset FROM idle WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{0, 0}}, ps, "c1 idled out and handed the partition over")
}
