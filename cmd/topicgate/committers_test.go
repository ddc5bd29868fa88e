package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestManyCommitters: 2,000 sessions, each with a connection of its own,
// commit a transaction of eight messages (six producers) to two topics at
// once, through
// one server (on the cluster: one gateway, whose committer groups them and
// puts off what does not fit in a batch; it once did that by sending to its
// own queue while holding the lock the fold needs, and stopped). Every
// transaction commits, within a minute, and every message is stored once.
func TestManyCommitters(t *testing.T) {
	const sessions = 2000
	a := startTestServer(t)
	ctx := context.Background()
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC m1 WITH (min_active_partitions = 4)")
	exec(t, c, "CREATE TOPIC m2 WITH (min_active_partitions = 4)")
	conns := make([]*pgx.Conn, sessions)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range conns {
		wg.Go(func() {
			cc, err := pgx.Connect(ctx, a.dsn())
			if err != nil {
				errs <- err
				return
			}
			conns[i] = cc
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	defer func() {
		for _, cc := range conns {
			cc.Close(ctx)
		}
	}()
	start := make(chan struct{})
	errs = make(chan error, sessions)
	for i, cc := range conns {
		wg.Go(func() {
			<-start
			tx, err := cc.Begin(ctx)
			if err == nil {
				// Six producers of its own: on the cluster a message each,
				// so a group of 256 such commits overflows a batch.
				_, err = tx.Exec(ctx, "INSERT INTO m1 (producer_id, seqno, data) VALUES ($1||'a', 1, 'a'), ($1||'b', 1, 'b'), ($1||'c', 1, 'c'), ($1||'d', 1, 'd'), ($1||'e', 1, 'e'), ($1||'f', 1, 'f')", fmt.Sprintf("s%d", i))
			}
			if err == nil {
				_, err = tx.Exec(ctx, "INSERT INTO m2 (data) VALUES ($1), ($1)", fmt.Sprint(i))
			}
			if err == nil {
				err = tx.Commit(ctx)
			}
			if err != nil {
				errs <- fmt.Errorf("session %d: %w", i, err)
			}
		})
	}
	t0 := time.Now()
	close(start)
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%d sessions did not all commit within a minute", sessions)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d transactions of 8 messages committed in %v", sessions, time.Since(t0).Round(time.Millisecond))
	var n1, n2, p int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM m1").Scan(&n1))
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM m2").Scan(&n2))
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM sys.producers WHERE topic = 'm1'").Scan(&p))
	require.Equal(t, int64(6*sessions), n1)
	require.Equal(t, int64(2*sessions), n2)
	require.Equal(t, int64(6*sessions), p)
}
