package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/groups"
	"topicgate/topicstore/jetstream/jstest"
)

// TestCloseAfterNodeKilled: a gateway whose node died closes at once
// (within groups.FarewellWait and closeStopWait) even while nats.go is still re-creating the
// fold's ordered consumer; Close used to wait for that, 10.7s once, in 1
// to 2 of 5 runs of this scenario.
func TestCloseAfterNodeKilled(t *testing.T) {
	c := jstest.Start(t, 3)
	ctx := context.Background()
	o := Options{URLs: c.URLs()[:1], Stream: "TGCLOSE", Timeout: 2 * time.Second, RetentionInterval: -1}
	s, err := Open(ctx, o)
	require.NoError(t, err)
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "c", MinActivePartitions: 1}))
	c.Kill(0)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
			{Topic: "c", Messages: []topicstore.Message{{Partition: 0, Body: []byte("x")}}}}})
		if err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "no commit within 30s of the kill: %v", err)
		time.Sleep(10 * time.Millisecond)
	}
	t0 := time.Now()
	require.NoError(t, s.Close())
	d := time.Since(t0)
	t.Logf("closed in %v", d)
	// Close waits for the farewell heartbeat (groups.FarewellWait: the stream
	// may be electing a leader) and the consumer's stop (closeStopWait),
	// each bounded; it once waited 10.7 s. A second of slack for a busy
	// machine (1.9 s was seen in CI with the old bound of 1.5 s).
	require.Less(t, d, groups.FarewellWait+closeStopWait+time.Second)
}

// TestUnavailableErrors: what a cluster that cannot answer now makes a
// statement fail with is ErrUnavailable (57P03, "run it again"), whatever
// nats.go calls it; anything else passes through.
func TestUnavailableErrors(t *testing.T) {
	s := newStore(Options{Stream: DefaultStream}.withDefaults(), 1)
	for _, err := range []error{nats.ErrNoResponders, natsjs.ErrNoStreamResponse, context.DeadlineExceeded, nats.ErrTimeout,
		nats.ErrConnectionClosed, nats.ErrDisconnected, nats.ErrConnectionReconnecting, fmt.Errorf("publish: %w", nats.ErrDisconnected)} {
		if got := s.unavailable(err); !errors.Is(got, topicstore.ErrUnavailable) {
			t.Errorf("unavailable(%v) = %v, not ErrUnavailable", err, got)
		}
	}
	if other := errors.New("other"); s.unavailable(other) != other {
		t.Error("an error that says nothing of the cluster's availability was wrapped")
	}
}
