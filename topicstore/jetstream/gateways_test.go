package jetstream_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
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
	open := func() *jetstream.Store {
		s, err := jetstream.Open(ctx, jetstream.Options{URLs: c.URLs(), Stream: "TGKNOWN"})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
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
