package jetstream_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/storetest"
)

// gateways opens n stores (gateways) on one R3 stream of c, all on clk.
func gateways(t *testing.T, c *jstest.Cluster, stream string, clk *storetest.Clock, n int) []*jetstream.Store {
	var out []*jetstream.Store
	for range n {
		var s *jetstream.Store
		// On a busy machine the meta leader may not have heard from a node
		// lately (an R3 stream's creation fails with 10005 "no suitable
		// peers for placement") or be re-elected (no responders): the
		// test is not about that, so it opens again.
		jstest.Eventually(t, 30*time.Second, func() (err error) {
			s, err = jetstream.Open(context.Background(), jetstream.Options{URLs: c.URLs(), Stream: stream, Clock: clk.Now})
			return err
		})
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}

func queue(t *testing.T, s *jetstream.Store, name string, parts int, mod func(*topicstore.ConsumerConfig)) {
	cc := topicstore.ConsumerConfig{Name: "w", Shared: true, ProcessingTimeout: 10 * time.Second}
	if mod != nil {
		mod(&cc)
	}
	require.NoError(t, s.CreateTopic(context.Background(), topicstore.TopicConfig{Name: name, MinActivePartitions: parts,
		Consumers: []topicstore.ConsumerConfig{cc}}))
}

func publish(t *testing.T, s *jetstream.Store, topic string, bodies ...string) {
	var msgs []topicstore.Message
	for _, b := range bodies {
		msgs = append(msgs, topicstore.Message{Partition: 0, Body: []byte(b)})
	}
	_, err := s.Commit(context.Background(), &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic, Messages: msgs}}})
	require.NoError(t, err)
}

func acq(t *testing.T, s *jetstream.Store, topic string, session uint32, max int) []string {
	t.Helper()
	as, err := s.Acquire(context.Background(), topicstore.AcquireRequest{Topic: topic, Consumer: "w", Session: session, Max: max})
	require.NoError(t, err)
	out := []string{}
	for _, a := range as {
		out = append(out, fmt.Sprintf("%d:%s:%d", a.Message.Offset, a.Message.Body, a.DeliveryCount))
	}
	return out
}

// tryAcq acquires, nothing on an error (another gateway's fold may not
// know the topic yet).
func tryAcq(s *jetstream.Store, topic string, session uint32, max int) []topicstore.Acquired {
	as, _ := s.Acquire(context.Background(), topicstore.AcquireRequest{Topic: topic, Consumer: "w", Session: session, Max: max})
	return as
}

// eventually retries f until it holds: another gateway's fold applies a
// change a moment after the change returned.
func eventually(t *testing.T, f func() bool, msg string) {
	t.Helper()
	jstest.Eventually(t, 5*time.Second, func() error {
		if !f() {
			return fmt.Errorf("not yet: %s", msg)
		}
		return nil
	})
}

func ref(off int64) topicstore.MsgRef { return topicstore.MsgRef{Offset: off} }

// TestSharedAcrossGateways: shared consumers through several gateways on
// one three-node cluster: a lock taken through one is respected by the
// others (whatever the session numbers), a waiter on one wakes on a
// publish or a release through another, a gateway's death leaves its
// locks to expire at their deadline, a gateway opened later rebuilds the
// same state from the stream, and concurrent workers on two gateways
// never share a message.
func TestSharedAcrossGateways(t *testing.T) {
	c := jstest.Start(t, 3)
	ctx := context.Background()

	t.Run("LocksAndWaiters", func(t *testing.T) {
		clk := storetest.NewClock()
		g := gateways(t, c, "TGSHLOCK", clk, 2)
		a, b := g[0], g[1]
		queue(t, a, "q", 1, nil)
		publish(t, a, "q", "m0", "m1")
		require.Equal(t, []string{"0:m0:1"}, acq(t, a, "q", 1, 1))
		eventually(t, func() bool { st, err := b.SharedStats("q", "w"); return err == nil && st[0].Acquired == 1 }, "b sees a's lock")
		require.Equal(t, []string{"1:m1:1"}, acq(t, b, "q", 1, 5), "b never hands out a's message, though its session is number 1 too")
		out, err := b.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: 1, Action: topicstore.ActionAck, Refs: []topicstore.MsgRef{ref(0)}})
		require.NoError(t, err)
		require.Equal(t, []topicstore.SharedOutcome{topicstore.OutcomeNotHeld}, out, "b's session 1 does not hold a's lock")

		// A waiter on b wakes on a publish through a, and on a release through a.
		res, err := b.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 2, Max: 1, Watch: true})
		require.NoError(t, err)
		require.NoError(t, res.Wait())
		require.Empty(t, res.Messages)
		require.Equal(t, 10*time.Second, res.NextReady, "the first deadline: the gateways share the clock")
		publish(t, a, "q", "m2")
		waitClosed(t, res.Published, "b's waiter wakes on a's publish")
		require.False(t, storetest.Closed(res.Freed))
		res, err = b.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 2, Max: 1, Watch: true})
		require.NoError(t, err)
		require.NoError(t, res.Wait())
		if len(res.Messages) == 1 { // b's fold had m2 already
			res, err = b.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: 2, Max: 1, Watch: true})
			require.NoError(t, err)
			require.NoError(t, res.Wait())
		}
		require.Empty(t, res.Messages)
		a.ReleaseSession("q", "w", 1, nil)
		waitClosed(t, res.Freed, "b's waiter wakes on a's release")
		eventually(t, func() bool { return len(tryAcq(b, "q", 3, 5)) == 1 }, "b hands out the released m0")
	})

	t.Run("DeadGatewayLocksExpire", func(t *testing.T) {
		clk := storetest.NewClock()
		g := gateways(t, c, "TGSHDEAD", clk, 2)
		a, b := g[0], g[1]
		queue(t, a, "q", 1, func(cc *topicstore.ConsumerConfig) { cc.MaxProcessingAttempts = 2; cc.DeadLetterPolicy = "delete" })
		publish(t, a, "q", "m0", "m1", "m2")
		require.Len(t, acq(t, a, "q", 1, 2), 2)
		_, err := a.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "q", Consumer: "w", Session: 1, Action: topicstore.ActionAck, Refs: []topicstore.MsgRef{ref(1)}})
		require.NoError(t, err)
		require.NoError(t, a.Close()) // dies holding m0, without releasing it
		eventually(t, func() bool { return len(tryAcq(b, "q", 9, 5)) == 1 }, "b gets m2 only")
		clk.Advance(5 * time.Second)
		require.Empty(t, acq(t, b, "q", 9, 5), "a's lock holds until its deadline")
		clk.Advance(6 * time.Second)
		require.Equal(t, []string{"0:m0:2", "2:m2:2"}, acq(t, b, "q", 9, 5), "then it expires (and b's), the counts kept")
		clk.Advance(11 * time.Second) // out of attempts: archived
		st, err := b.SharedStats("q", "w")
		require.NoError(t, err)
		require.Equal(t, [3]int64{3, 0, 2}, [3]int64{st[0].StartOffset, st[0].Available, st[0].ArchivedTotal})

		// A gateway opened now rebuilds the same state from the stream.
		cc := gateways(t, c, "TGSHDEAD", clk, 1)[0]
		st2, err := cc.SharedStats("q", "w")
		require.NoError(t, err)
		require.Equal(t, st, st2)
		publish(t, cc, "q", "m3")
		require.Equal(t, []string{"3:m3:1"}, acq(t, cc, "q", 9, 5))
	})

	t.Run("AckInCommitAfterExpiry", func(t *testing.T) {
		clk := storetest.NewClock()
		g := gateways(t, c, "TGSHACK", clk, 2)
		a, b := g[0], g[1]
		queue(t, a, "q", 1, nil)
		require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "out", MinActivePartitions: 1}))
		publish(t, a, "q", "m0")
		require.Len(t, acq(t, a, "q", 1, 1), 1)
		clk.Advance(11 * time.Second)
		eventually(t, func() bool { return len(tryAcq(b, "q", 1, 1)) == 1 }, "b takes the expired lock")
		_, err := a.Commit(ctx, &topicstore.CommitRequest{
			Writes: []topicstore.TopicWrite{{Topic: "out", Messages: []topicstore.Message{{Partition: 0, Body: []byte("x")}}}},
			Acks:   []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 1, Refs: []topicstore.MsgRef{ref(0)}}}})
		require.ErrorIs(t, err, topicstore.ErrLockExpired)
		info, err := a.Topic("out")
		require.NoError(t, err)
		require.Equal(t, int64(0), info.Partitions[0].EndOffset, "the failed commit wrote nothing")
		_, err = b.Commit(ctx, &topicstore.CommitRequest{Acks: []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 1, Refs: []topicstore.MsgRef{ref(0)}}}})
		require.NoError(t, err)
		eventually(t, func() bool { st, err := a.SharedStats("q", "w"); return err == nil && st[0].StartOffset == 1 }, "a sees b's ack")
	})

	t.Run("NoDoubleDelivery", func(t *testing.T) {
		g := gateways(t, c, "TGSHRACE", storetest.NewClock(), 2)
		queue(t, g[0], "q", 2, nil)
		const per = 60
		for p := int32(0); p < 2; p++ {
			var msgs []topicstore.Message
			for i := range per {
				msgs = append(msgs, topicstore.Message{Partition: p, Body: fmt.Appendf(nil, "%d-%d", p, i)})
			}
			_, err := g[0].Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "q", Messages: msgs}}})
			require.NoError(t, err)
		}
		eventually(t, func() bool {
			info, err := g[1].Topic("q")
			return err == nil && info.Partitions[0].EndOffset == per && info.Partitions[1].EndOffset == per
		}, "the other gateway has the messages")
		var mu sync.Mutex
		seen := map[topicstore.MsgRef]int{}
		all := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 6 {
			s := g[w%2]
			wg.Go(func() {
				for {
					res, err := s.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "q", Consumer: "w", Session: uint32(1 + w/2), Max: 3, Watch: true})
					if err == nil {
						err = res.Wait()
					}
					if err != nil {
						t.Error(err)
						return
					}
					as := res.Messages
					if len(as) == 0 { // wait for a publish, a release, or the end
						select {
						case <-res.Published:
						case <-res.Freed:
						case <-all:
							return
						}
						continue
					}
					refs := refsOf(as)
					mu.Lock()
					for _, r := range refs {
						if prev, dup := seen[r]; dup {
							t.Errorf("%v delivered to workers %d and %d", r, prev, w)
						}
						seen[r] = w
					}
					if len(seen) == 2*per {
						close(all)
					}
					mu.Unlock()
					if !ackAll(t, s, "q", uint32(1+w/2), refs) {
						return
					}
				}
			})
		}
		wg.Wait()
		require.Len(t, seen, 2*per)
		for _, s := range g {
			eventually(t, func() bool {
				st, err := s.SharedStats("q", "w")
				return err == nil && st[0].StartOffset == per && st[1].StartOffset == per
			}, "every message acknowledged, as both gateways see it")
		}
		// Each state message rolled its subject up: one message per partition.
		st, err := jstest.JetStream(t, c.Connect()).Stream(ctx, "TGSHRACE")
		require.NoError(t, err)
		info, err := st.Info(ctx, natsjs.WithSubjectFilter("tgshrace.s.>"))
		require.NoError(t, err)
		require.Len(t, info.State.Subjects, 2)
		for subj, n := range info.State.Subjects {
			require.Equal(t, uint64(1), n, subj)
		}
	})
}

// refsOf names the acquired messages.
func refsOf(as []topicstore.Acquired) []topicstore.MsgRef {
	out := make([]topicstore.MsgRef, len(as))
	for i, a := range as {
		out[i] = topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
	}
	return out
}

// ackAll acknowledges refs, each of which must be held.
func ackAll(t *testing.T, s *jetstream.Store, topic string, session uint32, refs []topicstore.MsgRef) bool {
	req := topicstore.SharedActionRequest{Topic: topic, Consumer: "w", Session: session, Action: topicstore.ActionAck, Refs: refs}
	out, err := s.SharedAction(context.Background(), req)
	if err == nil && slices.ContainsFunc(out, func(o topicstore.SharedOutcome) bool { return o != topicstore.OutcomeDone }) {
		err = fmt.Errorf("ack outcomes %v", out)
	}
	if err != nil {
		t.Error(err)
	}
	return err == nil
}

func waitClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}
