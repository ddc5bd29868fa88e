package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/jetstream/plan"
)

// TestGatewayStartsAfterRetention: a gateway started after retention
// purged a partition's first batches folds the rest (the partition
// starts at the retention start) and reports the same partition state as
// a gateway that saw everything, bytes ever written included (Tg-Cum);
// both write on at the right offsets. (It used to fold nothing of that
// partition: end offset 0, -5 messages, its writes refused.)
func TestGatewayStartsAfterRetention(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	o := Options{Stream: "TGRET", Replicas: 1, Clock: clock, RetentionInterval: -1}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "r", MinActivePartitions: 1, RetentionPeriod: time.Hour}))
	write := func(s *Store, n int) {
		for range n {
			_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
				{Topic: "r", Messages: []topicstore.Message{{Partition: 0, Body: []byte("0123456789")}}}}})
			require.NoError(t, err)
		}
	}
	write(a, 5)
	now = now.Add(2 * time.Hour)
	write(a, 3)
	deleted, err := a.RunRetention(ctx, now)
	require.NoError(t, err)
	require.Equal(t, int64(5), deleted)
	b := openStores(t, c, o, 1)[0]
	ta, err := a.Topic("r")
	require.NoError(t, err)
	tb, err := b.Topic("r")
	require.NoError(t, err)
	t.Logf("old gateway: %+v", ta.Partitions[0])
	t.Logf("new gateway: %+v", tb.Partitions[0])
	require.Equal(t, ta.Partitions[0], tb.Partitions[0])
	require.Equal(t, int64(8), tb.Partitions[0].EndOffset)
	require.Equal(t, int64(5), tb.Partitions[0].StartOffset)

	wb8 := ta.Partitions[0].WrittenBytes
	write(b, 2)
	write(a, 1)
	require.NoError(t, b.sync(ctx))
	ta, _ = a.Topic("r")
	tb, _ = b.Topic("r")
	require.Equal(t, ta.Partitions[0], tb.Partitions[0])
	require.Equal(t, int64(11), tb.Partitions[0].EndOffset)
	require.Equal(t, wb8*11/8, ta.Partitions[0].WrittenBytes, "11 messages of one size")
	c3 := openStores(t, c, o, 1)[0]
	t3, _ := c3.Topic("r")
	require.Equal(t, ta.Partitions[0], t3.Partitions[0])
}

// TestFoldErrorRefuses: a stream message the fold cannot apply (here a
// record batch that leaves a gap in a partition's offsets, which no
// gateway writes) makes the gateway's next commit fail with the fold's
// error, and a gateway started afterwards refuse to open, instead of
// answering from a view that stopped following the stream.
func TestFoldErrorRefuses(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Stream: "TGFOLDERR", Replicas: 1, RetentionInterval: -1}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "f", MinActivePartitions: 1}))
	commit := func() error {
		_, err := a.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{
			{Topic: "f", Messages: []topicstore.Message{{Partition: 0, Body: []byte("x")}}}}})
		return err
	}
	require.NoError(t, commit())
	a.mu.Lock()
	id := a.fold.ByName["f"].Rec.ID // its subjects' id (TopicInfo.ID is its creation ordinal)
	a.mu.Unlock()
	m := nats.NewMsg(a.subj.Data(id, 0))
	plan.RecordHeaders(m, a.stage.gw, 100, 1, time.Now().UnixMicro(), 1, 1, 0)
	_, err := a.js.PublishMsg(ctx, m)
	require.NoError(t, err)
	err = commit()
	require.ErrorContains(t, err, "cannot fold the stream")
	require.ErrorContains(t, err, "record batch at offset 100, expected 1")
	t.Log(err)
	o.URLs = c.URLs()
	_, err = Open(ctx, o)
	require.ErrorContains(t, err, "record batch at offset 100, expected 1")
}
