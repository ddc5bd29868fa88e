package jetstream

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestBarrierSeesOtherGatewaysCommits: after Barrier, a gateway's view
// holds every commit another gateway had acknowledged before the call,
// each time (without it the view lags now and then: counted, not
// asserted); concurrent callers share rounds.
func TestBarrierSeesOtherGatewaysCommits(t *testing.T) {
	c := jstest.Start(t, 3)
	st := openStores(t, c, Options{Replicas: 3, Stream: "TGBARRIER"}, 2)
	a, b := st[0], st[1]
	ctx := context.Background()
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	require.NoError(t, b.Barrier(ctx))
	end := func() int64 {
		ti, err := b.Topic("t")
		require.NoError(t, err)
		return ti.Partitions[0].EndOffset
	}
	const n = 200
	stale := 0
	for i := int64(1); i <= n; i++ {
		_, err := a.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{{Partition: 0, Body: []byte("m")}}}}})
		require.NoError(t, err)
		if end() < i {
			stale++
		}
		require.NoError(t, b.Barrier(ctx))
		require.Equal(t, i, end(), "commit %d, acknowledged through a, not seen through b after a barrier", i)
	}
	t.Logf("without a barrier, b lagged a's acknowledged commit %d times of %d", stale, n)

	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, b.Barrier(ctx))
		}()
	}
	wg.Wait()
}
