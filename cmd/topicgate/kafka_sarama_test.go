package main

import (
	"context"
	"errors"
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

// TestKafkaSaramaTransactions: sarama's transactional producer aborts a
// transaction, then answers each message of a topic SQL filled in a
// transaction of its own that also commits the group's offset
// (AddOffsetsToTxn); a second producer of the same transactional id
// fences the first. SQL reads each answer once, nothing aborted or
// fenced, and the group's positions at the end of the input.
func TestKafkaSaramaTransactions(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	fillTopic(t, c, "sin", 2, 10)
	exec(t, c, "CREATE TOPIC sout WITH (min_active_partitions = 2)")
	newProducer := func() sarama.SyncProducer {
		cfg := sarama.NewConfig()
		cfg.Producer.Idempotent = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Producer.Return.Successes = true
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
		cfg.Producer.Transaction.ID = "sarama-etl"
		cfg.Net.MaxOpenRequests = 1
		p, err := sarama.NewSyncProducer([]string{a.KafkaAddr()}, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	p := newProducer()
	require.NoError(t, p.BeginTxn())
	_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sout", Value: sarama.StringEncoder("aborted")})
	require.NoError(t, err)
	require.Equal(t, int64(-1), off, "a staged record's offset is unknown until the commit")
	require.NoError(t, p.AbortTxn())

	consumer, err := sarama.NewConsumer([]string{a.KafkaAddr()}, sarama.NewConfig())
	require.NoError(t, err)
	defer consumer.Close()
	for part := range int32(2) {
		pc, err := consumer.ConsumePartition("sin", part, sarama.OffsetOldest)
		require.NoError(t, err)
		for range 5 {
			m := <-pc.Messages()
			require.NoError(t, p.BeginTxn())
			_, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "sout", Partition: part, Value: sarama.StringEncoder("out-" + string(m.Value))})
			require.NoError(t, err)
			require.NoError(t, p.AddMessageToTxn(m, "sgroup", nil))
			require.NoError(t, p.CommitTxn())
		}
		require.NoError(t, pc.Close())
	}

	require.NoError(t, p.BeginTxn())
	_, _, err = p.SendMessage(&sarama.ProducerMessage{Topic: "sout", Value: sarama.StringEncoder("zombie")})
	require.NoError(t, err)
	fresh := newProducer()
	err = p.CommitTxn()
	require.Error(t, err, "the fenced producer's commit")
	// sarama 1.61 sends EndTxn v2 (which knows PRODUCER_FENCED, as Kafka
	// answers it) but has no name for code 90.
	var ke sarama.KError
	require.True(t, errors.As(err, &ke), "%v", err)
	require.Equal(t, sarama.KError(90), ke, "PRODUCER_FENCED")
	require.NoError(t, fresh.BeginTxn())
	_, _, err = fresh.SendMessage(&sarama.ProducerMessage{Topic: "sout", Value: sarama.StringEncoder("fresh")})
	require.NoError(t, err)
	require.NoError(t, fresh.CommitTxn())

	got := queryText(t, c, "SELECT convert_from(data, 'UTF8') FROM sout")
	sort.Strings(got)
	require.Equal(t, []string{"fresh", "out-0", "out-1", "out-2", "out-3", "out-4", "out-5", "out-6", "out-7", "out-8", "out-9"}, got)
	require.Equal(t, []string{"10"}, queryText(t, c, "SELECT sum(committed_offset)::text FROM sys.consumers WHERE topic = 'sin' AND consumer = 'sgroup'"))
}
