package storetest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var sharedTests = []subtest{
	{"Transitions", needs(Shared, testSharedTransitions)},
	{"TimeoutsAndDelays", needs(Shared, testSharedTimeouts)},
	{"KeepMessagesOrder", needs(Shared, testSharedOrder)},
	{"Fairness", needs(Shared, testSharedFairness)},
	{"DeadLetterPolicies", needs(Shared, testSharedDeadLetter)},
	{"ReleaseUndelivered", needs(Shared, testSharedUndelivered)},
	{"MaxBytes", needs(Shared, testSharedMaxBytes)},
	{"AcksInCommit", needs(Shared, testSharedCommitAcks)},
	{"Watch", needs(Shared, testSharedWatch)},
	{"ConsumerLifecycle", needs(Shared, testSharedLifecycle)},
}

// sharedCfg is a shared consumer with 10 s locks.
func sharedCfg(name string, fn func(*topicstore.ConsumerConfig)) topicstore.ConsumerConfig {
	c := topicstore.ConsumerConfig{Name: name, Shared: true, ProcessingTimeout: 10 * time.Second}
	if fn != nil {
		fn(&c)
	}
	return c
}

func (e *env) acquire(topic, consumer string, session uint32, max int) []topicstore.Acquired {
	e.t.Helper()
	out, err := e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: topic, Consumer: consumer, Session: session, Max: max})
	require.NoError(e.t, err)
	return out
}

// refsOf renders acquired messages as "partition:offset:data:deliveries".
func (e *env) refsOf(as []topicstore.Acquired) []string {
	e.t.Helper()
	out := []string{}
	for _, a := range as {
		data, err := a.Message.Decode()
		require.NoError(e.t, err)
		out = append(out, fmt.Sprintf("%d:%d:%s:%d", a.Message.Partition, a.Message.Offset, data, a.DeliveryCount))
	}
	return out
}

func (e *env) acq(topic, consumer string, session uint32, max int) []string {
	e.t.Helper()
	return e.refsOf(e.acquire(topic, consumer, session, max))
}

func (e *env) act(topic, consumer string, session uint32, a topicstore.SharedAction, refs ...topicstore.MsgRef) []topicstore.SharedOutcome {
	e.t.Helper()
	out, err := e.s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: topic, Consumer: consumer, Session: session, Action: a, Refs: refs})
	require.NoError(e.t, err)
	require.Len(e.t, out, len(refs))
	return out
}

func (e *env) stats0(topic, consumer string) topicstore.SharedPartitionStats {
	e.t.Helper()
	st, err := e.s.SharedStats(topic, consumer)
	require.NoError(e.t, err)
	require.NotEmpty(e.t, st)
	return st[0]
}

func r0(off int64) topicstore.MsgRef { return topicstore.MsgRef{Partition: 0, Offset: off} }

func outcomes(os ...topicstore.SharedOutcome) []topicstore.SharedOutcome { return os }

func testSharedTransitions(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", nil), topicstore.ConsumerConfig{Name: "stream"})
	e.commit("q", body("a"), body("b"), body("c"), body("d"), body("e"))
	t0 := e.clk.Now()

	a := e.acquire("q", "w", 1, 2)
	require.Equal(t, []string{"0:0:a:1", "0:1:b:1"}, e.refsOf(a))
	require.True(t, a[0].LockedUntil.Equal(t0.Add(10*time.Second)), "LockedUntil %v", a[0].LockedUntil)
	require.Equal(t, []string{"0:2:c:1", "0:3:d:1", "0:4:e:1"}, e.acq("q", "w", 2, 10))
	require.Empty(t, e.acquire("q", "w", 1, 10))
	require.Equal(t, topicstore.SharedPartitionStats{Acquired: 5, OldestUnacked: t0, Deliveries: map[int32]int64{1: 5}}, e.stats0("q", "w"))

	require.Equal(t, outcomes(topicstore.OutcomeNotHeld), e.act("q", "w", 2, topicstore.ActionAck, r0(0)), "held by another session")
	require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", "w", 1, topicstore.ActionAck, r0(0)))
	require.Equal(t, outcomes(topicstore.OutcomeFinished), e.act("q", "w", 1, topicstore.ActionAck, r0(0)))
	// Release: available at once, delivered again with a higher count.
	require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", "w", 1, topicstore.ActionRelease, r0(1)))
	require.Equal(t, outcomes(topicstore.OutcomeNotHeld), e.act("q", "w", 1, topicstore.ActionRelease, r0(1)))
	require.Equal(t, []string{"0:1:b:2"}, e.acq("q", "w", 3, 10))
	// Reject (dead_letter_policy none): archived.
	require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", "w", 2, topicstore.ActionReject, r0(2)))
	require.Equal(t, outcomes(topicstore.OutcomeFinished), e.act("q", "w", 2, topicstore.ActionAck, r0(2)))
	// Extend 3 to an hour, let 4 expire.
	out, err := e.s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: 2, Action: topicstore.ActionExtend,
		Refs: []topicstore.MsgRef{r0(3)}, Until: t0.Add(time.Hour)})
	require.NoError(t, err)
	require.Equal(t, outcomes(topicstore.OutcomeDone), out)
	e.clk.Advance(30 * time.Second)
	require.Equal(t, outcomes(topicstore.OutcomeDone, topicstore.OutcomeExpired, topicstore.OutcomeUnknown, topicstore.OutcomeUnknown, topicstore.OutcomeUnknown),
		e.act("q", "w", 2, topicstore.ActionAck, r0(3), r0(4), r0(5), topicstore.MsgRef{Partition: 1}, r0(-1)))
	// 1 (session 3's lock expired too) and 4 are available again.
	// Their delivery counts: 1 was delivered twice, 4 once.
	require.Equal(t, topicstore.SharedPartitionStats{StartOffset: 1, Available: 2, Archived: 1, OldestUnacked: t0, ArchivedTotal: 1,
		Deliveries: map[int32]int64{1: 1, 2: 1}}, e.stats0("q", "w"))
	require.Equal(t, []string{"0:1:b:3", "0:4:e:2"}, e.acq("q", "w", 1, 10))
	require.Equal(t, outcomes(topicstore.OutcomeExpired), e.act("q", "w", 2, topicstore.ActionAck, r0(4)), "the old holder learns its lock expired")
	require.Equal(t, outcomes(topicstore.OutcomeDone, topicstore.OutcomeDone), e.act("q", "w", 1, topicstore.ActionAck, r0(1), r0(4)))
	require.Equal(t, topicstore.SharedPartitionStats{StartOffset: 5, ArchivedTotal: 1}, e.stats0("q", "w"))

	// ReleaseSession: the refs named, or all the session holds.
	e.commit("q", body("f"), body("g"))
	require.Len(t, e.acquire("q", "w", 7, 10), 2)
	e.s.ReleaseSession("q", "w", 7, []topicstore.MsgRef{r0(6)})
	require.Equal(t, [2]int64{1, 1}, [2]int64{e.stats0("q", "w").Acquired, e.stats0("q", "w").Available})
	e.s.ReleaseSession("q", "w", 7, nil)
	require.Equal(t, int64(2), e.stats0("q", "w").Available)
	require.Equal(t, []string{"0:5:f:2", "0:6:g:2"}, e.acq("q", "w", 8, 10), "a released lock was a delivery")

	_, err = e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "stream", Max: 1})
	require.ErrorIs(t, err, topicstore.ErrNotShared)
	_, err = e.s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "nope", Action: topicstore.ActionAck})
	require.ErrorIs(t, err, topicstore.ErrConsumerNotFound)
	_, err = e.s.SharedStats("nope", "w")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}

// testSharedTimeouts: the default and the requested lock duration; a
// message's delay and the consumer's receive delay.
func testSharedTimeouts(e *env) {
	t := e.t
	e.create("q", 1, topicstore.ConsumerConfig{Name: "def", Shared: true},
		sharedCfg("late", func(c *topicstore.ConsumerConfig) { c.ReceiveMessageDelay = 10 * time.Second }))
	t0 := e.clk.Now()
	delayed := body("a")
	delayed.Delay = time.Minute
	e.commit("q", delayed, body("b"), body("c"))

	a := e.acquire("q", "def", 1, 1)
	require.Equal(t, []string{"0:1:b:1"}, e.refsOf(a), "a is delayed by a minute")
	require.True(t, a[0].LockedUntil.Equal(t0.Add(topicstore.DefaultProcessingTimeout)), "LockedUntil %v", a[0].LockedUntil)
	a, err := e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "def", Session: 1, Max: 1, Timeout: time.Second})
	require.NoError(t, err)
	require.Equal(t, []string{"0:2:c:1"}, e.refsOf(a))
	require.True(t, a[0].LockedUntil.Equal(t0.Add(time.Second)), "LockedUntil %v", a[0].LockedUntil)
	require.Equal(t, topicstore.SharedPartitionStats{Acquired: 2, Delayed: 1, OldestUnacked: t0, Deliveries: map[int32]int64{0: 1, 1: 2}}, e.stats0("q", "def"))

	require.Empty(t, e.acquire("q", "late", 1, 10), "nothing before the receive delay")
	require.Equal(t, topicstore.SharedPartitionStats{Delayed: 3, OldestUnacked: t0, Deliveries: map[int32]int64{0: 3}}, e.stats0("q", "late"))
	e.clk.Advance(10 * time.Second)
	require.Equal(t, []string{"0:1:b:1", "0:2:c:1"}, e.acq("q", "late", 1, 10))
	e.act("q", "late", 1, topicstore.ActionAck, r0(1), r0(2))
	e.clk.Advance(50 * time.Second)
	require.Equal(t, []string{"0:0:a:1"}, e.acq("q", "late", 2, 10), "the message's own delay is over")
}

// testSharedOrder: with keep_messages_order a group's next message waits
// until the previous one is finished, whoever holds it; other groups go on.
func testSharedOrder(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("ord", func(c *topicstore.ConsumerConfig) { c.KeepMessagesOrder = true }))
	delayed := grouped("g", "a")
	delayed.Delay = time.Minute
	e.commit("q", delayed, grouped("g", "b"), grouped("h", "c"), grouped("h", "d"), body("e"))
	require.Equal(t, []string{"0:2:c:1", "0:4:e:1"}, e.acq("q", "ord", 1, 10), "the delayed a holds b back; one message of h at a time")
	require.Empty(t, e.acquire("q", "ord", 2, 10))
	e.act("q", "ord", 1, topicstore.ActionRelease, r0(2))
	require.Equal(t, []string{"0:2:c:2"}, e.acq("q", "ord", 2, 10), "a released message comes first again")
	e.act("q", "ord", 2, topicstore.ActionAck, r0(2))
	require.Equal(t, []string{"0:3:d:1"}, e.acq("q", "ord", 3, 10))
	e.act("q", "ord", 3, topicstore.ActionAck, r0(3))
	e.act("q", "ord", 1, topicstore.ActionAck, r0(4))
	e.clk.Advance(time.Minute) // no lock is left to expire
	require.Equal(t, []string{"0:0:a:1"}, e.acq("q", "ord", 3, 10))
	require.Empty(t, e.acquire("q", "ord", 4, 10), "b waits for a")
	e.act("q", "ord", 3, topicstore.ActionAck, r0(0))
	require.Equal(t, []string{"0:1:b:1"}, e.acq("q", "ord", 4, 10))
}

// testSharedFairness: acquisitions spread over partitions and, within a
// partition, over message groups.
func testSharedFairness(e *env) {
	t := e.t
	e.create("q", 3, sharedCfg("w", nil))
	for p := int32(0); p < 3; p++ {
		var msgs []topicstore.Message
		for i := 0; i < 4; i++ {
			msgs = append(msgs, body(fmt.Sprintf("p%d-%d", p, i)))
		}
		e.commit("q", at(p, msgs...)...)
	}
	perPart := func(as []topicstore.Acquired) [3]int {
		var n [3]int
		for _, a := range as {
			n[a.Message.Partition]++
		}
		return n
	}
	require.Equal(t, [3]int{1, 1, 1}, perPart(e.acquire("q", "w", 1, 3)))
	as := e.acquire("q", "w", 1, 6)
	require.Equal(t, [3]int{2, 2, 2}, perPart(as))
	for i := 1; i < len(as); i++ { // sorted by (partition, offset)
		prev, cur := as[i-1].Message, as[i].Message
		require.True(t, prev.Partition < cur.Partition || prev.Partition == cur.Partition && prev.Offset < cur.Offset, "%v before %v", prev, cur)
	}

	e.create("g", 1, sharedCfg("w", nil))
	var msgs []topicstore.Message
	for i, g := range []string{"x", "x", "x", "y", "y", ""} {
		msgs = append(msgs, grouped(g, fmt.Sprint(i)))
	}
	e.commit("g", msgs...)
	// First of each group (an ungrouped message is a group of its own),
	// then the second of each, ...
	require.Equal(t, []string{"0:0:0:1", "0:3:3:1", "0:5:5:1"}, e.acq("g", "w", 1, 3))
	require.Equal(t, []string{"0:1:1:1", "0:4:4:1"}, e.acq("g", "w", 1, 2))
}

// testSharedDeadLetter: max_processing_attempts with each
// dead_letter_policy; 'move' publishes to the dead_letter_queue with the
// message's data, group, attributes and its source.
func testSharedDeadLetter(e *env) {
	t := e.t
	attempts := func(c *topicstore.ConsumerConfig) { c.MaxProcessingAttempts = 2 }
	e.create("q", 1,
		sharedCfg("none", func(c *topicstore.ConsumerConfig) { attempts(c); c.DeadLetterPolicy = "none" }),
		sharedCfg("del", func(c *topicstore.ConsumerConfig) { attempts(c); c.DeadLetterPolicy = "delete" }),
		sharedCfg("mv", func(c *topicstore.ConsumerConfig) {
			attempts(c)
			c.DeadLetterPolicy = "move"
			c.DeadLetterQueue = "dlq"
		}))
	m := grouped("g", "a")
	m.Attrs = []topicstore.Attr{{Key: "k", Value: "v"}}
	e.commit("q", m, body("b"))
	fail := func(consumer string) []string {
		got := e.acq("q", consumer, 1, 1)
		require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", consumer, 1, topicstore.ActionRelease, r0(0)))
		return got
	}
	for i := 1; i <= 4; i++ {
		require.Equal(t, []string{fmt.Sprintf("0:0:a:%d", i)}, fail("none"), "none: back to the queue, always")
	}
	fail("del")
	fail("del")
	st := e.stats0("q", "del")
	require.Equal(t, [2]int64{1, 1}, [2]int64{st.StartOffset, st.ArchivedTotal}, "delete: archived after the second failure")
	require.Equal(t, []string{"0:1:b:1"}, e.acq("q", "del", 1, 1))

	// move, with the dead_letter_queue missing: the message stays.
	fail("mv")
	fail("mv")
	st = e.stats0("q", "mv")
	require.NotEmpty(t, st.DeadLetterError)
	st.DeadLetterError = ""
	require.Equal(t, topicstore.SharedPartitionStats{Available: 2, OldestUnacked: Start, DeadLetterFailures: 1, Deliveries: map[int32]int64{0: 1, 2: 1}}, st)
	require.Equal(t, []string{"0:0:a:3"}, e.acq("q", "mv", 1, 1))
	e.create("dlq", 1)
	e.clk.Advance(11 * time.Second) // the lock expires: another failure, moved now
	st = e.stats0("q", "mv")
	require.Equal(t, [3]int64{1, 1, 1}, [3]int64{st.StartOffset, st.DeadLettered, st.ArchivedTotal})
	moved := e.scanMsgs("dlq", part(0))
	require.Len(t, moved, 1)
	require.Equal(t, "a", string(moved[0].Body))
	require.Equal(t, "g", moved[0].MessageGroupID)
	require.Equal(t, map[string]string{"k": "v", "dlq_source_topic": "q", "dlq_source_partition": "0",
		"dlq_source_offset": "0", "dlq_attempts": "3"}, attrMap(moved[0].Attrs))
	// Reject under 'move' moves at once, whatever the attempts.
	e.acquire("q", "mv", 1, 1)
	require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", "mv", 1, topicstore.ActionReject, r0(1)))
	moved = e.scanMsgs("dlq", part(0))
	require.Len(t, moved, 2)
	require.Equal(t, "1", attrMap(moved[1].Attrs)["dlq_attempts"])
	require.Equal(t, int64(2), e.stats0("q", "mv").StartOffset)
}

func attrMap(as []topicstore.Attr) map[string]string {
	m := map[string]string{}
	for _, a := range as {
		m[a.Key] = a.Value
	}
	return m
}

// testSharedUndelivered: a message handed back undelivered is available
// at once and its delivery is not counted.
func testSharedUndelivered(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", func(c *topicstore.ConsumerConfig) {
		c.MaxProcessingAttempts = 1
		c.DeadLetterPolicy = "delete"
	}))
	e.commit("q", body("a"), body("b"))
	require.Len(t, e.acquire("q", "w", 1, 2), 2)
	e.s.ReleaseUndelivered("q", "w", 1, []topicstore.MsgRef{r0(1)})
	e.s.ReleaseUndelivered("q", "w", 2, []topicstore.MsgRef{r0(0)}) // not session 2's: nothing happens
	require.Equal(t, []string{"0:1:b:1"}, e.acq("q", "w", 2, 10), "still the first delivery; a's lock is kept")
	require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", "w", 1, topicstore.ActionAck, r0(0)))
}

// testSharedMaxBytes: the bodies returned fit MaxBytes, but at least one
// message is; what did not fit stays available, undelivered.
func testSharedMaxBytes(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", nil))
	e.commit("q", body("0123456789"), body("abcdefghij"), body("ABCDEFGHIJ"))
	as, err := e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 1, Max: 10, MaxBytes: 25})
	require.NoError(t, err)
	require.Equal(t, []string{"0:0:0123456789:1", "0:1:abcdefghij:1"}, e.refsOf(as))
	as, err = e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 1, Max: 10, MaxBytes: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"0:2:ABCDEFGHIJ:1"}, e.refsOf(as))
	require.Equal(t, topicstore.SharedPartitionStats{Acquired: 3, OldestUnacked: Start, Deliveries: map[int32]int64{1: 3}}, e.stats0("q", "w"))
}

// testSharedCommitAcks: acknowledgements in a commit are atomic with its
// writes; a lock not held (or expired) fails the commit with
// ErrLockExpired and writes nothing.
func testSharedCommitAcks(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", nil))
	e.create("out", 1)
	e.commit("q", body("a"), body("b"), body("c"))
	e.acquire("q", "w", 1, 2)
	commitAck := func(session uint32, refs ...topicstore.MsgRef) error {
		_, err := e.s.Commit(ctx, &topicstore.CommitRequest{
			Writes: []topicstore.TopicWrite{{Topic: "out", Messages: []topicstore.Message{body(fmt.Sprint(refs))}}},
			Acks:   []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: session, Refs: refs}},
		})
		return err
	}
	require.ErrorIs(t, commitAck(2, r0(0)), topicstore.ErrLockExpired, "held by session 1")
	require.ErrorIs(t, commitAck(1, r0(0), r0(2)), topicstore.ErrLockExpired, "2 is not acquired")
	require.Equal(t, []int64{0}, e.ends("out"), "failed commits write nothing")
	require.NoError(t, commitAck(1, r0(0), r0(1)))
	require.Equal(t, []int64{1}, e.ends("out"))
	require.Equal(t, outcomes(topicstore.OutcomeFinished, topicstore.OutcomeFinished), e.act("q", "w", 1, topicstore.ActionAck, r0(0), r0(1)))
	require.Equal(t, int64(2), e.stats0("q", "w").StartOffset)

	require.Equal(t, []string{"0:2:c:1"}, e.acq("q", "w", 3, 1))
	e.clk.Advance(11 * time.Second)
	require.ErrorIs(t, commitAck(3, r0(2)), topicstore.ErrLockExpired, "the lock expired")
	require.Equal(t, []int64{1}, e.ends("out"))
	require.Equal(t, []string{"0:2:c:2"}, e.acq("q", "w", 4, 1))
}

// testSharedWatch: an empty acquisition with Watch says what to wait on:
// Published closes on a publish, Freed when a message may have become
// available otherwise, NextReady is the time to the earliest lock deadline
// or end of a delay.
func testSharedWatch(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", nil))
	watch := func() topicstore.AcquireResult {
		t.Helper()
		res, err := e.s.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 9, Max: 10, Watch: true})
		require.NoError(t, err)
		require.NoError(t, res.Wait())
		require.Empty(t, res.Messages)
		require.NotNil(t, res.Published)
		require.NotNil(t, res.Freed)
		return res
	}
	res := watch()
	require.Zero(t, res.NextReady)
	require.False(t, Closed(res.Published) || Closed(res.Freed), "nothing happened yet")
	e.commit("q", body("a"), body("b"))
	require.True(t, Closed(res.Published), "a publish closes Published")
	require.False(t, Closed(res.Freed), "a publish is not a release")

	e.acquire("q", "w", 1, 1)
	e.clk.Advance(time.Second)
	e.acquire("q", "w", 2, 1)
	res = watch()
	require.Equal(t, 9*time.Second, res.NextReady, "the first lock's deadline")
	e.act("q", "w", 2, topicstore.ActionExtend, r0(1)) // to now + 10 s: later, not earlier
	require.False(t, Closed(res.Freed), "a later deadline frees nothing")
	_, err := e.s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: 2, Action: topicstore.ActionExtend,
		Refs: []topicstore.MsgRef{r0(1)}, Until: e.clk.Now().Add(5 * time.Second)})
	require.NoError(t, err)
	require.True(t, Closed(res.Freed), "an earlier deadline wakes the waiters")
	res = watch()
	require.Equal(t, 5*time.Second, res.NextReady, "the shortened lock")
	e.act("q", "w", 1, topicstore.ActionRelease, r0(0))
	require.True(t, Closed(res.Freed), "a release closes Freed")
	require.Equal(t, []string{"0:0:a:2"}, e.acq("q", "w", 9, 10))

	delayed := body("later")
	delayed.Delay = time.Minute
	e.commit("q", delayed)
	e.act("q", "w", 9, topicstore.ActionAck, r0(0))
	e.act("q", "w", 2, topicstore.ActionAck, r0(1))
	res = watch()
	require.Equal(t, time.Minute, res.NextReady, "the end of the delay")
	e.clk.Advance(time.Minute)
	require.Equal(t, []string{"0:2:later:1"}, e.acq("q", "w", 9, 10))

	res = watch()
	e.alter("q", setConsumer("w", func(c *topicstore.ConsumerConfig) { c.ProcessingTimeout = time.Minute }))
	require.True(t, Closed(res.Freed), "altering the consumer wakes its waiters")
	res = watch()
	e.alter("q", func(c *topicstore.TopicConfig) { c.Consumers = nil })
	require.True(t, Closed(res.Freed), "dropping the consumer wakes its waiters")
}

// testSharedLifecycle: dropping a shared consumer drops its state;
// turning it into a streaming one makes shared operations fail.
func testSharedLifecycle(e *env) {
	t := e.t
	e.create("q", 1, sharedCfg("w", nil))
	e.commit("q", body("a"), body("b"))
	e.acquire("q", "w", 1, 1)
	e.act("q", "w", 1, topicstore.ActionAck, r0(0))
	require.Equal(t, int64(1), e.stats0("q", "w").StartOffset)
	e.alter("q", func(c *topicstore.TopicConfig) { c.Consumers = nil })
	_, err := e.s.SharedStats("q", "w")
	require.ErrorIs(t, err, topicstore.ErrConsumerNotFound)
	e.alter("q", func(c *topicstore.TopicConfig) { c.Consumers = []topicstore.ConsumerConfig{sharedCfg("w", nil)} })
	require.Equal(t, int64(0), e.stats0("q", "w").StartOffset, "re-created: it starts over")
	require.Equal(t, []string{"0:0:a:1", "0:1:b:1"}, e.acq("q", "w", 1, 10))
	e.alter("q", setConsumer("w", func(c *topicstore.ConsumerConfig) { c.Shared = false }))
	_, err = e.s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Max: 1})
	require.ErrorIs(t, err, topicstore.ErrNotShared)
	require.NoError(t, e.s.DropTopic(ctx, "q"))
	_, err = e.s.SharedStats("q", "w")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}
