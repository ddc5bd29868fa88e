package pebblestore

import (
	"fmt"
	"testing"
	"time"

	"topicgate/topicstore"
)

func openShared(t testing.TB, dir string, clk *testClock, window int) *PebbleStore {
	t.Helper()
	opts := Options{MemTableSize: 4 << 20, CacheSize: 8 << 20, RetentionInterval: -1, SharedWindow: window}
	if clk != nil {
		opts.Clock = clk.Now
	}
	s, err := Open(dir, opts)
	must(t, err)
	return s
}

func sharedCfg(name string, fn func(*topicstore.ConsumerConfig)) topicstore.ConsumerConfig {
	c := topicstore.ConsumerConfig{Name: name, Shared: true, ProcessingTimeout: 10 * time.Second}
	if fn != nil {
		fn(&c)
	}
	return c
}

func acquire(t testing.TB, s *PebbleStore, topic, consumer string, session uint32, max int) []topicstore.Acquired {
	t.Helper()
	out, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: topic, Consumer: consumer, Session: session, Max: max})
	must(t, err)
	return out
}

// refs renders acquired messages as "p:off:body:deliveries".
func refsOf(t testing.TB, as []topicstore.Acquired) []string {
	t.Helper()
	out := []string{}
	for _, a := range as {
		data, err := a.Message.Decode()
		must(t, err)
		out = append(out, fmt.Sprintf("%d:%d:%s:%d", a.Message.Partition, a.Message.Offset, data, a.DeliveryCount))
	}
	return out
}

func act(t testing.TB, s *PebbleStore, topic, consumer string, session uint32, a topicstore.SharedAction, refs ...topicstore.MsgRef) []topicstore.SharedOutcome {
	t.Helper()
	out, err := s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: topic, Consumer: consumer, Session: session, Action: a, Refs: refs})
	must(t, err)
	return out
}

func r0(off int64) topicstore.MsgRef { return topicstore.MsgRef{Partition: 0, Offset: off} }

func stats0(t testing.TB, s *PebbleStore, topic, consumer string) topicstore.SharedPartitionStats {
	t.Helper()
	st, err := s.SharedStats(topic, consumer)
	must(t, err)
	return st[0]
}

func TestSharedFairnessAndWindow(t *testing.T) {
	clk := newTestClock()
	s := openShared(t, t.TempDir(), clk, 5)
	defer s.Close()
	consumerTopic(t, s, "q", 3, sharedCfg("w", nil))
	for p := int32(0); p < 3; p++ {
		var msgs []topicstore.Message
		for i := 0; i < 20; i++ {
			msgs = append(msgs, body(fmt.Sprintf("p%d-%d", p, i)))
		}
		commit(t, s, "q", at(p, msgs...)...)
	}
	perPart := func(as []topicstore.Acquired) [3]int {
		var n [3]int
		for _, a := range as {
			n[a.Message.Partition]++
		}
		return n
	}
	eq(t, perPart(acquire(t, s, "q", "w", 1, 3)), [3]int{1, 1, 1})
	eq(t, perPart(acquire(t, s, "q", "w", 1, 7)), [3]int{2, 3, 2}) // rotating start: 1,2,0,1,2,0,1
	// Window 5 per partition: 15 at most in flight.
	eq(t, perPart(acquire(t, s, "q", "w", 1, 100)), [3]int{2, 1, 2})
	eq(t, len(acquire(t, s, "q", "w", 1, 100)), 0)
	// Acking 1..4 of partition 0 does not move its window (0 unfinished).
	act(t, s, "q", "w", 1, topicstore.ActionAck, r0(1), r0(2), r0(3), r0(4))
	eq(t, len(acquire(t, s, "q", "w", 1, 100)), 0)
	act(t, s, "q", "w", 1, topicstore.ActionAck, r0(0))
	eq(t, perPart(acquire(t, s, "q", "w", 1, 100)), [3]int{5, 0, 0})

	// Group fairness without keep_messages_order.
	consumerTopic(t, s, "g", 1, sharedCfg("w", nil))
	var msgs []topicstore.Message
	for i, g := range []string{"x", "x", "x", "y", "y", ""} {
		m := body(fmt.Sprint(i))
		m.MessageGroupID = g
		msgs = append(msgs, m)
	}
	commit(t, s, "g", msgs...)
	got := acquire(t, s, "g", "w", 1, 3)
	// The window (5) holds offsets 0-4: first x (0), first y (3), second x (1).
	eq(t, refsOf(t, got), []string{"0:0:0:1", "0:1:1:1", "0:3:3:1"})
}

func TestSharedRestart(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	consumerTopic(t, s, "q", 2, sharedCfg("w", nil), sharedCfg("v", nil))
	for i := 0; i < 10; i++ {
		commit(t, s, "q", at(int32(i%2), body(fmt.Sprint(i)))...)
	}
	a := acquire(t, s, "q", "w", 1, 10)
	eq(t, len(a), 10)
	// Ack all of partition 0 but offset 1, and offset 3 of partition 1.
	act(t, s, "q", "w", 1, topicstore.ActionAck, r0(0), r0(2), r0(3), r0(4), topicstore.MsgRef{Partition: 1, Offset: 3})
	act(t, s, "q", "w", 1, topicstore.ActionReject, topicstore.MsgRef{Partition: 1, Offset: 0})
	eq(t, len(acquire(t, s, "q", "v", 1, 3)), 3) // another consumer: independent
	must(t, s.Close())

	s = openTest(t, dir, clk)
	defer s.Close()
	// Delivery counts survive the restart: these are second deliveries.
	eq(t, refsOf(t, acquire(t, s, "q", "w", 2, 10)), []string{"0:1:2:2", "1:1:3:2", "1:2:5:2", "1:4:9:2"})
	st, err := s.SharedStats("q", "w")
	must(t, err)
	eq(t, st[0].StartOffset, int64(1))
	eq(t, st[1].StartOffset, int64(1))
	eq(t, len(acquire(t, s, "q", "v", 1, 100)), 10)
}

func TestSharedCommitAcks(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	consumerTopic(t, s, "q", 1, sharedCfg("w", nil))
	commit(t, s, "q", body("a"), body("b"), body("c"))
	acquire(t, s, "q", "w", 1, 3)
	b := s.db.NewBatch()
	_, err := s.sharedCommitAcks(b, []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 2, Refs: []topicstore.MsgRef{r0(0)}}}, clk.Now())
	mustErrIs(t, err, topicstore.ErrLockExpired)
	_, err = s.sharedCommitAcks(b, []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 1, Refs: []topicstore.MsgRef{r0(0)}}}, clk.Now().Add(time.Minute))
	mustErrIs(t, err, topicstore.ErrLockExpired)
	eq(t, b.Count(), uint32(0))
	apply, err := s.sharedCommitAcks(b, []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 1, Refs: []topicstore.MsgRef{r0(0), r0(1)}}}, clk.Now())
	must(t, err)
	// Pinned: not actionable, not expiring.
	eq(t, act(t, s, "q", "w", 1, topicstore.ActionRelease, r0(0)), []topicstore.SharedOutcome{topicstore.OutcomeNotHeld})
	clk.Advance(time.Minute)
	eq(t, stats0(t, s, "q", "w").Acquired, int64(2))
	must(t, b.Commit(nil))
	apply(true)
	eq(t, act(t, s, "q", "w", 1, topicstore.ActionAck, r0(0)), []topicstore.SharedOutcome{topicstore.OutcomeFinished})
	eq(t, stats0(t, s, "q", "w").StartOffset, int64(2))

	// Abort: held again with the old deadline, which then expires.
	a := acquire(t, s, "q", "w", 3, 1)
	eq(t, refsOf(t, a), []string{"0:2:c:2"})
	apply, err = s.sharedCommitAcks(s.db.NewBatch(), []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 3, Refs: []topicstore.MsgRef{r0(2)}}}, clk.Now())
	must(t, err)
	clk.Advance(time.Minute)
	eq(t, stats0(t, s, "q", "w").Acquired, int64(1)) // pinned: no expiry
	apply(false)
	eq(t, act(t, s, "q", "w", 3, topicstore.ActionAck, r0(2)), []topicstore.SharedOutcome{topicstore.OutcomeExpired})
	eq(t, refsOf(t, acquire(t, s, "q", "w", 4, 1)), []string{"0:2:c:3"})
}
