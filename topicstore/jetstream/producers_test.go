package jetstream

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jstest"
)

// TestExpiredProducersLeave: producers idle for longer than their topic's
// producer_inactivity_period leave the stream (their subjects are purged)
// and every gateway's fold (the expiry notice), while a live one stays;
// an expired producer writes again from seqno 1 through either gateway.
// A fold left wrong by a half-done expiry (the subject purged and no
// notice, or the notice folded and the subject not purged) still commits:
// the refused batch's fresh producers are read back from the stream.
func TestExpiredProducersLeave(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	ss := openStores(t, c, Options{Replicas: 1, Stream: "TGEXPIRE", Timeout: 2 * time.Second, RetentionInterval: -1, Clock: now}, 2)
	a, b := ss[0], ss[1]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, ProducerExpiry: time.Hour}))
	write := func(s *Store, producer string, seqno int64) topicstore.WriteResult {
		t.Helper()
		res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
			{Partition: -1, ProducerID: producer, SeqNo: seqno, HasSeqNo: true, Body: []byte(producer)}}}}})
		require.NoError(t, err)
		return res.Writes[0]
	}
	for i := range 5 {
		for no := int64(1); no <= 3; no++ {
			write(a, fmt.Sprintf("old%d", i), no)
		}
	}
	clock.Add(int64(2 * time.Hour))
	write(b, "live", 1)
	producerSubjects := func() int {
		info, err := a.stream.Info(ctx, natsjs.WithSubjectFilter(a.subj.Filter(fold.KindProducer)))
		require.NoError(t, err)
		return len(info.State.Subjects)
	}
	require.Equal(t, 6, producerSubjects())

	n, err := a.expireProducers(ctx, now())
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.Equal(t, 1, producerSubjects(), "only the live producer's subject is left")
	for _, s := range ss {
		require.NoError(t, s.Sync(ctx))
		s.mu.Lock()
		left := len(s.fold.ByName["t"].Prods)
		s.mu.Unlock()
		require.Equal(t, 1, left, "the folds forgot the expired producers")
	}
	require.Equal(t, topicstore.WriteResult{Written: 1}, write(b, "old0", 1), "an expired producer starts over")
	require.Equal(t, topicstore.WriteResult{Written: 1}, write(a, "old1", 1))
	require.Equal(t, topicstore.WriteResult{Duplicates: 1}, write(b, "old1", 1), "and is a producer again")
	require.Equal(t, topicstore.WriteResult{Duplicates: 1}, write(a, "live", 1), "the live one kept its seqnos")

	// Half-done expiries.
	write(a, "purged", 5)
	write(a, "unpurged", 5)
	clock.Add(int64(2 * time.Hour))
	id := a.fold.ByName["t"].Rec.ID
	require.NoError(t, a.io.purge(ctx, a.subj.Producer(id, "purged"), 0)) // no notice follows
	require.NoError(t, b.Sync(ctx))
	b.mu.Lock()
	delete(b.fold.ByName["t"].Prods, "unpurged") // as if a notice came and the purge did not
	b.mu.Unlock()
	require.Equal(t, topicstore.WriteResult{Written: 1}, write(b, "purged", 1))
	require.Equal(t, topicstore.WriteResult{Written: 1}, write(b, "unpurged", 1))
	require.Equal(t, topicstore.WriteResult{Duplicates: 1}, write(a, "unpurged", 1))
}
