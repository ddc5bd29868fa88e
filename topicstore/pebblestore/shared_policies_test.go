package pebblestore

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// TestSharedDeadLetterRetry: the dead-letter publish uses a producer and
// seqno of its own per message, so a move retried after a crash between
// the publish and the archive is deduplicated (the policies themselves are
// the contract suite's).
func TestSharedDeadLetterRetry(t *testing.T) {
	s := newStore(t, newTestClock())
	consumerTopic(t, s, "q", 1, sharedCfg("mv", func(c *topicstore.ConsumerConfig) {
		c.MaxProcessingAttempts = 1
		c.DeadLetterPolicy = "move"
		c.DeadLetterQueue = "dlq"
	}))
	createTopic(t, s, "dlq", 1)
	commit(t, s, "q", body("a"))
	acquire(t, s, "q", "mv", 1, 1)
	act(t, s, "q", "mv", 1, topicstore.ActionRelease, r0(0)) // out of attempts: moved
	got, _ := scanAll(t, s, "dlq", part(0))
	eq(t, got, []string{"0:a"})
	must(t, s.sharedPublishDLQ("q", "mv", sharedcore.Ref{Part: 0, Off: 0, Deliv: 1}))
	got, _ = scanAll(t, s, "dlq", part(0))
	eq(t, got, []string{"0:a"})
	eq(t, stats0(t, s, "q", "mv").StartOffset, int64(1))
}

// Two sessions never hold two messages of one group, and a group's messages
// are handed out in offset order.
func TestSharedKeepOrderContention(t *testing.T) {
	s := newStore(t, nil)
	consumerTopic(t, s, "q", 2, sharedCfg("w", func(c *topicstore.ConsumerConfig) { c.KeepMessagesOrder = true }))
	const groups, perGroup = 10, 20
	remaining := map[string][]int64{}
	for p := int32(0); p < 2; p++ {
		var msgs []topicstore.Message
		for i := 0; i < groups/2*perGroup; i++ {
			m := body(fmt.Sprint(i))
			m.MessageGroupID = fmt.Sprintf("g%d-%d", p, i%(groups/2))
			key := fmt.Sprintf("%d/%s", p, m.MessageGroupID)
			remaining[key] = append(remaining[key], int64(i))
			msgs = append(msgs, m)
		}
		commit(t, s, "q", at(p, msgs...)...)
	}
	var mu sync.Mutex
	held := map[string]uint32{}
	var acked atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 1; w <= 4; w++ {
		wg.Add(1)
		go func(session uint32) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(session)))
			for acked.Load() < groups*perGroup {
				as, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: session, Max: 3})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, a := range as {
					key := fmt.Sprintf("%d/%s", a.Message.Partition, a.Message.MessageGroupID)
					if h, ok := held[key]; ok {
						errs <- fmt.Errorf("group %s held by %d and %d", key, h, session)
					}
					if r := remaining[key]; r[0] != a.Message.Offset {
						errs <- fmt.Errorf("group %s: got offset %d, want %d", key, a.Message.Offset, r[0])
					}
					held[key] = session
				}
				mu.Unlock()
				for _, a := range as {
					key := fmt.Sprintf("%d/%s", a.Message.Partition, a.Message.MessageGroupID)
					action := topicstore.ActionAck
					if rnd.Intn(5) == 0 {
						action = topicstore.ActionRelease
					}
					mu.Lock()
					delete(held, key)
					if action == topicstore.ActionAck {
						remaining[key] = remaining[key][1:]
					}
					mu.Unlock()
					out, err := s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: session,
						Action: action, Refs: []topicstore.MsgRef{{Partition: a.Message.Partition, Offset: a.Message.Offset}}})
					if err != nil || out[0] != topicstore.OutcomeDone {
						errs <- fmt.Errorf("action: %v %v", out, err)
						return
					}
					if action == topicstore.ActionAck {
						acked.Add(1)
					}
				}
			}
		}(uint32(w))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// 8 goroutines drain 5000 messages: each is acknowledged exactly once.
func TestSharedConcurrentDrain(t *testing.T) {
	s := newStore(t, nil)
	consumerTopic(t, s, "q", 4, sharedCfg("w", nil))
	const n = 5000
	for i := 0; i < n; i += 500 {
		var msgs []topicstore.Message
		for j := i; j < i+500; j++ {
			msgs = append(msgs, body(fmt.Sprint(j)))
		}
		commit(t, s, "q", msgs...)
	}
	var mu sync.Mutex
	seen := map[topicstore.MsgRef]int{}
	var done atomic.Int64
	var wg sync.WaitGroup
	for w := 1; w <= 8; w++ {
		wg.Add(1)
		go func(session uint32) {
			defer wg.Done()
			for done.Load() < n {
				as, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: session, Max: 10})
				if err != nil {
					t.Error(err)
					return
				}
				if len(as) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				refs := make([]topicstore.MsgRef, len(as))
				for i, a := range as {
					refs[i] = topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
				}
				out, err := s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: session, Action: topicstore.ActionAck, Refs: refs})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i, o := range out {
					if o != topicstore.OutcomeDone {
						t.Errorf("ack %v: outcome %d", refs[i], o)
					}
					seen[refs[i]]++
				}
				mu.Unlock()
				done.Add(int64(len(out)))
			}
		}(uint32(w))
	}
	wg.Wait()
	eq(t, len(seen), n)
	for r, c := range seen {
		if c != 1 {
			t.Fatalf("%v acked %d times", r, c)
		}
	}
	st, err := s.SharedStats("q", "w")
	must(t, err)
	var total int64
	for _, p := range st {
		eq(t, p.Available+p.Acquired+p.Delayed, int64(0))
		total += p.StartOffset
	}
	eq(t, total, int64(n))
	// The starts are stored as the consumer's positions (retention sees
	// them), by the next action if concurrent ones were storing theirs.
	act(t, s, "q", "w", 1, topicstore.ActionAck)
	total = 0
	for _, off := range positions(t, s, "q", "w") {
		total += off
	}
	eq(t, total, int64(n))
}

func TestSharedReadFrom(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	consumerTopic(t, s, "q", 1)
	commit(t, s, "q", body("a"), body("b"))
	clk.Advance(time.Hour)
	commit(t, s, "q", body("c"))
	alter(t, s, "q", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers, sharedCfg("w", func(c *topicstore.ConsumerConfig) { c.ReadFrom = clk.Now().Add(-time.Minute) }))
	})
	eq(t, refsOf(t, acquire(t, s, "q", "w", 1, 10)), []string{"0:2:c:1"})
}

func BenchmarkAcquireAck(b *testing.B) {
	s := openShared(b, b.TempDir(), nil, 0)
	defer s.Close()
	consumerTopic(b, s, "q", 4, sharedCfg("w", nil))
	total := b.N * 10
	for i := 0; i < total; i += 1000 {
		var msgs []topicstore.Message
		for j := i; j < min(i+1000, total); j++ {
			msgs = append(msgs, body("payload-0123456789"))
		}
		commit(b, s, "q", msgs...)
	}
	b.ResetTimer()
	start := time.Now()
	acked := 0
	for i := 0; i < b.N; i++ {
		as, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 1, Max: 10})
		must(b, err)
		refs := make([]topicstore.MsgRef, len(as))
		for i, a := range as {
			refs[i] = topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
		}
		_, err = s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: 1, Action: topicstore.ActionAck, Refs: refs})
		must(b, err)
		acked += len(refs)
	}
	b.ReportMetric(float64(acked)/time.Since(start).Seconds(), "msgs/s")
}

// Dropping a shared consumer while it is in use leaves no state behind for
// a consumer re-created with the same name.
func TestSharedDropRace(t *testing.T) {
	s := newStore(t, nil)
	consumerTopic(t, s, "q", 2, sharedCfg("w", nil))
	for i := 0; i < 5; i++ {
		commit(t, s, "q", body("x"), body("y"))
	}
	for round := 0; round < 10; round++ {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 1; w <= 3; w++ {
			wg.Add(1)
			go func(session uint32) {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					as, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: session, Max: 2})
					if err != nil {
						continue // consumer dropped right now
					}
					for _, a := range as {
						s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: session,
							Action: topicstore.ActionAck, Refs: []topicstore.MsgRef{{Partition: a.Message.Partition, Offset: a.Message.Offset}}})
					}
				}
			}(uint32(w))
		}
		time.Sleep(2 * time.Millisecond)
		alter(t, s, "q", func(c *topicstore.TopicConfig) { c.Consumers = nil })
		close(stop)
		wg.Wait()
		alter(t, s, "q", func(c *topicstore.TopicConfig) { c.Consumers = []topicstore.ConsumerConfig{sharedCfg("w", nil)} })
		st, err := s.SharedStats("q", "w")
		must(t, err)
		eq(t, []int64{st[0].StartOffset, st[1].StartOffset, st[0].Available + st[1].Available}, []int64{0, 0, 10}, round)
	}
}

// 8 goroutines, each acquiring 10 and acking them: concurrent acks share
// fsyncs.
func BenchmarkAcquireAckParallel(b *testing.B) {
	s := openShared(b, b.TempDir(), nil, 0)
	defer s.Close()
	consumerTopic(b, s, "q", 4, sharedCfg("w", nil))
	total := b.N*10 + 8*10
	for i := 0; i < total; i += 1000 {
		var msgs []topicstore.Message
		for j := i; j < min(i+1000, total); j++ {
			msgs = append(msgs, body("payload-0123456789"))
		}
		commit(b, s, "q", msgs...)
	}
	var acked atomic.Int64
	var session atomic.Uint32
	b.SetParallelism(4) // × GOMAXPROCS goroutines
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		sess := session.Add(1)
		for pb.Next() {
			as, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: sess, Max: 10})
			if err != nil {
				b.Error(err)
				return
			}
			refs := make([]topicstore.MsgRef, len(as))
			for i, a := range as {
				refs[i] = topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
			}
			if _, err := s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: sess, Action: topicstore.ActionAck, Refs: refs}); err != nil {
				b.Error(err)
				return
			}
			acked.Add(int64(len(refs)))
		}
	})
	b.ReportMetric(float64(acked.Load())/time.Since(start).Seconds(), "msgs/s")
}

// A manager loaded just before a DDL dropped its consumer must not be
// registered, even when another reader has already seen the new topic
// version (which clears the DDL's freeze). Before the fix the stale
// manager was kept, and a consumer re-created with the same name inherited
// its in-memory locks; TestSharedDropRace hit this in about 2% of runs.
func TestSharedLoadRacesDrop(t *testing.T) {
	s := newStore(t, nil)
	consumerTopic(t, s, "q", 1, sharedCfg("w", nil))
	commit(t, s, "q", body("x"), body("y"))
	fired := false
	testHookSharedLoaded = func() {
		if fired {
			return
		}
		fired = true
		alter(t, s, "q", func(c *topicstore.TopicConfig) { c.Consumers = nil })
		// Another reader sees the new version and clears the freeze.
		if _, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 2, Max: 1}); !errors.Is(err, topicstore.ErrConsumerNotFound) {
			t.Errorf("acquire during the drop: %v, want ErrConsumerNotFound", err)
		}
	}
	defer func() { testHookSharedLoaded = nil }()
	_, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 1, Max: 1})
	if !fired || !errors.Is(err, topicstore.ErrConsumerNotFound) {
		t.Fatalf("acquire racing the drop: %v (hook ran: %v), want ErrConsumerNotFound", err, fired)
	}
	alter(t, s, "q", func(c *topicstore.TopicConfig) { c.Consumers = []topicstore.ConsumerConfig{sharedCfg("w", nil)} })
	st, err := s.SharedStats("q", "w")
	must(t, err)
	eq(t, []int64{st[0].Available, st[0].Acquired}, []int64{2, 0}, "re-created consumer")
}
