package main

import (
	"context"
	"sort"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

// saramaHandler hands every message it is given to got and marks it
// consumed.
type saramaHandler struct{ got chan string }

func (saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h saramaHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		sess.MarkMessage(m, "")
		h.got <- string(m.Value)
	}
	return nil
}

// TestKafkaSaramaGroup: a sarama consumer group (its default protocol
// version, 2.8) reads every message once and commits as it closes; SQL
// sees the positions, and a second run of the group reads only what came
// after them.
func TestKafkaSaramaGroup(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "orders", 2, 10)
	run := func(n int) []string {
		cfg := sarama.NewConfig()
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
		g, err := sarama.NewConsumerGroup([]string{a.KafkaAddr()}, "billing", cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(testCtx(t))
		h := saramaHandler{got: make(chan string, 100)}
		done := make(chan error, 1)
		go func() { done <- g.Consume(ctx, []string{"orders"}, h) }()
		var out []string
		for len(out) < n {
			select {
			case v := <-h.got:
				out = append(out, v)
			case err := <-done:
				t.Fatalf("Consume returned after %d messages: %v", len(out), err)
			}
		}
		cancel()
		require.NoError(t, <-done)
		require.NoError(t, g.Close()) // commits what was marked
		require.Empty(t, h.got, "more than %d messages", n)
		sort.Strings(out)
		return out
	}
	require.Equal(t, numbers(0, 10), run(10))
	require.Equal(t, []string{"0 5", "1 5"},
		queryText(t, c, "SELECT partition, committed_offset FROM sys.consumers WHERE topic = 'orders' AND consumer = 'billing' ORDER BY partition"))
	exec(t, c, "INSERT INTO orders (partition, data) VALUES (1, '10')")
	require.Equal(t, []string{"10"}, run(1))
}
