package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// startHandoffServer starts a test server (on the store the test binary
// runs against) with the given handoff grace.
func startHandoffServer(t *testing.T, grace time.Duration) *app {
	t.Helper()
	cfg := testConfig(t)
	cfg.HandoffGrace = grace
	return startServer(t, cfg)
}

// TestHandoffWaitsForTransaction: session A is in BEGIN and has read both
// partitions; B joins. B reads nothing while A's transaction holds them
// (and returns at once: it never waits for A), A's COMMIT succeeds, and B
// gets its share right after, reading from A's committed position.
func TestHandoffWaitsForTransaction(t *testing.T) {
	a := startHandoffServer(t, time.Minute)
	ctx := context.Background()
	ca, cb := connect(t, a), connect(t, a)
	exec(t, ca, "CREATE TOPIC ho (CONSUMER c) WITH (min_active_partitions = 2)")
	exec(t, ca, "INSERT INTO ho (partition, data) VALUES (0, 'a0'), (1, 'a1')")
	exec(t, ca, "BEGIN")
	ps, err := readBatch(ctx, ca, "SELECT partition, offset FROM ho WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{0, 0}, {1, 0}}, ps)

	ps, err = readBatch(ctx, cb, "SELECT partition, offset FROM ho WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Empty(t, ps, "partition 1 stays with A's open transaction")

	// B waits (WAIT) while A commits: the commit hands partition 1 over and
	// wakes B, which reads what was published after A's read.
	exec(t, ca, "INSERT INTO ho (partition, data) VALUES (1, 'b1')")
	got := make(chan []pos, 1)
	go func() {
		ps, err := readBatch(ctx, cb, "SELECT partition, offset FROM ho WITH (CONSUMER = c, WAIT = '30s') LIMIT 10")
		if err != nil {
			t.Error(err)
		}
		got <- ps
	}()
	start := time.Now()
	_, err = ca.Exec(ctx, "COMMIT")
	require.NoError(t, err, "a joining reader does not abort the transaction")
	select {
	case ps = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("B was not handed partition 1 after A's COMMIT")
	}
	require.Equal(t, []pos{{1, 1}}, ps, "B continues from A's committed position")
	require.Less(t, time.Since(start), 10*time.Second)
	var holder int64
	require.NoError(t, ca.QueryRow(ctx, "SELECT read_session FROM sys.consumers WHERE topic = 'ho' AND partition = 1").Scan(&holder))
	require.Equal(t, int64(cb.PgConn().PID()), holder)
}

// TestHandoffWaitsForRead: A's autocommit read is in flight (its client
// took the first row, then stopped reading, so the read is stuck sending
// 24 MiB) and pins both partitions; B joins with a read without WAIT. B
// does not return at once with nothing: it waits for A's read to hand its
// share over, at most pinHandoffWait (100 ms), then returns what there is.
// Once A's read is done B reads its share.
func TestHandoffWaitsForRead(t *testing.T) {
	a := startHandoffServer(t, time.Minute)
	ctx := context.Background()
	setup, ca, cb := connect(t, a), connect(t, a), connect(t, a)
	exec(t, setup, "CREATE TOPIC hr (CONSUMER c) WITH (min_active_partitions = 2)")
	big := make([]byte, 1<<20)
	for range 24 {
		_, err := setup.Exec(ctx, "INSERT INTO hr (partition, data) VALUES (0, $1)", big)
		require.NoError(t, err)
	}
	exec(t, setup, "INSERT INTO hr (partition, data) VALUES (1, 'b')")

	fe := ca.PgConn().Frontend()
	fe.Send(&pgproto3.Query{String: "SELECT partition, offset, data FROM hr WITH (CONSUMER = c) LIMIT 100"})
	require.NoError(t, fe.Flush())
	for { // the first row: A's read has joined and pinned both partitions
		msg, err := ca.PgConn().ReceiveMessage(ctx)
		require.NoError(t, err)
		if _, ok := msg.(*pgproto3.DataRow); ok {
			break
		}
	}

	start := time.Now()
	ps, err := readBatch(ctx, cb, "SELECT partition, offset FROM hr WITH (CONSUMER = c) LIMIT 10")
	waited := time.Since(start)
	require.NoError(t, err)
	require.Empty(t, ps, "partition 1 is still A's: its read is not over")
	require.GreaterOrEqual(t, waited, 100*time.Millisecond, "B waited for A's read")
	require.Less(t, waited, 10*time.Second, "but not for the handoff grace")

	rows := 0
	for { // A's client reads the rest: the read ends, partition 1 moves
		msg, err := ca.PgConn().ReceiveMessage(ctx)
		require.NoError(t, err)
		if _, ok := msg.(*pgproto3.DataRow); ok {
			rows++
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	require.Equal(t, 25, rows+1, "A read both partitions whole")
	exec(t, setup, "INSERT INTO hr (partition, data) VALUES (1, 'c')")
	ps, err = readBatch(ctx, cb, "SELECT partition, offset FROM hr WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{1, 1}}, ps, "B reads its share from A's committed position")
}

// TestHandoffGraceExpires: A's transaction holds partition 1 past the
// grace: B gets it at the grace (its WAIT returns then, with the messages
// A had read but not committed) and A's COMMIT fails with 40001.
func TestHandoffGraceExpires(t *testing.T) {
	const grace = 400 * time.Millisecond
	a := startHandoffServer(t, grace)
	ctx := context.Background()
	ca, cb := connect(t, a), connect(t, a)
	exec(t, ca, "CREATE TOPIC hg (CONSUMER c) WITH (min_active_partitions = 2)")
	exec(t, ca, "INSERT INTO hg (partition, data) VALUES (0, 'a0'), (1, 'a1')")
	exec(t, ca, "BEGIN")
	ps, err := readBatch(ctx, ca, "SELECT partition, offset FROM hg WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Len(t, ps, 2)

	start := time.Now()
	ps, err = readBatch(ctx, cb, "SELECT partition, offset FROM hg WITH (CONSUMER = c, WAIT = '20s') LIMIT 10")
	require.NoError(t, err)
	waited := time.Since(start)
	require.Equal(t, []pos{{1, 0}}, ps, "B reads partition 1 from the committed position")
	require.GreaterOrEqual(t, waited, grace, "not before the grace")
	require.Less(t, waited, 10*time.Second, "at the grace, not at the end of WAIT")

	_, err = ca.Exec(ctx, "COMMIT")
	require.Error(t, err)
	require.Equal(t, "40001", pgCode(err))
	require.Contains(t, err.Error(), `partition 1 of topic "hg" was reassigned`)
	// A keeps partition 0 and reads it again after the failed commit.
	ps, err = readBatch(ctx, ca, "SELECT partition, offset FROM hg WITH (CONSUMER = c) LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{0, 0}}, ps)
}

// TestReadersChurnNoConflicts runs the bench's rpw workload (BEGIN; SELECT
// ... WITH (CONSUMER = c) LIMIT 100; INSERT ...; COMMIT) with readers
// joining and leaving all the time while a producer writes: with
// transactions far shorter than the grace, no COMMIT fails with 40001, and
// every message is processed exactly once.
func TestReadersChurnNoConflicts(t *testing.T) {
	a := startTestServer(t) // the default grace (10s)
	ctx := context.Background()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC churn_in (CONSUMER c) WITH (min_active_partitions = 4)")
	exec(t, setup, "CREATE TOPIC churn_out")
	const total = 3000
	go func() {
		c, err := pgx.Connect(ctx, a.dsn())
		if err != nil {
			return
		}
		defer c.Close(ctx)
		for i := 0; i < total/50; i++ {
			b := &pgx.Batch{}
			for j := 0; j < 50; j++ {
				b.Queue("INSERT INTO churn_in (data) VALUES ($1)", []byte(fmt.Sprint(i*50+j)))
			}
			if err := c.SendBatch(ctx, b).Close(); err != nil {
				return
			}
		}
	}()
	var mu sync.Mutex
	seen := map[pos]int{}
	var done, conflicts atomic.Int64
	// worker runs txns transactions (or until everything is processed) and
	// disconnects.
	worker := func(txns int) error {
		c, err := pgx.Connect(ctx, a.dsn())
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		for i := 0; i < txns && done.Load() < total; i++ {
			tx, err := c.Begin(ctx)
			if err != nil {
				return err
			}
			rows, err := tx.Query(ctx, "SELECT partition, offset, data FROM churn_in WITH (CONSUMER = c, WAIT = '20ms') LIMIT 100")
			if err != nil {
				return err
			}
			var ps []pos
			var data [][]byte
			for rows.Next() {
				var p pos
				var d []byte
				if err := rows.Scan(&p.part, &p.off, &d); err != nil {
					return err
				}
				ps, data = append(ps, p), append(data, d)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if len(data) > 0 {
				b := &pgx.Batch{}
				for _, d := range data {
					b.Queue("INSERT INTO churn_out (data) VALUES ($1)", d)
				}
				if err := tx.SendBatch(ctx, b).Close(); err != nil {
					return err
				}
			}
			if err := tx.Commit(ctx); err != nil {
				if pgCode(err) == "40001" {
					conflicts.Add(1)
					continue
				}
				return err
			}
			mu.Lock()
			for _, p := range ps {
				seen[p]++
			}
			mu.Unlock()
			done.Add(int64(len(ps)))
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 1024)
	run := func(txns int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := worker(txns); err != nil {
				errs <- err
			}
		}()
	}
	run(1 << 30) // one reader stays throughout
	deadline := time.Now().Add(60 * time.Second)
	for round := 0; done.Load() < total; round++ {
		require.True(t, time.Now().Before(deadline), "processed %d of %d", done.Load(), total)
		select {
		case err := <-errs:
			require.NoError(t, err)
		default:
		}
		// Scale up by two short-lived readers, which leave after a few
		// transactions (a rolling restart), and wait for them.
		var round sync.WaitGroup
		for k := 0; k < 2; k++ {
			round.Add(1)
			go func() {
				defer round.Done()
				if err := worker(3 + k); err != nil {
					errs <- err
				}
			}()
		}
		round.Wait()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, conflicts.Load(), "no COMMIT failed with 40001")
	require.Len(t, seen, total)
	for p, n := range seen {
		require.Equal(t, 1, n, "message %v processed %d times", p, n)
	}
	var out int64
	require.NoError(t, setup.QueryRow(ctx, "SELECT count(*) FROM churn_out").Scan(&out))
	require.Equal(t, int64(total), out)
}
