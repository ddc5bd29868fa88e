package jetstream

import (
	"context"
	"slices"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/storetest"
)

// waitView waits, on the group's change channel, until s shows a view
// that ok accepts, and returns it.
func waitView(t *testing.T, s *Store, ok func(topicstore.GroupView) bool) topicstore.GroupView {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		v, ch, err := s.Members("t", "c")
		require.NoError(t, err)
		if ok(v) {
			return v
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("gateway %s: the group stays %+v", s.GatewayID(), v)
		}
	}
}

// gateways lists a view's members' gateway ids.
func gateways(v topicstore.GroupView) []string {
	var out []string
	for _, m := range v.Members {
		out = append(out, m.Gateway)
	}
	return out
}

// TestGroupMembers: two stores on one stream see each other's
// announcements, with the same epoch, which moves on a session count
// change and not on a change of what is held; a store closed without
// leaving expires after the TTL by the clock, and a TTL later what it left
// is purged from the stream and forgotten; a store opened afterwards
// folds the same group.
func TestGroupMembers(t *testing.T) {
	c := jstest.Start(t, 1)
	clock := storetest.NewClock()
	const ttl = time.Second // renewals every 200ms of real time
	open := func() *Store {
		s, err := Open(context.Background(), Options{URLs: c.URLs(), Replicas: 1, Stream: "TGGROUPS", Clock: clock.Now,
			RetentionInterval: -1, GroupTTL: ttl})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	ctx := context.Background()
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 4,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	a.mu.Lock()
	applied := a.applied
	a.mu.Unlock()
	require.NoError(t, b.waitApplied(ctx, applied))

	require.NoError(t, a.Announce("t", "c", topicstore.Announcement{Sessions: 1}))
	va := waitView(t, a, func(v topicstore.GroupView) bool { return len(v.Members) == 1 })
	require.Equal(t, a.GatewayID(), va.Members[0].Gateway)
	require.NotZero(t, va.Epoch)
	vb := waitView(t, b, func(v topicstore.GroupView) bool { return len(v.Members) == 1 })
	require.Equal(t, va, vb, "both gateways fold the same group")

	require.NoError(t, b.Announce("t", "c", topicstore.Announcement{Sessions: 2, Saw: va.Epoch}))
	two := func(v topicstore.GroupView) bool { return len(v.Members) == 2 }
	vb = waitView(t, b, two)
	va = waitView(t, a, two)
	require.Equal(t, va, vb)
	require.Greater(t, va.Epoch, vb.Members[0].Saw, "b's join is a new membership")
	want := []string{a.GatewayID(), b.GatewayID()}
	slices.Sort(want)
	require.Equal(t, want, gateways(va))

	epoch := va.Epoch
	require.NoError(t, a.Announce("t", "c", topicstore.Announcement{Sessions: 1, Held: []int32{0, 1}, Saw: epoch}))
	va = waitView(t, a, func(v topicstore.GroupView) bool {
		for _, m := range v.Members {
			if m.Gateway == a.GatewayID() {
				return slices.Equal(m.Held, []int32{0, 1})
			}
		}
		return false
	})
	require.Equal(t, epoch, va.Epoch, "holding other partitions is no new membership")

	// b dies: it stops renewing; by the clock it expires after the TTL.
	require.NoError(t, b.Close())
	clock.Advance(2 * ttl)
	va = waitView(t, a, func(v topicstore.GroupView) bool {
		return slices.Equal(gateways(v), []string{a.GatewayID()})
	})
	// a TTL later a's sweep purges and forgets b's records.
	clock.Advance(2 * ttl)
	waitView(t, a, func(topicstore.GroupView) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, byGw := range a.fold.Groups.Recs {
			if byGw[b.GatewayID()] != nil {
				return false
			}
		}
		return true
	})
	info, err := a.stream.Info(ctx, natsjs.WithSubjectFilter(a.subj.Filter(fold.KindMember)))
	require.NoError(t, err)
	require.Len(t, info.State.Subjects, 1, "only a's record is left: %v", info.State.Subjects)

	// A gateway started now folds the same group as a.
	d := open()
	va = waitView(t, a, func(v topicstore.GroupView) bool { return len(v.Members) == 1 })
	vd := waitView(t, d, func(v topicstore.GroupView) bool { return len(v.Members) == 1 })
	require.Equal(t, va.Epoch, vd.Epoch)
	require.Equal(t, gateways(va), gateways(vd))

	// Leaving is an announcement of no sessions.
	require.NoError(t, a.Announce("t", "c", topicstore.Announcement{Sessions: 0, Saw: epoch}))
	waitView(t, d, func(v topicstore.GroupView) bool { return len(v.Members) == 0 })
}
