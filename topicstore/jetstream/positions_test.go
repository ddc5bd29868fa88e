package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jstest"
)

// TestPositionAfterConsumerReadded: a consumer dropped and added again
// starts from the beginning, and its next conditional position commit
// succeeds at once: the position subject's last sequence is kept for the
// commit's expectation (forgetting it made every such commit refused
// until its retries ran out).
func TestPositionAfterConsumerReadded(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	s, err := jetstream.Open(ctx, jetstream.Options{URLs: c.URLs(), Replicas: 1, Stream: "TGPOS", RetentionInterval: -1})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	_, err = s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
		{Partition: -1, Body: []byte("a")}, {Partition: -1, Body: []byte("b")}}}}})
	require.NoError(t, err)
	move := func(from, to int64) error {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Positions: []topicstore.PositionUpdate{
			{Topic: "t", Consumer: "c", Partition: 0, Offset: to, Expect: from}}})
		return err
	}
	require.NoError(t, move(0, 1))
	setConsumers := func(cs ...topicstore.ConsumerConfig) {
		require.NoError(t, s.AlterTopic(ctx, "t", func(cfg *topicstore.TopicConfig) error { cfg.Consumers = cs; return nil }))
	}
	setConsumers()
	setConsumers(topicstore.ConsumerConfig{Name: "c"})
	pos, err := s.Positions("t", "c")
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 0}, pos, "added again: from the start")
	start := time.Now()
	require.NoError(t, move(0, 2))
	require.Less(t, time.Since(start), time.Second)
	pos, err = s.Positions("t", "c")
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 2}, pos)
}
