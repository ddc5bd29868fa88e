package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
