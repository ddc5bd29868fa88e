package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/executor"
)

// TestShutdownDrains: a server shutting down (SIGTERM) ends each session
// with FATAL 57P01, as PostgreSQL's fast shutdown does, and each ends as
// on a client's exit: an open transaction publishes nothing, and the
// server is gone within the grace even with a session idle in a block
// and one waiting in a consumer read.
func TestShutdownDrains(t *testing.T) {
	dir := t.TempDir()
	started := make(chan uint32, 64)
	cfg := config{Listen: "127.0.0.1:0", DataDir: dir, Trace: func(e executor.Event) {
		if e.Kind == executor.EventStatementStart {
			select {
			case started <- e.PID:
			default:
			}
		}
	}}
	a, err := start(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC sd (CONSUMER c)")
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO sd (data) VALUES ('never committed')")
	waiter := connect(t, a)
	pid := waiter.PgConn().PID()
	for len(started) > 0 {
		<-started
	}
	waitErr := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT data FROM sd WITH (CONSUMER = c, WAIT = '30s') LIMIT 1")
		waitErr <- err
	}()
	for p := range started { // the waiter is inside its read
		if p == pid {
			break
		}
	}
	t0 := time.Now()
	require.NoError(t, a.Shutdown(5*time.Second))
	require.Less(t, time.Since(t0), 4*time.Second, "the drain does not wait out the read's WAIT")
	_, err = c.Exec(ctx, "COMMIT")
	require.Equal(t, "57P01", pgCode(err), "the session in a block: %v", err)
	require.Error(t, <-waitErr)

	cfg.Trace = nil
	b, err := start(cfg)
	require.NoError(t, err)
	defer b.Close()
	c2 := connect(t, b)
	var n int
	require.NoError(t, c2.QueryRow(ctx, "SELECT count(*) FROM sd").Scan(&n))
	require.Zero(t, n, "the open transaction rolled back")
}
