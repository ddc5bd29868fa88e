package jetstream

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestTopicCreatedElsewhereKnownAtOnce: a topic created through one store
// (gateway) is known to another on the same stream as soon as the
// creation returned, though the other's fold applies it a moment later: a
// name a store does not know makes it catch up with the stream before it
// answers ErrTopicNotFound. Writes and reads through the other find it.
func TestTopicCreatedElsewhereKnownAtOnce(t *testing.T) {
	c := jstest.Start(t, 3)
	ctx := context.Background()
	stores := openStores(t, c, Options{Stream: "TGKNOWN"}, 2)
	a, b := stores[0], stores[1]
	for i := range 30 {
		name := fmt.Sprintf("t%d", i)
		require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: name, MinActivePartitions: 1}))
		if i%2 == 0 {
			_, err := b.Topic(name)
			require.NoError(t, err, "topic %s through the other store", name)
		} else {
			res, err := b.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
				{Topic: name, Messages: []topicstore.Message{{Partition: 0, Body: []byte("x")}}}}})
			require.NoError(t, err, "write to topic %s through the other store", name)
			require.Equal(t, 1, res.Writes[0].Written)
		}
	}
	_, err := b.Topic("never")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}

// TestGatewaysContendForOnePartition: two stores (gateways) whose writers
// all append to one partition. Their batches keep meeting another's
// publish still being proposed (10164) or a fold that has not seen it yet
// (10071); every commit still succeeds, and the offsets are contiguous.
func TestGatewaysContendForOnePartition(t *testing.T) {
	c := jstest.Start(t, 3)
	ctx := context.Background()
	o := Options{Stream: "TGHOT"}
	stores := openStores(t, c, o, 2)
	require.NoError(t, stores[0].CreateTopic(ctx, topicstore.TopicConfig{Name: "hot", MinActivePartitions: 1}))
	const writers, each = 8, 150
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			s := stores[w%2]
			for i := range each {
				_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "hot", Messages: []topicstore.Message{
					{Partition: 0, ProducerID: fmt.Sprint("w", w), SeqNo: int64(i + 1), HasSeqNo: true, Body: []byte("x")}}}}})
				if err != nil {
					errs <- fmt.Errorf("writer %d commit %d: %w", w, i, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	for i, s := range stores {
		// Refusals come from the leader: its connection stays in use.
		forgot := s.leaders.Forgot()
		require.Zero(t, forgot, "store %d forgot the leader (%d re-plans)", i, s.commitReplans.Load())
	}
	require.Positive(t, stores[0].commitReplans.Load()+stores[1].commitReplans.Load(), "the gateways met")
	ti, err := openStores(t, c, o, 1)[0].Topic("hot") // a store opened now has folded all of it

	require.NoError(t, err)
	require.Equal(t, int64(writers*each), ti.Partitions[0].EndOffset)
}

// openStores opens n stores on c with o (its URLs filled in), closed when
// the test ends: n gateways on one stream.
func openStores(t *testing.T, c *jstest.Cluster, o Options, n int) []*Store {
	t.Helper()
	o.URLs = c.URLs()
	var out []*Store
	for range n {
		s, err := Open(context.Background(), o)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}
