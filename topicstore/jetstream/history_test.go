package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestHistoryBoundedByLiveState: after 600 commits (10 producers, a
// consumer moving over 2 partitions) and retention removing every data
// message, the stream holds the live state (the catalog record, each
// partition's last record batch and retention start, each producer's and
// each position's last message) and a small constant of the gateway's own
// (its heartbeat, chain, lease), not one message per commit: producers,
// positions, starts and the lease roll their subjects up, the chain is
// purged by maintenance; producers that expired leave the stream.
func TestHistoryBoundedByLiveState(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	s := openStores(t, c, Options{Replicas: 1, Stream: "TGHIST", Timeout: 2 * time.Second, RetentionInterval: -1}, 1)[0]
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, RetentionPeriod: time.Minute,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	const commits, producers = 600, 10
	for i := range commits {
		p := fmt.Sprintf("p%d", i%producers)
		_, err := s.Commit(ctx, &topicstore.CommitRequest{
			Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
				{Partition: -1, ProducerID: p, SeqNo: int64(i/producers + 1), HasSeqNo: true, Body: []byte("x")}}}}})
		require.NoError(t, err)
		if i%3 == 0 {
			pos, err := s.Positions("t", "c")
			require.NoError(t, err)
			for part, off := range pos {
				ti, _ := s.Topic("t")
				if end := ti.Partitions[part].EndOffset; end > off {
					require.NoError(t, s.SetPosition(ctx, "t", "c", part, end))
				}
			}
		}
	}
	before := streamMessages(t, s)
	_, err := s.RunRetention(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	s.purgeChain(ctx)
	after := streamMessages(t, s)
	// The live state: 1 catalog record; per partition its last record
	// batch and its start; per producer and per position its last message.
	live := 1 + 2*2 + producers + 2
	t.Logf("%d commits: %d stream messages before retention, %d after; live state %d", commits, before, after, live)
	require.LessOrEqual(t, after, uint64(live+10), "the stream holds the live state and a small constant")

	// Once the producers expire (14 days by default) they leave too; one
	// expiry notice is left for the topic.
	_, err = s.RunRetention(ctx, time.Now().Add(topicstore.DefaultProducerExpiry+time.Hour))
	require.NoError(t, err)
	expired := streamMessages(t, s)
	t.Logf("after the producers expired: %d stream messages", expired)
	require.Equal(t, after-producers+1, expired, "the producers' messages are gone, one notice came")
}

func streamMessages(t *testing.T, s *Store) uint64 {
	t.Helper()
	info, err := s.stream.Info(context.Background())
	require.NoError(t, err)
	return info.State.Msgs
}
