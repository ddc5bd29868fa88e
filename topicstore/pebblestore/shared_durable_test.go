package pebblestore

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sharedrec"
	"topicgate/topicstore/storetest"
)

// crashStore is a store on a strict in-memory file system whose crash
// keeps only what was synced.
type crashStore struct {
	t   *testing.T
	fs  *vfs.MemFS
	clk *testClock
	s   *PebbleStore
}

func newCrashStore(t *testing.T, clk *testClock) *crashStore {
	c := &crashStore{t: t, fs: vfs.NewStrictMem(), clk: clk}
	must(t, c.fs.MkdirAll("/db", 0o755))
	root, err := c.fs.OpenDir("/")
	must(t, err)
	must(t, root.Sync()) // the directory itself survives a crash
	must(t, root.Close())
	c.open()
	return c
}

func (c *crashStore) open() {
	s, err := Open("/db", Options{fs: c.fs, Clock: c.clk.Now, RetentionInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20})
	must(c.t, err)
	c.s = s
}

// crash loses everything not synced so far, as kill -9 does, and reopens.
func (c *crashStore) crash() {
	c.fs.SetIgnoreSyncs(true)
	_ = c.s.Close()
	c.fs.ResetToSyncedState()
	c.fs.SetIgnoreSyncs(false)
	c.open()
}

// A message's delivery count is durable once Acquire returned: after a
// crash the next delivery is the next attempt, also after a handed-back
// delivery (ReleaseUndelivered lowers the stored count).
func TestSharedDeliveryCountsSurviveCrash(t *testing.T) {
	clk := newTestClock()
	c := newCrashStore(t, clk)
	defer func() { c.s.Close() }()
	consumerTopic(t, c.s, "q", 2, sharedCfg("w", nil))
	commit(t, c.s, "q", at(0, body("a"), body("b"))...)
	commit(t, c.s, "q", at(1, body("c"))...)
	for i := 1; i <= 3; i++ {
		want := []string{fmt.Sprintf("0:0:a:%d", i), fmt.Sprintf("0:1:b:%d", i), fmt.Sprintf("1:0:c:%d", i)}
		eq(t, refsOf(t, acquire(t, c.s, "q", "w", 1, 10)), want, "attempt", i)
		c.crash() // the locks go, the counts stay
	}
	a := acquire(t, c.s, "q", "w", 1, 10)
	eq(t, refsOf(t, a), []string{"0:0:a:4", "0:1:b:4", "1:0:c:4"})
	c.s.ReleaseUndelivered("q", "w", 1, []topicstore.MsgRef{r0(1)})
	act(t, c.s, "q", "w", 1, topicstore.ActionAck, r0(0))
	c.crash()
	// Offset 0 acked; offset 1's fourth delivery never reached a client.
	eq(t, refsOf(t, acquire(t, c.s, "q", "w", 1, 10)), []string{"0:1:b:4", "1:0:c:5"})
	act(t, c.s, "q", "w", 1, topicstore.ActionAck, r0(1), topicstore.MsgRef{Partition: 1, Offset: 0})
	eq(t, stats0(t, c.s, "q", "w").StartOffset, int64(2))
	c.crash()
	eq(t, len(acquire(t, c.s, "q", "w", 1, 10)), 0)
	// Records of passed offsets wait for a bulk deletion (StaleBatch of
	// them), across the crash too, and are not loaded.
	eq(t, sharedRecords(t, c.s, 1, "w"), 3, "per-message records left")
}

// sharedRecords counts the per-message records of topic id's consumer.
func sharedRecords(t *testing.T, s *PebbleStore, id uint64, consumer string) int {
	n := 0
	pre := keys.SharedPrefix(id, consumer)
	it, err := s.db.NewIter(nil)
	must(t, err)
	for ok := it.First(); ok; ok = it.Next() {
		if len(it.Key()) == len(pre)+12 && string(it.Key()[:len(pre)]) == string(pre) {
			n++
		}
	}
	must(t, it.Close())
	return n
}

// The records of messages the start has passed are deleted together,
// with one range deletion, once a partition has StaleBatch of them: a
// consumer that acknowledged any number of messages keeps fewer than
// StaleBatch records per partition below its start, before and after a
// crash, and none of them comes back.
func TestSharedStaleRecordsDeletedInBulk(t *testing.T) {
	clk := newTestClock()
	c := newCrashStore(t, clk)
	defer func() { c.s.Close() }()
	consumerTopic(t, c.s, "q", 1, sharedCfg("w", nil))
	drain := func(n int) {
		t.Helper()
		msgs := make([]topicstore.Message, n)
		for i := range msgs {
			msgs[i] = body(fmt.Sprint(i))
		}
		commit(t, c.s, "q", at(0, msgs...)...)
		for got := 0; got < n; {
			a := acquire(t, c.s, "q", "w", 1, 100)
			if len(a) == 0 {
				t.Fatalf("nothing to acquire after %d of %d", got, n)
			}
			refs := make([]topicstore.MsgRef, len(a))
			for i := range a {
				refs[i] = topicstore.MsgRef{Partition: a[i].Message.Partition, Offset: a[i].Message.Offset}
			}
			act(t, c.s, "q", "w", 1, topicstore.ActionAck, refs...)
			got += len(a)
		}
	}
	total := 0
	for _, n := range []int{sharedrec.StaleBatch - 1, 1, 2*sharedrec.StaleBatch + 7} {
		drain(n)
		total += n
		left := sharedRecords(t, c.s, 1, "w")
		if left >= sharedrec.StaleBatch {
			t.Fatalf("after %d acknowledged: %d records left, want fewer than %d", total, left, sharedrec.StaleBatch)
		}
		c.crash()
		eq(t, stats0(t, c.s, "q", "w").StartOffset, int64(total))
		eq(t, len(acquire(t, c.s, "q", "w", 1, 10)), 0, "after", total)
		eq(t, sharedRecords(t, c.s, 1, "w"), left, "records after the crash")
	}
	// A record below the start that no step listed (written behind the
	// loaded consumer's back) goes with the next bulk deletion too.
	orphan := keys.SharedDone(1, "w", 0, 5)
	must(t, c.s.db.Set(orphan, sharedrec.Acked(), pebble.Sync))
	drain(sharedrec.StaleBatch)
	if _, closer, err := c.s.db.Get(orphan); err != pebble.ErrNotFound {
		if closer != nil {
			closer.Close()
		}
		t.Fatalf("orphan record below the start: %v, want it deleted", err)
	}
	if left := sharedRecords(t, c.s, 1, "w"); left >= sharedrec.StaleBatch {
		t.Fatalf("%d records left, want fewer than %d", left, sharedrec.StaleBatch)
	}
}

// max_processing_attempts and the dead-letter policies hold across
// crashes: a message delivered max times and not acknowledged before a
// crash is not handed out again, and a move reports every attempt.
func TestSharedAttemptsAcrossCrashes(t *testing.T) {
	clk := newTestClock()
	c := newCrashStore(t, clk)
	defer func() { c.s.Close() }()
	attempts := func(c *topicstore.ConsumerConfig) { c.MaxProcessingAttempts = 3 }
	consumerTopic(t, c.s, "q", 1,
		sharedCfg("del", func(c *topicstore.ConsumerConfig) { attempts(c); c.DeadLetterPolicy = "delete" }),
		sharedCfg("mv", func(c *topicstore.ConsumerConfig) {
			attempts(c)
			c.DeadLetterPolicy = "move"
			c.DeadLetterQueue = "dlq"
		}),
		sharedCfg("none", func(c *topicstore.ConsumerConfig) { attempts(c); c.DeadLetterPolicy = "none" }))
	consumerTopic(t, c.s, "dlq", 1)
	commit(t, c.s, "q", body("poison"), body("ok"))
	for i := 1; i <= 3; i++ {
		for _, cons := range []string{"del", "mv", "none"} {
			eq(t, refsOf(t, acquire(t, c.s, "q", cons, 1, 1)), []string{fmt.Sprintf("0:0:poison:%d", i)}, cons)
		}
		c.crash()
	}
	// delete: archived; the next message is handed out.
	eq(t, refsOf(t, acquire(t, c.s, "q", "del", 1, 10)), []string{"0:1:ok:1"})
	eq(t, stats0(t, c.s, "q", "del").StartOffset, int64(1))
	// move: in the DLQ with its three attempts.
	eq(t, refsOf(t, acquire(t, c.s, "q", "mv", 1, 10)), []string{"0:1:ok:1"})
	_, got := scanAll(t, c.s, "dlq", part(0))
	eq(t, len(got), 1)
	eq(t, string(got[0].Body), "poison")
	eq(t, got[0].Attrs[len(got[0].Attrs)-1], topicstore.Attr{Key: "dlq_attempts", Value: "3"})
	// none: back in the queue, on its fourth attempt.
	eq(t, refsOf(t, acquire(t, c.s, "q", "none", 1, 1)), []string{"0:0:poison:4"})
	c.crash()
	_, got = scanAll(t, c.s, "dlq", part(0))
	eq(t, len(got), 1, "a move is done once")
	eq(t, stats0(t, c.s, "q", "mv").StartOffset, int64(1))
}

// keep_messages_order: acknowledging a group's message wakes waiters,
// since the group's next message becomes available; so does a commit's
// acknowledgement.
func TestSharedWatchOrderedGroup(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	consumerTopic(t, s, "q", 1, sharedCfg("w", func(c *topicstore.ConsumerConfig) { c.KeepMessagesOrder = true }))
	g := func(b string) topicstore.Message { m := body(b); m.MessageGroupID = "g"; return m }
	commit(t, s, "q", g("a"), g("b"), g("c"))
	eq(t, refsOf(t, acquire(t, s, "q", "w", 1, 10)), []string{"0:0:a:1"})
	res, err := s.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 2, Max: 10, Watch: true})
	must(t, err)
	must(t, res.Wait())
	eq(t, len(res.Messages), 0)
	act(t, s, "q", "w", 1, topicstore.ActionAck, r0(0))
	check(t, storetest.Closed(res.Freed), "the group moves on")
	eq(t, refsOf(t, acquire(t, s, "q", "w", 2, 10)), []string{"0:1:b:1"})

	res, err = s.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 3, Max: 10, Watch: true})
	must(t, err)
	must(t, res.Wait())
	b := s.db.NewBatch()
	apply, err := s.sharedCommitAcks(b, []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 2, Refs: []topicstore.MsgRef{r0(1)}}}, clk.Now())
	must(t, err)
	must(t, b.Commit(nil))
	check(t, !storetest.Closed(res.Freed), "not before the commit is applied")
	apply(true)
	check(t, storetest.Closed(res.Freed), "a committed acknowledgement wakes the waiters")
}
