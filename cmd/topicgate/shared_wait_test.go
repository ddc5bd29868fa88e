package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// waitRead runs a WAIT read on reader in the background, waits until the
// server shows the statement active, runs event and returns when the read
// returned: the time from the event to the rows, and the rows' locked_until
// or written_at (first column, as text-free timestamptz).
func waitRead(t *testing.T, admin, reader *pgx.Conn, q string, event func()) (time.Duration, []time.Time) {
	t.Helper()
	ctx := context.Background()
	type result struct {
		at  time.Time
		ts  []time.Time
		err error
	}
	done := make(chan result, 1)
	go func() {
		rows, err := reader.Query(ctx, q)
		if err != nil {
			done <- result{err: err}
			return
		}
		var r result
		for rows.Next() {
			var ts time.Time
			if err := rows.Scan(&ts); err != nil {
				r.err = err
			}
			r.ts = append(r.ts, ts)
		}
		r.at = time.Now()
		if r.err == nil {
			r.err = rows.Err()
		}
		done <- r
	}()
	pid := int64(reader.PgConn().PID())
	var r result
	finished := false
	waitFor(t, func() bool { // the read is waiting, or it returned at once
		select {
		case r = <-done:
			finished = true
			return true
		default:
		}
		var state string
		err := admin.QueryRow(ctx, "SELECT state FROM sys.sessions WHERE pid = $1", pid).Scan(&state)
		return err == nil && state == "active"
	})
	t0 := time.Now()
	event()
	if !finished {
		r = <-done
	}
	require.NoError(t, r.err)
	require.Len(t, r.ts, 1, "%s: one row", q)
	return r.at.Sub(t0), r.ts
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestSharedWaitWakeLatency: a shared-consumer WAIT read wakes on events
// and timers, not on a poll: on a publish as fast as a streaming WAIT read
// does, on a release by another session, at a lock's expiry and at the end
// of a message's delay. (The old shared read re-checked every 50 ms; the
// bounds are loose because machines are noisy.)
func TestSharedWaitWakeLatency(t *testing.T) {
	a := startTestServer(t)
	admin := connect(t, a)
	exec(t, admin, "CREATE TOPIC s (CONSUMER w WITH (type = 'shared'), CONSUMER r)")
	reader, holder, pub := connect(t, a), connect(t, a), connect(t, a)
	const rounds = 7
	ack := func(c *pgx.Conn) { // everything the reader holds
		offs := make([]int64, 64)
		for i := range offs {
			offs[i] = int64(i)
		}
		exec(t, c, "DELETE FROM s WITH (CONSUMER = w) WHERE partition = 0 AND offset = ANY($1)", offs)
	}
	publish := func() { exec(t, pub, "INSERT INTO s (data) VALUES ('x')") }

	var streaming, shared, released, expired, delayed []time.Duration
	for i := 0; i < rounds; i++ {
		// Publish: the streaming consumer first, then the shared one.
		d, _ := waitRead(t, admin, reader, "SELECT written_at FROM s WITH (CONSUMER = r, WAIT = '10s') LIMIT 1", publish)
		streaming = append(streaming, d)
		d, _ = waitRead(t, admin, reader, "SELECT locked_until FROM s WITH (CONSUMER = w, WAIT = '10s') LIMIT 1", func() {})
		require.Less(t, d, time.Second, "the message was there already")
		ack(reader)
		d, _ = waitRead(t, admin, reader, "SELECT locked_until FROM s WITH (CONSUMER = w, WAIT = '10s') LIMIT 1", publish)
		shared = append(shared, d)
		ack(reader)

		// Released by the session holding it.
		publish()
		hm := mustAcquire(t, holder, "s", "CONSUMER = w", 1)
		require.Len(t, hm, 1)
		d, _ = waitRead(t, admin, reader, "SELECT locked_until FROM s WITH (CONSUMER = w, WAIT = '10s') LIMIT 1", func() {
			exec(t, holder, "UPDATE s WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset = $1", hm[0].off)
		})
		released = append(released, d)
		ack(reader)

		// A lock that expires: the waiting read gets the message at its
		// deadline.
		publish()
		ms := mustAcquire(t, holder, "s", "CONSUMER = w, PROCESSING_TIMEOUT = '150ms'", 1)
		require.Len(t, ms, 1)
		deadline := ms[0].lockedUntil
		_, _ = waitRead(t, admin, reader, "SELECT locked_until FROM s WITH (CONSUMER = w, WAIT = '10s') LIMIT 1", func() {})
		expired = append(expired, time.Since(deadline))
		ack(reader)
	}
	// A delayed message: handed out at written_at + delay.
	for i := 0; i < rounds; i++ {
		_, ts := waitRead(t, admin, reader, "SELECT written_at FROM s WITH (CONSUMER = w, WAIT = '10s') LIMIT 1", func() {
			exec(t, pub, "INSERT INTO s (data, delay) VALUES ('later', Interval('PT0.15S'))")
		})
		delayed = append(delayed, time.Since(ts[0].Add(150*time.Millisecond)))
		ack(reader)
	}
	t.Logf("median wake-up: streaming publish %v, shared publish %v, release %v, lock expiry %v late, delay end %v late (rounds %d)",
		median(streaming), median(shared), median(released), median(expired), median(delayed), rounds)
	// The old shared read polled every 50 ms.
	require.Less(t, median(shared), median(streaming)+20*time.Millisecond, "a shared read wakes on a publish as a streaming one does")
	for name, ds := range map[string][]time.Duration{"publish": shared, "release": released, "lock expiry": expired, "delay end": delayed} {
		require.Less(t, median(ds), 25*time.Millisecond, fmt.Sprintf("%s: %v", name, ds))
	}
}
