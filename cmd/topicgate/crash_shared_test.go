package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// crashSharedLedger is what the workers of a shared consumer were told,
// across kill cycles.
type crashSharedLedger struct {
	topic, consumer string
	mu              sync.Mutex
	// confirmed: acks the server confirmed (DELETE tag, or COMMIT OK), with
	// the cycle they were confirmed in.
	confirmed   map[pos]int
	by          map[pos]string    // who confirmed it, when
	confirmedAt map[pos]time.Time // when
	// stale counts messages handed out with a lock that had ended before
	// another holder's ack of them was confirmed.
	stale int
	// uncertain: an ack (DELETE or COMMIT) was sent and failed because the
	// server died: the message may or may not be acknowledged.
	uncertain map[pos]bool
	// unacked: acquired but no ack was sent before the server died: it
	// must be handed out again after the restart.
	unacked map[pos]bool
	// holder: who holds a message in the current cycle (reset at a kill).
	holder map[pos]int
	// handed: times a message was handed out in the current cycle (since
	// its last release); until: when its last lock ends (the
	// locked_until the server answered with).
	handed map[pos]int
	until  map[pos]time.Time
	// lockTimeout, when set, is the consumer's processing timeout: a lock
	// may expire while its holder still works (the cluster may be without
	// a leader for longer while its holder waits to acknowledge), and the
	// message be handed out again legitimately once its locked_until has
	// passed. Zero: locks outlive the test.
	lockTimeout time.Duration
	// abandoned counts messages held by a worker when it lost its
	// connection (abandon).
	abandoned int
	problems  []string
}

func newCrashSharedLedger(topic, consumer string) *crashSharedLedger {
	return &crashSharedLedger{topic: topic, consumer: consumer, confirmed: map[pos]int{}, by: map[pos]string{}, confirmedAt: map[pos]time.Time{}, uncertain: map[pos]bool{}, unacked: map[pos]bool{},
		holder: map[pos]int{}, handed: map[pos]int{}, until: map[pos]time.Time{}}
}

// abandon: worker w's connection is gone (its server, or the worker,
// closed it). What it held is released when its session ends, or when
// its lock expires if it could not be: it may be handed out again, and
// what had no ack in flight must be.
func (l *crashSharedLedger) abandon(w int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, h := range l.holder {
		if h != w {
			continue
		}
		delete(l.holder, p)
		delete(l.handed, p)
		l.abandoned++
		if !l.uncertain[p] {
			l.unacked[p] = true
		}
	}
}

// violation records a broken promise of the shared consumer.
func (l *crashSharedLedger) violation(msg string) {
	l.problems = append(l.problems, msg)
}

func (l *crashSharedLedger) problem(f string, args ...any) {
	l.mu.Lock()
	l.problems = append(l.problems, fmt.Sprintf(f, args...))
	l.mu.Unlock()
}

// got records messages handed to worker w and checks they may be.
func (l *crashSharedLedger) got(cycle, w int, ms []shMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range ms {
		p := m.pos()
		if want := fmt.Sprintf("%d/%d", m.part, m.off); m.data != want {
			l.problems = append(l.problems, fmt.Sprintf("cycle %d: message %v has data %q, want %q", cycle, p, m.data, want))
		}
		if at, ok := l.confirmedAt[p]; ok && l.lockTimeout > 0 && !m.lockedUntil.After(at) {
			// A late answer: this lock had ended before the ack of another
			// holder was confirmed (the server drops such locks when it
			// sees them expired, but rows on their way may cross the
			// deadline). Not a lost ack; the ack of this one will fail.
			l.stale++
			continue
		}
		if c, ok := l.confirmed[p]; ok {
			l.violation(fmt.Sprintf("cycle %d: message %v handed to worker %d again at %s (delivery count %d), its ack was confirmed in cycle %d (%s)",
				cycle, p, w, time.Now().Format("15:04:05.000"), m.dc, c, l.by[p]))
		}
		if until, ok := l.until[p]; ok && l.lockTimeout > 0 && !time.Now().Before(until) {
			// Its last lock has expired: handing it out again is the
			// at-least-once redelivery of a processing timeout.
			delete(l.holder, p)
			l.handed[p] = 0
		}
		if h, ok := l.holder[p]; ok {
			l.violation(fmt.Sprintf("cycle %d: message %v handed to worker %d while worker %d holds it, locked until %v (now %v)",
				cycle, p, w, h, l.until[p].Format("15:04:05.000"), time.Now().Format("15:04:05.000")))
		}
		if l.handed[p] > 0 {
			l.violation(fmt.Sprintf("cycle %d: message %v handed out %d times in one server lifetime without any release", cycle, p, l.handed[p]+1))
		}
		l.handed[p]++
		l.until[p] = m.lockedUntil
		l.holder[p] = w
		delete(l.uncertain, p) // it was not acknowledged after all
		delete(l.unacked, p)
	}
}

// lastNotice holds the last NOTICE each connection of the crash tests
// received (by *pgconn.PgConn), so that an acknowledgement whose tag
// counts fewer messages than it named can report why the server skipped
// them (reportOutcomes: not held, lock expired, already finished). It
// keeps an entry per connection that received a notice, for the test
// binary's life: the crash tests open some hundreds.
var lastNotice sync.Map

// connectNoting is pgx.Connect with the connection's notices kept in
// lastNotice.
func connectNoting(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.OnNotice = func(pc *pgconn.PgConn, n *pgconn.Notice) { lastNotice.Store(pc, n.Message) }
	return pgx.ConnectConfig(ctx, cfg)
}

// noticeOf is the last NOTICE c received, or "none".
func noticeOf(c *pgx.Conn) string {
	if v, ok := lastNotice.Load(c.PgConn()); ok {
		return v.(string)
	}
	return "none"
}

// expiredBy reports whether a lock of ms had ended at now.
func expiredBy(ms []shMsg, now time.Time) bool {
	for _, m := range ms {
		if !now.Before(m.lockedUntil) {
			return true
		}
	}
	return false
}

func (l *crashSharedLedger) confirm(cycle int, ms []shMsg, by string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range ms {
		l.confirmedAt[m.pos()] = time.Now()
		l.by[m.pos()] = fmt.Sprintf("%s at %s, locked until %s", by, time.Now().Format("15:04:05.000"), m.lockedUntil.Format("15:04:05.000"))
		if c, ok := l.confirmed[m.pos()]; ok {
			l.violation(fmt.Sprintf("cycle %d: message %v acked (confirmed) twice, first in cycle %d", cycle, m.pos(), c))
		}
		l.confirmed[m.pos()] = cycle
		delete(l.holder, m.pos())
	}
}

// reached reports whether n acks were confirmed.
func (l *crashSharedLedger) reached(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.confirmed) >= n
}

func (l *crashSharedLedger) mark(set map[pos]bool, ms []shMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range ms {
		set[m.pos()] = true
	}
}

// TestCrashSharedAcks: workers acquire and acknowledge messages of a shared
// consumer (half with autocommit DELETEs, half by COMMITting transactions
// that acquired them) while the server is SIGKILLed and restarted. No
// confirmed ack is ever lost (the message is never handed out again),
// messages acquired but not acknowledged come back, and in the end every
// message was acknowledged exactly once.
func TestCrashSharedAcks(t *testing.T) {
	cycles := 3
	if testing.Short() {
		cycles = 1
	}
	const parts, perPart = 4, 5000
	const total = parts * perPart
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kill/restart cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, 0x5ba7ed))

	s := newCrashServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s.start()
	c := s.connect(ctx)
	if _, err := c.Exec(ctx, "CREATE TOPIC t (CONSUMER w WITH (type = 'shared', default_processing_timeout = Interval('PT5M'))) WITH (min_active_partitions = 4)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"partition", "data"},
		pgx.CopyFromSlice(total, func(i int) ([]any, error) {
			return []any{int64(i % parts), []byte(fmt.Sprintf("%d/%d", i%parts, i/parts))}, nil
		})); err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	l := newCrashSharedLedger("t", "w")
	for cycle := 1; cycle <= cycles; cycle++ {
		l.holder, l.handed = map[pos]int{}, map[pos]int{}
		loadMs := 300 + rng.IntN(301)
		before := len(l.confirmed)
		// The kill comes after the load time, or earlier once this cycle's
		// share of the messages is confirmed, so that every cycle (and the
		// final drain) still has messages to work on.
		ran := crashSharedLoad(t, s, l, cycle, rng.Uint64(), time.Duration(loadMs)*time.Millisecond, cycle*total/(cycles+1))
		t.Logf("cycle %d: SIGKILL after %v of load (planned %d ms), %d acks confirmed (%d in total), %d acks uncertain, %d acquired without an ack at SIGKILL",
			cycle, ran.Round(time.Millisecond), loadMs, len(l.confirmed)-before, len(l.confirmed), len(l.uncertain), len(l.unacked))
		for _, p := range l.problems {
			t.Error(p)
		}
		if t.Failed() {
			return
		}
		s.start()
		vc := s.connect(ctx)
		crashSharedCheckStats(t, vc, l, parts, perPart, false, false)
		vc.Close(ctx)
		if t.Failed() {
			return
		}
	}

	// Drain what is left after the last restart.
	l.holder, l.handed = map[pos]int{}, map[pos]int{}
	dc := s.connect(ctx)
	defer dc.Close(ctx)
	drained := crashSharedDrain(ctx, t, dc, l, cycles+1, 0)
	crashSharedExactlyOnce(t, l, drained, parts, perPart)
	crashSharedCheckStats(t, dc, l, parts, perPart, true, false)

	// A clean restart keeps it drained.
	if err := s.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	s.start()
	fc := s.connect(ctx)
	defer fc.Close(ctx)
	ms, err := shAcquire(ctx, fc, "t", "CONSUMER = w", 1000)
	if err != nil || len(ms) != 0 {
		t.Errorf("after a clean restart: acquired %d messages, err %v; want none", len(ms), err)
	}
	crashSharedCheckStats(t, fc, l, parts, perPart, true, false)
}

// crashSharedDrain acquires and acknowledges through c what l's consumer
// still hands out, until it hands out nothing (when wait is 0) or, within
// wait, until every partition's committed_offset is at its end (locks of
// dead sessions expire meanwhile). Every message goes through l.got, so
// one whose ack was confirmed fails the test. It returns what it drained.
func crashSharedDrain(ctx context.Context, t *testing.T, c *pgx.Conn, l *crashSharedLedger, cycle int, wait time.Duration) map[pos]bool {
	t.Helper()
	drained := map[pos]bool{}
	opts := "CONSUMER = " + l.consumer
	if wait > 0 {
		opts += ", WAIT = '200ms'"
	}
	deadline := time.Now().Add(wait)
	for {
		ms, err := shAcquire(ctx, c, l.topic, opts, 1000)
		if err != nil {
			t.Fatalf("drain: acquire: %v", err)
		}
		if len(ms) == 0 {
			if wait == 0 || crashSharedFinished(t, c, l) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("drain: after %v, messages are still unfinished: %+v", wait, shStats(t, c, l.topic, l.consumer))
				break
			}
			continue
		}
		l.got(cycle, -1, ms)
		n, err := shAckBatch(ctx, c, l.topic, l.consumer, ms)
		if err != nil {
			t.Fatalf("drain: ack: %v", err)
		}
		if n != int64(len(ms)) {
			t.Errorf("drain: %d of %d messages acked", n, len(ms))
		}
		l.mu.Lock()
		for _, m := range ms {
			if drained[m.pos()] {
				t.Errorf("drain: message %v drained twice", m.pos())
			}
			drained[m.pos()] = true
			delete(l.holder, m.pos())
		}
		l.mu.Unlock()
	}
	for _, p := range l.problems {
		t.Error(p)
	}
	t.Logf("drained %d messages; %d confirmed acks; %d uncertain acks never handed out again (acknowledged before the failure)",
		len(drained), len(l.confirmed), len(l.uncertain))
	return drained
}

// crashSharedFinished reports whether every message of l's consumer is
// finished (acknowledged).
func crashSharedFinished(t *testing.T, c *pgx.Conn, l *crashSharedLedger) bool {
	for _, s := range shStats(t, c, l.topic, l.consumer) {
		if s.committed != s.end {
			return false
		}
	}
	return true
}

// crashSharedExactlyOnce checks, after crashSharedDrain, that each of the
// parts*perPart messages was acknowledged exactly once: confirmed,
// drained, or uncertain (acked without confirmation, never seen again),
// and that every message acquired without an ack before a failure was
// handed out again.
func crashSharedExactlyOnce(t *testing.T, l *crashSharedLedger, drained map[pos]bool, parts, perPart int64) {
	t.Helper()
	for p := range l.unacked {
		t.Errorf("message %v was acquired but not acknowledged before a failure, and was never handed out again", p)
	}
	// A message whose lock expired while its holder's ack was in flight
	// (got allows handing it out again then) may be confirmed by the next
	// holder and then marked uncertain when the first ack fails: the
	// store refuses an ack of a lock it no longer holds, so it counts as
	// confirmed once.
	for p := range l.uncertain {
		if _, ok := l.confirmed[p]; ok {
			delete(l.uncertain, p)
		}
	}
	var missing []string
	for pi := int64(0); pi < parts; pi++ {
		for off := int64(0); off < perPart; off++ {
			p := pos{pi, off}
			_, conf := l.confirmed[p]
			k := 0
			for _, in := range []bool{conf, drained[p], l.uncertain[p]} {
				if in {
					k++
				}
			}
			switch {
			case k == 0:
				missing = append(missing, fmt.Sprint(p))
			case k > 1:
				t.Errorf("message %v: confirmed %v, drained %v, uncertain %v", p, conf, drained[p], l.uncertain[p])
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d messages neither acked nor drained: %s", len(missing), strings.Join(missing[:min(len(missing), 20)], " "))
	}
	if got := len(l.confirmed) + len(drained) + len(l.uncertain); got != int(parts*perPart) {
		t.Errorf("confirmed %d + drained %d + uncertain %d = %d, want %d", len(l.confirmed), len(drained), len(l.uncertain), got, parts*perPart)
	}
}

// crashSharedCheckStats checks sys.consumers after a restart: every
// offset below committed_offset was acknowledged by a worker (confirmed or
// uncertain), nothing is delayed or archived, and (unless locksSurvive:
// the cluster store keeps a dead gateway's locks until their deadline) no
// lock survived. drained: the consumer must be at the end.
func crashSharedCheckStats(t *testing.T, c *pgx.Conn, l *crashSharedLedger, parts, perPart int64, drained, locksSurvive bool) {
	t.Helper()
	st := shStats(t, c, l.topic, l.consumer)
	if int64(len(st)) != parts {
		t.Fatalf("sys.consumers: %d partitions, want %d", len(st), parts)
	}
	var committed []int64
	for _, s := range st {
		committed = append(committed, s.committed)
		if s.end != perPart {
			t.Errorf("partition %d: end_offset %d, want %d", s.part, s.end, perPart)
		}
		if (s.acquired != 0 && !locksSurvive) || s.delayed != 0 || s.archived != 0 {
			t.Errorf("partition %d after restart: %+v (locks do not survive a restart; nothing is delayed or archived)", s.part, s)
		}
		if drained && (s.committed != s.end || s.available != 0 || s.acquired != 0) {
			t.Errorf("partition %d not drained: %+v", s.part, s)
		}
		var lost []int64
		l.mu.Lock()
		for off := int64(0); off < s.committed; off++ {
			p := pos{s.part, off}
			if _, ok := l.confirmed[p]; !ok && !l.uncertain[p] && !drained {
				lost = append(lost, off)
			}
		}
		l.mu.Unlock()
		if len(lost) > 0 {
			sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
			t.Errorf("partition %d: committed_offset %d, but offsets %s below it were never acknowledged", s.part, s.committed, crashSeqRanges(lost))
		}
	}
	t.Logf("sys.consumers committed offsets: %v", committed)
}

// crashSharedLoad runs 4 workers (crashSharedStep; 0, 1: autocommit
// DELETE acks; 2, 3: transactions) until the server is SIGKILLed after
// load.
func crashSharedLoad(t *testing.T, s *crashServer, l *crashSharedLedger, cycle int, seed uint64, load time.Duration, maxConfirmed int) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var killed atomic.Bool
	var wg sync.WaitGroup
	conns := make([]*pgx.Conn, 4)
	for w := range conns {
		conns[w] = s.connect(ctx)
	}
	// unexpected reports an error unless the server was killed (and the
	// error is not a server-sent one).
	unexpected := func(w int, what string, err error) {
		var pe *pgconn.PgError
		if !killed.Load() || errors.As(err, &pe) {
			l.problem("cycle %d worker %d: %s: unexpected error (killed=%v): %v", cycle, w, what, killed.Load(), err)
		}
	}
	for w := range conns {
		wg.Add(1)
		go func(w int, c *pgx.Conn, rng *rand.Rand) {
			defer wg.Done()
			defer c.Close(context.Background())
			for !killed.Load() {
				if what, err := crashSharedStep(ctx, c, l, cycle, w, w >= 2, rng); err != nil {
					unexpected(w, what, err)
					return
				}
			}
		}(w, conns[w], rand.New(rand.NewPCG(seed, uint64(w))))
	}
	// The load phase itself: the workers run meanwhile.
	started := time.Now()
	for deadline := time.Now().Add(load); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		l.mu.Lock()
		n := len(l.confirmed)
		l.mu.Unlock()
		if n >= maxConfirmed {
			break
		}
	}
	killed.Store(true)
	ran := time.Since(started)
	s.kill()
	wg.Wait()
	// What is still held was acquired and never acknowledged.
	l.mu.Lock()
	for p := range l.holder {
		if !l.uncertain[p] {
			l.unacked[p] = true
		}
	}
	l.mu.Unlock()
	return ran
}

// crashSharedStep is one turn of worker w of l's consumer on c: acquire up
// to 10 messages (waiting up to 50ms) and acknowledge them, with
// autocommit DELETEs (one per partition, pipelined; each statement's tag
// confirms its messages), or (txn) in a transaction that acquires and
// COMMITs, half of the time also DELETEing inside the block. It records in
// l what the server promised; on an error it says what failed.
func crashSharedStep(ctx context.Context, c *pgx.Conn, l *crashSharedLedger, cycle, w int, txn bool, rng *rand.Rand) (string, error) {
	acquire := "CONSUMER = " + l.consumer + ", WAIT = '50ms'"
	del := "DELETE FROM " + l.topic + " WITH (CONSUMER = " + l.consumer + ") WHERE partition = $1 AND offset = ANY($2)"
	if !txn {
		ms, err := shAcquire(ctx, c, l.topic, acquire, 10)
		if err != nil {
			return "acquire", err
		}
		l.got(cycle, w, ms)
		if len(ms) == 0 {
			return "", nil
		}
		byPart := map[int64][]shMsg{}
		var order []int64
		for _, m := range ms {
			if _, ok := byPart[m.part]; !ok {
				order = append(order, m.part)
			}
			byPart[m.part] = append(byPart[m.part], m)
		}
		b := &pgx.Batch{}
		for _, p := range order {
			offs := make([]int64, len(byPart[p]))
			for i, m := range byPart[p] {
				offs[i] = m.off
			}
			b.Queue(del, p, offs)
		}
		br := c.SendBatch(ctx, b)
		var failed error
		for _, p := range order {
			if failed != nil {
				l.mark(l.uncertain, byPart[p])
				continue
			}
			tag, err := br.Exec()
			if err != nil {
				failed = err
				l.mark(l.uncertain, byPart[p])
				continue
			}
			if n := tag.RowsAffected(); n != int64(len(byPart[p])) || !strings.HasPrefix(tag.String(), "DELETE") {
				if l.lockTimeout > 0 && expiredBy(byPart[p], time.Now()) && strings.HasPrefix(tag.String(), "DELETE") {
					// The ack waited out a cluster without a leader for
					// longer than the lock: some were not held any more
					// (which, the tag does not say).
					l.mark(l.uncertain, byPart[p])
					continue
				}
				l.mu.Lock()
				l.violation(fmt.Sprintf("cycle %d worker %d: ack of %d messages of partition %d locked until %s: tag %q at %s, last notice: %s",
					cycle, w, len(byPart[p]), p, byPart[p][0].lockedUntil.Format("15:04:05.000"), tag, time.Now().Format("15:04:05.000"), noticeOf(c)))
				l.mu.Unlock()
			}
			l.confirm(cycle, byPart[p], fmt.Sprintf("worker %d's %s", w, tag))
		}
		if err := br.Close(); err != nil && failed == nil {
			failed = err
		}
		if failed != nil {
			return "ack", failed
		}
		return "", nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return "BEGIN", err
	}
	ms, err := shAcquire(ctx, tx, l.topic, acquire, 10)
	if err != nil {
		return "acquire in a transaction", err
	}
	l.got(cycle, w, ms)
	if len(ms) > 0 && rng.IntN(2) == 0 {
		// Also DELETE inside the block: applied at COMMIT.
		p := ms[0].part
		var offs []int64
		for _, m := range ms {
			if m.part == p {
				offs = append(offs, m.off)
			}
		}
		if _, err := tx.Exec(ctx, del, p, offs); err != nil {
			l.mark(l.unacked, ms)
			return "DELETE in a transaction", err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		l.mark(l.uncertain, ms)
		return "COMMIT", err
	}
	l.confirm(cycle, ms, fmt.Sprintf("worker %d's COMMIT", w))
	return "", nil
}
