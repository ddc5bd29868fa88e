package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// shMsg is one message handed out by a shared consumer.
type shMsg struct {
	part, off, dc int64
	lockedUntil   time.Time
	group         string
	data          string
}

func (m shMsg) pos() pos { return pos{m.part, m.off} }

// shQuerier is what pgx.Conn and pgx.Tx have in common for a query.
type shQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// shAcquire runs a shared read whose select list is exactly
// partition, offset, delivery_count, locked_until, message_group_id, data.
func shAcquire(ctx context.Context, q shQuerier, topic, opts string, limit int) ([]shMsg, error) {
	sql := fmt.Sprintf("SELECT partition, offset, delivery_count, locked_until, coalesce(message_group_id, ''), convert_from(data, 'UTF8') FROM %s WITH (%s) LIMIT %d", topic, opts, limit)
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	var out []shMsg
	for rows.Next() {
		var m shMsg
		if err := rows.Scan(&m.part, &m.off, &m.dc, &m.lockedUntil, &m.group, &m.data); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func mustAcquire(t *testing.T, c *pgx.Conn, topic, opts string, limit int) []shMsg {
	t.Helper()
	ms, err := shAcquire(context.Background(), c, topic, opts, limit)
	require.NoError(t, err)
	return ms
}

// shAckBatch acknowledges msgs with one DELETE per partition, pipelined in
// one pgx.Batch (as the bench does); it returns the sum of the DELETE tags.
func shAckBatch(ctx context.Context, c *pgx.Conn, topic, consumer string, msgs []shMsg) (int64, error) {
	var parts []int64
	offsets := map[int64][]int64{}
	for _, m := range msgs {
		if _, ok := offsets[m.part]; !ok {
			parts = append(parts, m.part)
		}
		offsets[m.part] = append(offsets[m.part], m.off)
	}
	b := &pgx.Batch{}
	for _, p := range parts {
		b.Queue(fmt.Sprintf("DELETE FROM %s WITH (CONSUMER = %s) WHERE partition = $1 AND offset = ANY($2)", topic, consumer), p, offsets[p])
	}
	br := c.SendBatch(ctx, b)
	var n int64
	for _, p := range parts {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return n, err
		}
		if !strings.HasPrefix(tag.String(), "DELETE ") {
			br.Close()
			return n, fmt.Errorf("partition %d: tag %q", p, tag)
		}
		n += tag.RowsAffected()
	}
	return n, br.Close()
}

type shStat struct {
	part, committed, end, available, acquired, delayed, archived int64
}

func shStats(t *testing.T, c *pgx.Conn, topic, consumer string) []shStat {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT partition, committed_offset, end_offset, available, acquired, delayed, archived FROM sys.consumers WHERE topic = $1 AND consumer = $2 ORDER BY partition", topic, consumer)
	require.NoError(t, err)
	var out []shStat
	for rows.Next() {
		var s shStat
		require.NoError(t, rows.Scan(&s.part, &s.committed, &s.end, &s.available, &s.acquired, &s.delayed, &s.archived))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// noticeLog collects the NOTICEs a connection received.
type noticeLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *noticeLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.msgs
	l.msgs = nil
	return out
}

func connectNotices(t *testing.T, a *app) (*pgx.Conn, *noticeLog) {
	t.Helper()
	cfg, err := pgx.ParseConfig(a.dsn())
	require.NoError(t, err)
	l := &noticeLog{}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		l.mu.Lock()
		l.msgs = append(l.msgs, n.Message)
		l.mu.Unlock()
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, l
}

// TestSharedDrain: 8 workers drain 3000 messages from 4 partitions through
// one shared consumer. Every message is handed out once and acknowledged
// once; no message is held by two workers at a time; at the end the
// consumer is fully drained.
func TestSharedDrain(t *testing.T) {
	a := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC jobs (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT5M'))) WITH (min_active_partitions = 4)")
	const total = 3000
	n, err := setup.CopyFrom(ctx, pgx.Identifier{"jobs"}, []string{"partition", "data"},
		pgx.CopyFromSlice(total, func(i int) ([]any, error) { return []any{int64(i % 4), []byte(fmt.Sprint("m", i))}, nil }))
	require.NoError(t, err)
	require.Equal(t, int64(total), n)

	var (
		mu       sync.Mutex
		holder   = map[pos]int{} // message -> worker holding it now
		acquired = map[pos]int{} // message -> times handed out
		acked    = map[pos]int{}
		problems []string
		tagSum   atomic.Int64
		ackDone  atomic.Int64
	)
	problem := func(f string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(f, args...))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := pgx.Connect(ctx, a.dsn())
			if err != nil {
				problem("worker %d: connect: %v", w, err)
				return
			}
			defer c.Close(context.Background())
			for ackDone.Load() < total {
				ms, err := shAcquire(ctx, c, "jobs", "CONSUMER = w, WAIT = '50ms'", 10)
				if err != nil {
					problem("worker %d: acquire: %v", w, err)
					return
				}
				if len(ms) > 10 {
					problem("worker %d: LIMIT 10 returned %d messages", w, len(ms))
				}
				mu.Lock()
				for _, m := range ms {
					if h, ok := holder[m.pos()]; ok {
						problems = append(problems, fmt.Sprintf("message %v handed to worker %d while worker %d holds it", m.pos(), w, h))
					}
					holder[m.pos()] = w
					acquired[m.pos()]++
					if m.dc != 1 {
						problems = append(problems, fmt.Sprintf("message %v: delivery_count %d, nothing was released", m.pos(), m.dc))
					}
					if want := fmt.Sprint("m", m.off*4+m.part); m.data != want {
						problems = append(problems, fmt.Sprintf("message %v: data %q, want %q", m.pos(), m.data, want))
					}
				}
				mu.Unlock()
				if len(ms) == 0 {
					continue
				}
				n, err := shAckBatch(ctx, c, "jobs", "w", ms)
				if err != nil {
					problem("worker %d: ack: %v", w, err)
					return
				}
				if n != int64(len(ms)) {
					problem("worker %d: acked %d of the %d messages it holds", w, n, len(ms))
				}
				tagSum.Add(n)
				mu.Lock()
				for _, m := range ms {
					delete(holder, m.pos())
					acked[m.pos()]++
				}
				mu.Unlock()
				ackDone.Add(int64(len(ms)))
			}
		}(w)
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	require.Empty(t, problems)
	require.Equal(t, int64(total), tagSum.Load(), "DELETE tags sum to the message count")
	require.Len(t, acquired, total)
	require.Len(t, acked, total)
	for p, k := range acquired {
		require.Equal(t, 1, k, "message %v handed out %d times", p, k)
		require.Equal(t, 1, acked[p], "message %v acked %d times", p, acked[p])
	}
	require.Empty(t, mustAcquire(t, setup, "jobs", "CONSUMER = w", 1000), "nothing left")
	st := shStats(t, setup, "jobs", "w")
	require.Len(t, st, 4)
	for _, s := range st {
		require.Equal(t, int64(total/4), s.end)
		require.Equal(t, s.end, s.committed, "partition %d: committed_offset = end_offset", s.part)
		require.Zero(t, s.available+s.acquired+s.delayed+s.archived, "partition %d: %+v", s.part, s)
	}
}

// TestSharedRedeliveryAfterTimeout: locks die with the connection at once
// and with the clock at the processing timeout; a stale holder's ack is
// refused with a NOTICE.
func TestSharedRedeliveryAfterTimeout(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	ctx := context.Background()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC jobs (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT30S')))")
	exec(t, setup, "INSERT INTO jobs (data) VALUES ('a'), ('b'), ('c'), ('d'), ('e')")

	w1 := connect(t, a)
	ms := mustAcquire(t, w1, "jobs", "CONSUMER = w", 5)
	require.Len(t, ms, 5)
	for _, m := range ms {
		require.Equal(t, int64(1), m.dc)
		require.True(t, m.lockedUntil.Equal(clk.Now().Add(30*time.Second)), "locked_until %v", m.lockedUntil)
	}
	require.Equal(t, []shStat{{0, 0, 5, 0, 5, 0, 0}}, shStats(t, setup, "jobs", "w"))
	require.NoError(t, w1.Close(ctx))
	// The server notices the closed connection asynchronously; the clock
	// does not move, so only the disconnect can release the locks.
	waitFor(t, func() bool { return shStats(t, setup, "jobs", "w")[0].available == 5 })

	w2, notes2 := connectNotices(t, a)
	ms = mustAcquire(t, w2, "jobs", "CONSUMER = w, PROCESSING_TIMEOUT = '60s'", 10)
	require.Len(t, ms, 5, "released on disconnect: available again without the clock moving")
	for _, m := range ms {
		require.Equal(t, int64(2), m.dc)
		require.True(t, m.lockedUntil.Equal(clk.Now().Add(60*time.Second)), "PROCESSING_TIMEOUT sets the lock: %v", m.lockedUntil)
	}

	w3 := connect(t, a)
	require.Empty(t, mustAcquire(t, w3, "jobs", "CONSUMER = w", 10), "w2 holds everything")
	clk.Advance(59 * time.Second)
	require.Empty(t, mustAcquire(t, w3, "jobs", "CONSUMER = w", 10), "locks hold until their deadline")
	clk.Advance(2 * time.Second)
	ms3 := mustAcquire(t, w3, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms3, 5, "expired locks: redelivered")
	for i, m := range ms3 {
		require.Equal(t, int64(3), m.dc)
		require.Equal(t, ms[i].pos(), m.pos())
	}

	// The stale holder acts on expired locks: 0 rows and a NOTICE.
	offs := []int64{0, 1, 2, 3, 4}
	tag := exec(t, w2, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = $1 AND offset = ANY($2)", int64(0), offs)
	require.Equal(t, "DELETE 0", tag.String())
	notes := notes2.take()
	require.Len(t, notes, 1, "%q", notes)
	require.Contains(t, notes[0], "DELETE skipped 5 message(s), lock expired")
	tag = exec(t, w2, "UPDATE jobs WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset IN (0, 1)")
	require.Equal(t, "UPDATE 0", tag.String())
	notes = notes2.take()
	require.Len(t, notes, 1, "%q", notes)
	require.Contains(t, notes[0], "UPDATE skipped 2 message(s), lock expired")
	require.Equal(t, []shStat{{0, 0, 5, 0, 5, 0, 0}}, shStats(t, setup, "jobs", "w"), "w3 still holds all five")

	// The current holder acks.
	tag = exec(t, w3, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = $1 AND offset = ANY($2)", int64(0), offs)
	require.Equal(t, "DELETE 5", tag.String())
	require.Equal(t, []shStat{{0, 5, 5, 0, 0, 0, 0}}, shStats(t, setup, "jobs", "w"))
	tag = exec(t, w2, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = 0")
	require.Equal(t, "DELETE 0", tag.String())
	notes = notes2.take()
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "already acknowledged or archived")
}

// TestSharedMaxAttemptsAndDLQ: after max_processing_attempts a failure
// moves the message to the dead-letter topic; a missing dead-letter topic
// sends it back to the queue until it exists. Policy 'delete' archives.
func TestSharedMaxAttemptsAndDLQ(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	ctx := context.Background()
	c := connect(t, a)
	exec(t, c, `CREATE TOPIC jobs (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT30S'),
		max_processing_attempts = 2, dead_letter_policy = 'move', dead_letter_queue = 'jobs_dlq'))`)
	exec(t, c, `INSERT INTO jobs (data, attrs, message_group_id) VALUES ('poison', '{"k":"v"}', 'g1')`)
	release := func() {
		t.Helper()
		tag := exec(t, c, "UPDATE jobs WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset = 0")
		require.Equal(t, "UPDATE 1", tag.String())
	}
	for attempt := int64(1); attempt <= 2; attempt++ {
		ms := mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
		require.Len(t, ms, 1)
		require.Equal(t, attempt, ms[0].dc)
		release()
	}
	// Attempts used up, but the DLQ does not exist: back to the queue.
	require.Equal(t, []shStat{{0, 0, 1, 1, 0, 0, 0}}, shStats(t, c, "jobs", "w"))
	ms := mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, int64(3), ms[0].dc)
	// An expired lock is a failure too: still no DLQ, back again.
	clk.Advance(31 * time.Second)
	require.Equal(t, []shStat{{0, 0, 1, 1, 0, 0, 0}}, shStats(t, c, "jobs", "w"))

	exec(t, c, "CREATE TOPIC jobs_dlq")
	ms = mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, int64(4), ms[0].dc)
	release() // the next failure moves it
	// archived counts the window above committed_offset (as in
	// testdata/shared.test): the moved message is below it now.
	require.Equal(t, []shStat{{0, 1, 1, 0, 0, 0, 0}}, shStats(t, c, "jobs", "w"))
	var data, group, src, srcPart, srcOff, attempts, k string
	require.NoError(t, c.QueryRow(ctx, `SELECT convert_from(data, 'UTF8'), message_group_id, attrs->>'dlq_source_topic', attrs->>'dlq_source_partition',
		attrs->>'dlq_source_offset', attrs->>'dlq_attempts', attrs->>'k' FROM jobs_dlq`).Scan(&data, &group, &src, &srcPart, &srcOff, &attempts, &k))
	require.Equal(t, []string{"poison", "g1", "jobs", "0", "0", "4", "v"}, []string{data, group, src, srcPart, srcOff, attempts, k})
	var cnt int64
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM jobs_dlq").Scan(&cnt))
	require.Equal(t, int64(1), cnt)
	clk.Advance(time.Hour)
	require.Empty(t, mustAcquire(t, c, "jobs", "CONSUMER = w", 10), "a dead-lettered message is never handed out again")
	tag := exec(t, c, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = 0")
	require.Equal(t, "DELETE 0", tag.String())

	// A reject moves at once, whatever the attempt count.
	exec(t, c, "INSERT INTO jobs (data) VALUES ('bad')")
	ms = mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, int64(1), ms[0].dc)
	tag = exec(t, c, "UPDATE jobs WITH (CONSUMER = w) SET state = 'rejected' WHERE partition = 0 AND offset = 1")
	require.Equal(t, "UPDATE 1", tag.String())
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM jobs_dlq WHERE attrs->>'dlq_source_offset' = '1' AND attrs->>'dlq_attempts' = '1'").Scan(&cnt))
	require.Equal(t, int64(1), cnt)
	require.Equal(t, []shStat{{0, 2, 2, 0, 0, 0, 0}}, shStats(t, c, "jobs", "w"))

	// Policy 'delete': the failure after the last attempt archives; here
	// the failures are lock expiries.
	exec(t, c, `CREATE TOPIC d (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT30S'),
		max_processing_attempts = 2, dead_letter_policy = 'delete'))`)
	exec(t, c, "INSERT INTO d (data) VALUES ('hold'), ('x'), ('y')")
	ms = mustAcquire(t, c, "d", "CONSUMER = w, PROCESSING_TIMEOUT = '1h'", 1)
	require.Len(t, ms, 1)
	require.Equal(t, pos{0, 0}, ms[0].pos())
	for attempt := int64(1); attempt <= 2; attempt++ {
		ms := mustAcquire(t, c, "d", "CONSUMER = w", 1)
		require.Len(t, ms, 1)
		require.Equal(t, pos{0, 1}, ms[0].pos())
		require.Equal(t, attempt, ms[0].dc)
		clk.Advance(31 * time.Second)
	}
	require.Equal(t, []shStat{{0, 0, 3, 1, 1, 0, 1}}, shStats(t, c, "d", "w"), "offset 1 archived, 2 available, 0 held")
	ms = mustAcquire(t, c, "d", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, pos{0, 2}, ms[0].pos())
	tag = exec(t, c, "DELETE FROM d WITH (CONSUMER = w) WHERE partition = 0 AND offset IN (0, 1, 2)")
	require.Equal(t, "DELETE 2", tag.String(), "offset 1 is archived")
	require.Equal(t, []shStat{{0, 3, 3, 0, 0, 0, 0}}, shStats(t, c, "d", "w"))
}

// TestSharedOrdering: with keep_messages_order, no two workers hold
// messages of one group at once, and each group is acknowledged in offset
// order.
func TestSharedOrdering(t *testing.T) {
	a := startTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	setup := connect(t, a)
	exec(t, setup, "CREATE TOPIC q (CONSUMER w WITH (type = 'shared', keep_messages_order = true, default_processing_timeout = Interval('PT5M')))")
	const groups, per = 5, 20
	const total = groups * per
	_, err := setup.CopyFrom(ctx, pgx.Identifier{"q"}, []string{"partition", "message_group_id", "data"},
		pgx.CopyFromSlice(total, func(i int) ([]any, error) {
			return []any{int64(0), fmt.Sprint("g", i%groups), []byte(fmt.Sprint(i))}, nil
		}))
	require.NoError(t, err)

	// Deterministically first: one worker holding the head of every group
	// leaves nothing for another.
	exec(t, setup, "CREATE TOPIC q1 (CONSUMER w WITH (type = 'shared', keep_messages_order = true))")
	exec(t, setup, "INSERT INTO q1 (data, message_group_id) VALUES ('a1', 'a'), ('b1', 'b'), ('a2', 'a'), ('b2', 'b'), ('n1', NULL)")
	w1, w2 := connect(t, a), connect(t, a)
	ms := mustAcquire(t, w1, "q1", "CONSUMER = w", 10)
	require.Equal(t, []string{"a1", "b1", "n1"}, []string{ms[0].data, ms[1].data, ms[2].data}, "one message per group; ungrouped ones are free")
	require.Len(t, ms, 3)
	require.Empty(t, mustAcquire(t, w2, "q1", "CONSUMER = w", 10), "a2 and b2 wait for their group")
	exec(t, w1, "DELETE FROM q1 WITH (CONSUMER = w) WHERE partition = 0 AND offset = 1")
	ms = mustAcquire(t, w2, "q1", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, "b2", ms[0].data)
	exec(t, w1, "UPDATE q1 WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset = 0")
	ms = mustAcquire(t, w2, "q1", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, "a1", ms[0].data, "a released message keeps its place at the head of its group")
	require.Equal(t, int64(2), ms[0].dc)

	var (
		perWorker [4]atomic.Int64
		mu        sync.Mutex
		holding   = map[string]int{} // group -> worker holding a message of it
		ackOrder  = map[string][]int64{}
		problems  []string
		done      atomic.Int64
	)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := pgx.Connect(ctx, a.dsn())
			if err != nil {
				mu.Lock()
				problems = append(problems, err.Error())
				mu.Unlock()
				return
			}
			defer c.Close(context.Background())
			for done.Load() < total {
				ms, err := shAcquire(ctx, c, "q", "CONSUMER = w, WAIT = '20ms'", 5)
				if err != nil {
					mu.Lock()
					problems = append(problems, err.Error())
					mu.Unlock()
					return
				}
				if len(ms) == 0 {
					continue
				}
				mu.Lock()
				mine := map[string]bool{}
				for _, m := range ms {
					if mine[m.group] {
						problems = append(problems, fmt.Sprintf("worker %d got two messages of group %s in one acquire", w, m.group))
					}
					mine[m.group] = true
					if h, ok := holding[m.group]; ok {
						problems = append(problems, fmt.Sprintf("worker %d got %v of group %s while worker %d holds one", w, m.pos(), m.group, h))
					}
					holding[m.group] = w
				}
				mu.Unlock()
				// Processing happens here; the messages are acknowledged
				// one by one in random order, so that groups free up while
				// this worker still holds others. Before an ack is sent,
				// its group stops counting as held and the delivery is
				// recorded: once the ack is sent the server may hand the
				// group's next message to another worker, whose record
				// must come after this one.
				for _, i := range rand.Perm(len(ms)) {
					m := ms[i]
					mu.Lock()
					delete(holding, m.group)
					ackOrder[m.group] = append(ackOrder[m.group], m.off)
					mu.Unlock()
					n, err := shAckBatch(ctx, c, "q", "w", []shMsg{m})
					if err != nil || n != 1 {
						mu.Lock()
						problems = append(problems, fmt.Sprintf("worker %d: ack of %v: %d, %v", w, m.pos(), n, err))
						mu.Unlock()
						return
					}
				}
				done.Add(int64(len(ms)))
				perWorker[w].Add(int64(len(ms)))
			}
		}(w)
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	require.Empty(t, problems)
	var dist []int64
	for i := range perWorker {
		dist = append(dist, perWorker[i].Load())
	}
	t.Logf("messages per worker: %v", dist)
	require.Len(t, ackOrder, groups)
	for g := 0; g < groups; g++ {
		var want []int64
		for i := g; i < total; i += groups {
			want = append(want, int64(i))
		}
		require.Equal(t, want, ackOrder[fmt.Sprint("g", g)], "group g%d acknowledged in offset order", g)
	}
	require.Equal(t, []shStat{{0, total, total, 0, 0, 0, 0}}, shStats(t, setup, "q", "w"))
}

// TestSharedDelay: per-message delay and the consumer's
// receive_message_delay hold messages back until their time.
func TestSharedDelay(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC jobs (CONSUMER w WITH (type = 'shared'))")
	exec(t, c, "INSERT INTO jobs (data, delay) VALUES ('later', Interval('PT10M'))")
	exec(t, c, "INSERT INTO jobs (data) VALUES ('now')")
	ms := mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, "now", ms[0].data)
	exec(t, c, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = 1")
	require.Equal(t, []shStat{{0, 0, 2, 0, 0, 1, 0}}, shStats(t, c, "jobs", "w"))
	clk.Advance(10*time.Minute - time.Second)
	require.Empty(t, mustAcquire(t, c, "jobs", "CONSUMER = w", 10), "not before written_at + delay")
	require.Equal(t, int64(1), shStats(t, c, "jobs", "w")[0].delayed)
	clk.Advance(time.Second)
	ms = mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, "later", ms[0].data)
	require.Equal(t, int64(1), ms[0].dc)
	exec(t, c, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = 0")
	require.Equal(t, []shStat{{0, 2, 2, 0, 0, 0, 0}}, shStats(t, c, "jobs", "w"))

	// Consumer-level delay; a per-message delay beyond it wins.
	exec(t, c, "CREATE TOPIC slow (CONSUMER w WITH (type = 'shared', receive_message_delay = Interval('PT1M')))")
	exec(t, c, "INSERT INTO slow (data) VALUES ('a')")
	exec(t, c, "INSERT INTO slow (data, delay) VALUES ('b', Interval('PT5M'))")
	require.Empty(t, mustAcquire(t, c, "slow", "CONSUMER = w", 10))
	require.Equal(t, []shStat{{0, 0, 2, 0, 0, 2, 0}}, shStats(t, c, "slow", "w"))
	clk.Advance(time.Minute)
	ms = mustAcquire(t, c, "slow", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, "a", ms[0].data)
	exec(t, c, "DELETE FROM slow WITH (CONSUMER = w) WHERE partition = 0 AND offset = 0")
	require.Equal(t, []shStat{{0, 1, 2, 0, 0, 1, 0}}, shStats(t, c, "slow", "w"))
	clk.Advance(4*time.Minute - time.Second)
	require.Empty(t, mustAcquire(t, c, "slow", "CONSUMER = w", 10))
	clk.Advance(time.Second)
	ms = mustAcquire(t, c, "slow", "CONSUMER = w", 10)
	require.Len(t, ms, 1)
	require.Equal(t, "b", ms[0].data)
}

// TestSharedTransactions: what a transaction acquired is acknowledged at
// COMMIT with its writes; ROLLBACK releases it; an expired lock fails the
// COMMIT with 40001 and publishes nothing.
func TestSharedTransactions(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := startClockServer(t, clk)
	ctx := context.Background()
	c, obs := connect(t, a), connect(t, a)
	exec(t, c, "CREATE TOPIC jobs (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT30S')))")
	exec(t, c, "CREATE TOPIC results")
	exec(t, c, "INSERT INTO jobs (data) VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f'), ('g')")
	count := func(topic string) int64 {
		var n int64
		require.NoError(t, obs.QueryRow(ctx, "SELECT count(*) FROM "+topic).Scan(&n))
		return n
	}

	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	ms, err := shAcquire(ctx, tx, "jobs", "CONSUMER = w", 3)
	require.NoError(t, err)
	require.Len(t, ms, 3)
	for _, m := range ms {
		_, err := tx.Exec(ctx, "INSERT INTO results (data) VALUES ($1)", []byte("done "+m.data))
		require.NoError(t, err)
	}
	require.Zero(t, count("results"), "staged until COMMIT")
	require.Equal(t, []shStat{{0, 0, 7, 4, 3, 0, 0}}, shStats(t, obs, "jobs", "w"))
	// Another session cannot take them meanwhile.
	other := mustAcquire(t, obs, "jobs", "CONSUMER = w", 100)
	require.Len(t, other, 4)
	for _, m := range other {
		require.GreaterOrEqual(t, m.off, int64(3))
	}
	exec(t, obs, "UPDATE jobs WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset IN (3, 4, 5, 6)")
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, int64(3), count("results"))
	require.Equal(t, []shStat{{0, 3, 7, 4, 0, 0, 0}}, shStats(t, obs, "jobs", "w"), "acknowledged at COMMIT")

	// ROLLBACK releases.
	tx, err = c.Begin(ctx)
	require.NoError(t, err)
	ms, err = shAcquire(ctx, tx, "jobs", "CONSUMER = w", 2)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, []int64{3, 4}, []int64{ms[0].off, ms[1].off})
	require.Equal(t, int64(2), ms[0].dc, "offset 3 was released once by obs")
	_, err = tx.Exec(ctx, "INSERT INTO results (data) VALUES ('rolled back')")
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	require.Equal(t, int64(3), count("results"))
	require.Equal(t, []shStat{{0, 3, 7, 4, 0, 0, 0}}, shStats(t, obs, "jobs", "w"))
	ms = mustAcquire(t, obs, "jobs", "CONSUMER = w", 2)
	require.Len(t, ms, 2)
	require.Equal(t, []int64{3, 4}, []int64{ms[0].off, ms[1].off})
	require.Equal(t, int64(3), ms[0].dc)
	exec(t, obs, "UPDATE jobs WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset IN (3, 4)")

	// An expired lock fails the COMMIT with 40001; nothing is published.
	tx, err = c.Begin(ctx)
	require.NoError(t, err)
	ms, err = shAcquire(ctx, tx, "jobs", "CONSUMER = w", 1)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	_, err = tx.Exec(ctx, "INSERT INTO results (data) VALUES ('too late')")
	require.NoError(t, err)
	clk.Advance(31 * time.Second)
	err = tx.Commit(ctx)
	require.Equal(t, "40001", pgCode(err), "commit after the lock expired: %v", err)
	require.Equal(t, int64(3), count("results"), "the failed transaction published nothing")
	st := shStats(t, obs, "jobs", "w")
	require.Equal(t, []shStat{{0, 3, 7, 4, 0, 0, 0}}, st, "the expired message is back in the queue, not acked")
	ms = mustAcquire(t, c, "jobs", "CONSUMER = w", 10)
	require.Len(t, ms, 4, "the connection is usable after the failed COMMIT")
	var res []string
	rows, err := obs.Query(ctx, "SELECT convert_from(data, 'UTF8') FROM results")
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		res = append(res, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"done a", "done b", "done c"}, res)
	exec(t, c, "UPDATE jobs WITH (CONSUMER = w) SET locked_until = NULL WHERE partition = 0 AND offset IN (3, 4, 5, 6)")

	// An expired lock taken over by another session: the COMMIT fails and
	// does not acknowledge the new holder's message.
	tx, err = c.Begin(ctx)
	require.NoError(t, err)
	ms, err = shAcquire(ctx, tx, "jobs", "CONSUMER = w", 1)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	_, err = tx.Exec(ctx, "INSERT INTO results (data) VALUES ('too late')")
	require.NoError(t, err)
	clk.Advance(31 * time.Second)
	taken := mustAcquire(t, obs, "jobs", "CONSUMER = w", 1)
	require.Len(t, taken, 1)
	require.Equal(t, ms[0].pos(), taken[0].pos())
	require.Equal(t, "40001", pgCode(tx.Commit(ctx)))
	require.Equal(t, int64(3), count("results"))
	tag := exec(t, obs, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = $1", taken[0].off)
	require.Equal(t, "DELETE 1", tag.String(), "the new holder still holds it")

	// A DELETE inside a block of a message another session holds cannot
	// acknowledge it: it acts at once, reports 0 rows (and a NOTICE), and
	// the block commits without touching it.
	held := mustAcquire(t, obs, "jobs", "CONSUMER = w", 1)
	require.Len(t, held, 1)
	tx, err = c.Begin(ctx)
	require.NoError(t, err)
	tag, err = tx.Exec(ctx, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = $1", held[0].off)
	require.NoError(t, err)
	require.Equal(t, "DELETE 0", tag.String())
	require.NoError(t, tx.Commit(ctx))
	tag = exec(t, obs, "DELETE FROM jobs WITH (CONSUMER = w) WHERE partition = 0 AND offset = $1", held[0].off)
	require.Equal(t, "DELETE 1", tag.String(), "still held by obs")
	require.Equal(t, []shStat{{0, 5, 7, 2, 0, 0, 0}}, shStats(t, obs, "jobs", "w"))

	// A connection lost inside a block releases what the block acquired.
	lost := connect(t, a)
	tx, err = lost.Begin(ctx)
	require.NoError(t, err)
	ms, err = shAcquire(ctx, tx, "jobs", "CONSUMER = w", 10)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, []shStat{{0, 5, 7, 0, 2, 0, 0}}, shStats(t, obs, "jobs", "w"))
	require.NoError(t, lost.Close(ctx))
	waitFor(t, func() bool { return shStats(t, obs, "jobs", "w")[0].available == 2 })
	require.Equal(t, []shStat{{0, 5, 7, 2, 0, 0, 0}}, shStats(t, obs, "jobs", "w"))
}

// TestSharedDeleteInBlockOutcomes: inside a block, a DELETE naming messages
// the block did not acquire reports the same per-message outcomes as in
// autocommit, and does not poison the COMMIT (a retried ack of an already
// acknowledged message is harmless).
func TestSharedDeleteInBlockOutcomes(t *testing.T) {
	a := startTestServer(t)
	c := connect(t, a)
	ctx := context.Background()
	exec(t, c, "CREATE TOPIC q (CONSUMER w WITH (type = 'shared'))")
	exec(t, c, "INSERT INTO q (data) VALUES ('a'), ('b')")
	ms := mustAcquire(t, c, "q", "CONSUMER = w", 1)
	require.Len(t, ms, 1)
	require.Equal(t, "DELETE 1", exec(t, c, "DELETE FROM q WITH (CONSUMER = w) WHERE partition = 0 AND offset = 0").String())
	tx, err := c.Begin(ctx)
	require.NoError(t, err)
	ms, err = shAcquire(ctx, tx, "q", "CONSUMER = w", 1)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	tag, err := tx.Exec(ctx, "DELETE FROM q WITH (CONSUMER = w) WHERE partition = 0 AND offset IN (0, 1, 7)")
	require.NoError(t, err)
	require.Equal(t, "DELETE 1", tag.String(), "only offset 1, which the block holds")
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, []shStat{{0, 2, 2, 0, 0, 0, 0}}, shStats(t, c, "q", "w"))
}
