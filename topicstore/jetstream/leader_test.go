package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/jetstream/route"
)

// TestBatchesGoToTheLeader: a store's commits go out on its pinned
// connection to the node leading the stream, once Open's background dial
// and question have found it; a pinned connection lost while its node
// leads is dialed again; after the leader steps down they follow the new
// one (the leader-elected advisory), and once the leader's node is killed
// its connection is dropped at once and they go to the survivors' leader
// as soon as it is elected. Every commit succeeds; none is lost.
func TestBatchesGoToTheLeader(t *testing.T) {
	c := jstest.Start(t, 3)
	ctx := context.Background()
	const stream = "TGLEADER"
	s := openStores(t, c, Options{Stream: stream}, 1)[0]
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	// The stream's info names no leader for a moment after an election
	// the store has already heard of; the test waits for the next
	// advisory then, as the store does.
	elected := make(chan *nats.Msg, 16)
	sub, err := c.Connect().ChanSubscribe(route.LeaderElectedSubject+stream, elected)
	require.NoError(t, err)
	defer sub.Unsubscribe()
	streamLeader := func() string {
		t.Helper()
		deadline := time.After(jstest.WaitTimeout)
		for {
			info, err := s.stream.Info(ctx)
			require.NoError(t, err)
			if info.Cluster.Leader != "" {
				return info.Cluster.Leader
			}
			select {
			case <-elected:
			case <-deadline:
				t.Fatal("the stream's info never named a leader")
			}
		}
	}
	written := int64(0)
	commit := func() {
		t.Helper()
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
			{Topic: "t", Messages: []topicstore.Message{{Partition: 0, Body: []byte("x")}}}}})
		require.NoError(t, err)
		written++
	}
	// leaderAfter waits until the store's batches go to a pinned
	// connection to another node than from, checks that it is the one
	// the stream names its leader and that a commit goes out on it, and
	// returns its name.
	leaderAfter := func(from string) string {
		t.Helper()
		deadline := time.After(jstest.WaitTimeout)
		for {
			changed := s.leaders.Wait()
			if nc := s.leaders.Conn(s.nc); nc != s.nc && nc.ConnectedServerName() != from {
				name := nc.ConnectedServerName()
				require.Equal(t, streamLeader(), name, "batches go to the stream's leader")
				before := nc.Stats().OutMsgs
				commit()
				require.Greater(t, nc.Stats().OutMsgs, before, "the commit went out on the connection to %s", name)
				return name
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("batches never went to a leader other than %q", from)
			}
		}
	}
	first := leaderAfter("") // dialed and asked in the background of Open

	// A pinned connection that closes while its node still leads (a
	// ping that timed out, the server closing it) is dialed again at
	// once, with no election to say so.
	lost := s.leaders.Pinned(first)
	lost.Close()
	deadline := time.After(jstest.WaitTimeout)
	for {
		changed := s.leaders.Wait()
		if nc := s.leaders.Conn(s.nc); nc != s.nc && nc != lost && nc.ConnectedServerName() == first {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the connection to %s was not dialed again", first)
		}
	}
	require.Equal(t, first, leaderAfter(""))

	admin := c.Connect()
	resp, err := admin.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil, jstest.WaitTimeout)
	require.NoError(t, err)
	require.Contains(t, string(resp.Data), `"success":true`)
	second := leaderAfter(first)

	for i := range c.Nodes().N() {
		if c.Nodes().Node(i).Name == second {
			c.Kill(i)
		}
	}
	// Its pinned connection closes with the node, so batches take the
	// store's own connection (a publish during the election goes
	// unanswered, on any connection: docs/cluster/durability.md) until
	// the advisory names the survivors' leader.
	leaderAfter(second)

	ti, err := s.Topic("t")
	require.NoError(t, err)
	require.Equal(t, written, ti.Partitions[0].EndOffset)
}
