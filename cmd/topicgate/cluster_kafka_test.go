package main

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaGateways starts n gateways with a Kafka door each on one
// cluster, closed when the test ends.
func kafkaGateways(t *testing.T, n int) []*app {
	t.Helper()
	g := startGateways(t, 0, 5*time.Second)
	var gws []*app
	for range n {
		cfg := g.gatewayConfig()
		cfg.KafkaListen = "127.0.0.1:0"
		a, err := start(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		gws = append(gws, a)
	}
	return gws
}

// TestClusterKafkaGroupGateways: a Kafka group's offsets are in the
// cluster, so a group consumer on another gateway resumes where one on
// the first gateway committed (membership is each gateway's own; offsets
// are shared).
func TestClusterKafkaGroupGateways(t *testing.T) {
	gws := kafkaGateways(t, 2)
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
	gws := kafkaGateways(t, 2)
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

// TestClusterKafkaGroupAcrossGateways: two members of one group that
// reached two different gateways form one group: one gateway coordinates
// it (sys.kafka_groups there lists both members) and the other runs its
// member's requests there, so the partitions are shared, each to one
// member. When the coordinating gateway stops, the other gateway
// coordinates the group and loads it from the store: the survivor goes
// on as the member of the same generation (its commit is taken, the view
// lists both members as they were), and once the member that went with
// the first gateway misses its session timeout, the survivor takes every
// partition.
func TestClusterKafkaGroupAcrossGateways(t *testing.T) {
	gws := kafkaGateways(t, 2)
	fillTopic(t, connect(t, gws[0]), "events", 4, 8)
	session := kgo.SessionTimeout(3 * time.Second)
	m0 := newGroupConsumerOpts(t, gws[0], "workers", []string{"events"}, session)
	require.Len(t, waitAssigned(t, m0, 4), 4)
	m1 := newGroupConsumerOpts(t, gws[1], "workers", []string{"events"}, session)
	require.Len(t, waitAssigned(t, m1, 2), 2)
	require.Len(t, waitAssigned(t, m0, 2), 2)

	coord := -1
	for i, a := range gws {
		n := queryText(t, connect(t, a), `SELECT count(*)::text FROM sys.kafka_groups WHERE "group" = 'workers'`)
		switch n[0] {
		case "2":
			require.Equal(t, -1, coord, "one coordinator")
			coord = i
		case "0":
		default:
			t.Fatalf("gateway %d coordinates %s members of workers", i, n[0])
		}
	}
	require.GreaterOrEqual(t, coord, 0, "a gateway coordinates both members")

	// The coordinator goes first, so its member cannot leave: the
	// survivor's requests go to the gateway the remaining ones name now,
	// which loads the group as stored.
	survivor := []*groupConsumer{m0, m1}[1-coord]
	require.Len(t, survivor.poll(t, 4), 4) // its two partitions' records, to commit below
	before := groupMembers(t, gws[coord], "workers")
	require.Len(t, before, 2)
	require.NoError(t, gws[coord].Close())
	require.NoError(t, survivor.cl.CommitUncommittedOffsets(testCtx(t)), "the survivor commits as the member it was")
	require.Equal(t, before, groupMembers(t, gws[1-coord], "workers"), "the group as it was, loaded by the other gateway")
	require.Len(t, waitAssigned(t, survivor, 4), 4, "the other gateway's member takes every partition once the gone one's session expires")
}

// TestClusterKafkaClientLosesGateway: a client given two gateways as
// seeds goes on through the second when the first, the one it was using,
// stops: every gateway is broker 0 at the address the client reached, so
// the client's next metadata names broker 0 at the other address. Its
// idempotent producer's records are all there once, and a consumer
// reads on from where it was.
func TestClusterKafkaClientLosesGateway(t *testing.T) {
	gws := kafkaGateways(t, 2)
	exec(t, connect(t, gws[1]), "CREATE TOPIC lose WITH (min_active_partitions = 2)")
	ctx := testCtx(t)
	// A short metadata minimum age: the clients ask again soon after the
	// gateway goes (franz-go's default waits 5 s).
	seeds := kgo.Opt(kgo.SeedBrokers(gws[0].KafkaAddr(), gws[1].KafkaAddr()))
	fast := kgo.MetadataMinAge(100 * time.Millisecond)
	reached := &brokerConnects{}
	prod, err := kgo.NewClient(seeds, fast, kgo.DefaultProduceTopic("lose"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.WithHooks(reached))
	require.NoError(t, err)
	defer prod.Close()
	cons, err := kgo.NewClient(seeds, fast, kgo.ConsumeTopics("lose"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	produce := func(from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprint(i))})
		}
		require.NoError(t, prod.ProduceSync(ctx, recs...).FirstErr())
	}
	read := func(n int) []string {
		var out []string
		for len(out) < n {
			fs := cons.PollFetches(ctx)
			require.NoError(t, ctx.Err())
			fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
		}
		return out
	}
	produce(0, 50)
	require.Len(t, read(50), 50)
	// Stop the gateway the producer reached (a client picks a seed at
	// random): it goes on through the other; the consumer too, if it
	// had reached the same one.
	require.NotEmpty(t, reached.addr())
	gone, left := 0, 1
	if reached.addr() == gws[1].KafkaAddr() {
		gone, left = 1, 0
	}
	require.NoError(t, gws[gone].Close())
	produce(50, 100)
	got := read(50)
	require.Len(t, got, 50)
	require.Equal(t, []string{"100 100"}, queryText(t, connect(t, gws[left]), "SELECT count(DISTINCT data)::text || ' ' || count(*) FROM lose"))
}

// brokerConnects remembers the address of the last broker 0 (not a seed)
// a client connected to.
type brokerConnects struct {
	mu   sync.Mutex
	last string
}

func (b *brokerConnects) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil && meta.NodeID == 0 {
		b.mu.Lock()
		b.last = net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
		b.mu.Unlock()
	}
}

func (b *brokerConnects) addr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}
