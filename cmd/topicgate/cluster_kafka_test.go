package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterKafkaGroupGateways: a Kafka group's offsets are in the
// cluster, so a group consumer on another gateway resumes where one on
// the first gateway committed (membership is each gateway's own; offsets
// are shared).
func TestClusterKafkaGroupGateways(t *testing.T) {
	g := startGateways(t, 0, 5*time.Second)
	var gws []*app
	for range 2 {
		cfg := g.gatewayConfig()
		cfg.KafkaListen = "127.0.0.1:0"
		a, err := start(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		gws = append(gws, a)
	}
	c := connect(t, gws[0])
	fillTopic(t, c, "orders", 2, 10)

	gc := newGroupConsumer(t, gws[0], "billing", "orders")
	require.Equal(t, numbers(0, 10), gc.poll(t, 10))
	require.NoError(t, gc.cl.CommitUncommittedOffsets(testCtx(t)))
	gc.cl.Close()

	for i := 10; i < 13; i++ {
		exec(t, c, "INSERT INTO orders (partition, data) VALUES ($1, $2)", int32(i%2), []byte(fmt.Sprint(i)))
	}
	gc = newGroupConsumer(t, gws[1], "billing", "orders")
	require.Equal(t, numbers(10, 13), gc.poll(t, 3))
}

// TestClusterKafkaTransactionFencedAcrossGateways: a transactional id
// registered again through another gateway fences the instance on the
// first: the first gateway still holds the old epoch's open transaction,
// and its commit fails in the cluster (the store's producer fence), so
// nothing of it is published; the new instance commits.
func TestClusterKafkaTransactionFencedAcrossGateways(t *testing.T) {
	g := startGateways(t, 0, 5*time.Second)
	var gws []*app
	for range 2 {
		cfg := g.gatewayConfig()
		cfg.KafkaListen = "127.0.0.1:0"
		a, err := start(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		gws = append(gws, a)
	}
	exec(t, connect(t, gws[0]), "CREATE TOPIC fenced")
	ctx := testCtx(t)
	old := txnClient(t, gws[0], "job")
	require.NoError(t, old.BeginTransaction())
	require.NoError(t, old.ProduceSync(ctx, &kgo.Record{Topic: "fenced", Value: []byte("zombie")}).FirstErr())

	fresh := txnClient(t, gws[1], "job")
	require.NoError(t, fresh.BeginTransaction())
	require.NoError(t, fresh.ProduceSync(ctx, &kgo.Record{Topic: "fenced", Value: []byte("fresh")}).FirstErr())
	err := old.EndTransaction(ctx, kgo.TryCommit)
	require.ErrorIs(t, err, kerr.ProducerFenced)
	require.NoError(t, fresh.EndTransaction(ctx, kgo.TryCommit))
	require.Equal(t, []string{"fresh"}, queryText(t, connect(t, gws[0]), "SELECT convert_from(data, 'UTF8') FROM fenced"))
}
