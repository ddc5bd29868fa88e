package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

type pos struct{ part, off int64 }

// readBatch reads as consumer c and returns the positions it got; a 40001
// (the position moved under a rebalance) counts as an empty read.
func readBatch(ctx context.Context, c *pgx.Conn, sql string) ([]pos, error) {
	rows, err := c.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	var out []pos
	for rows.Next() {
		var p pos
		if err := rows.Scan(&p.part, &p.off); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		if pgCode(err) == "40001" {
			return nil, nil
		}
		return out, err // the rows that arrived before the error
	}
	return out, nil
}

// TestConsumerBalancing runs read sessions joining and leaving mid-stream
// while a producer writes: every message is delivered exactly once across
// the sessions, and no partition is read by two sessions at once.
func TestConsumerBalancing(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC bal (CONSUMER c) WITH (min_active_partitions = 4)")
	const total = 2000
	var produced atomic.Int64
	go func() {
		c, err := pgx.Connect(ctx, a.dsn())
		if err != nil {
			return
		}
		defer c.Close(ctx)
		for i := 0; i < total/20; i++ {
			b := &pgx.Batch{}
			for j := 0; j < 20; j++ {
				b.Queue("INSERT INTO bal (data) VALUES ($1)", []byte(fmt.Sprint(i*20+j)))
			}
			if err := c.SendBatch(ctx, b).Close(); err != nil {
				return
			}
			produced.Add(20)
		}
	}()

	var mu sync.Mutex
	seen := map[pos]int{}
	var got atomic.Int64
	reader := func(stop <-chan struct{}, done *sync.WaitGroup) {
		defer done.Done()
		c, err := pgx.Connect(ctx, a.dsn())
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ps, err := readBatch(ctx, c, "SELECT partition, offset FROM bal WITH (CONSUMER = c, WAIT = '50ms') LIMIT 37")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, p := range ps {
				seen[p]++
			}
			mu.Unlock()
			got.Add(int64(len(ps)))
			if got.Load() >= total {
				return
			}
		}
	}
	var wg sync.WaitGroup
	stops := make([]chan struct{}, 6)
	for i := range stops {
		stops[i] = make(chan struct{})
	}
	// Three sessions, then a fourth and fifth join, then two leave, then a
	// sixth joins: more sessions than partitions at the peak.
	start := func(i int) { wg.Add(1); go reader(stops[i], &wg) }
	start(0)
	start(1)
	start(2)
	waitFor(t, func() bool { return got.Load() > total/5 })
	start(3)
	start(4)
	waitFor(t, func() bool { return got.Load() > total/2 })
	close(stops[0])
	close(stops[3])
	start(5)
	deadline := time.Now().Add(30 * time.Second)
	for got.Load() < total && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, i := range []int{1, 2, 4, 5} {
		close(stops[i])
	}
	wg.Wait()
	require.Equal(t, int64(total), produced.Load())
	require.Len(t, seen, total, "every message delivered")
	for p, n := range seen {
		require.Equal(t, 1, n, "message %v delivered %d times", p, n)
	}
	var lag int64
	require.NoError(t, setup.QueryRow(ctx, "SELECT sum(lag_messages) FROM sys.consumers WHERE topic = 'bal'").Scan(&lag))
	require.Zero(t, lag)
}

// waitFor polls cond (the condition is driven by other goroutines making
// progress, not by time).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMoreSessionsThanPartitions: with one partition the second session
// holds nothing and gets no rows, until the first one leaves.
func TestMoreSessionsThanPartitions(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	c1, c2 := connect(t, a), connect(t, a)
	exec(t, c1, "CREATE TOPIC one (CONSUMER c)")
	exec(t, c1, "INSERT INTO one (data) VALUES ('x'), ('y')")
	ps, err := readBatch(ctx, c1, "SELECT partition, offset FROM one WITH (CONSUMER = c) LIMIT 1")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	ps, err = readBatch(ctx, c2, "SELECT partition, offset FROM one WITH (CONSUMER = c, WAIT = '20ms') LIMIT 10")
	require.NoError(t, err)
	require.Empty(t, ps, "the partition is held by the first session")
	var holder int64
	require.NoError(t, c1.QueryRow(ctx, "SELECT read_session FROM sys.consumers WHERE topic = 'one'").Scan(&holder))
	require.Equal(t, int64(c1.PgConn().PID()), holder)
	require.NoError(t, c1.Close(ctx))
	waitFor(t, func() bool {
		ps, err = readBatch(ctx, c2, "SELECT partition, offset FROM one WITH (CONSUMER = c) LIMIT 10")
		require.NoError(t, err)
		return len(ps) > 0
	})
	require.Equal(t, []pos{{0, 1}}, ps, "the second session continues from the committed position")
}

// TestWaitWakesOnPublish: a long-polling read returns as soon as a message
// is published, long before its WAIT timeout; cancel ends a wait at once.
func TestWaitWakesOnPublish(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	reader, writer := connect(t, a), connect(t, a)
	exec(t, writer, "CREATE TOPIC w (CONSUMER c) WITH (min_active_partitions = 2)")
	type result struct {
		ps  []pos
		err error
		at  time.Time
	}
	res := make(chan result, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		ps, err := readBatch(ctx, reader, "SELECT partition, offset FROM w WITH (CONSUMER = c, WAIT = '20s') LIMIT 10")
		res <- result{ps, err, time.Now()}
	}()
	<-started
	waitFor(t, func() bool {
		var n int64
		require.NoError(t, writer.QueryRow(ctx, "SELECT count(*) FROM sys.consumers WHERE topic = 'w' AND read_session IS NOT NULL").Scan(&n))
		return n == 2
	})
	sent := time.Now()
	exec(t, writer, "INSERT INTO w (data) VALUES ('wake up')")
	r := <-res
	require.NoError(t, r.err)
	require.Len(t, r.ps, 1)
	wake := r.at.Sub(sent)
	t.Logf("wake-up after publish: %v", wake)
	require.Less(t, wake, 5*time.Second, "woken by the publish, not by the 20s timeout")

	// CancelRequest ends a wait at once with 57014.
	go func() {
		_, err := readBatch(ctx, reader, "SELECT partition, offset FROM w WITH (CONSUMER = c, WAIT = '30s') LIMIT 10")
		res <- result{err: err, at: time.Now()}
	}()
	waitFor(t, func() bool {
		var n int64
		require.NoError(t, writer.QueryRow(ctx, "SELECT count(*) FROM sys.sessions WHERE pid = $1 AND state = 'active'", int64(reader.PgConn().PID())).Scan(&n))
		return n == 1
	})
	cancelAt := time.Now()
	require.NoError(t, reader.PgConn().CancelRequest(ctx))
	r = <-res
	require.Equal(t, "57014", pgCode(r.err))
	require.Less(t, r.at.Sub(cancelAt), 5*time.Second)
}
