package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnClient is a franz-go transactional producer of a's Kafka door.
func txnClient(t testing.TB, a *app, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return kafkaClient(t, a, append([]kgo.Opt{kgo.TransactionalID(id)}, opts...)...)
}

// countRows is SELECT count(*) of a query's rows.
func countRows(t testing.TB, a *app, q string) int {
	t.Helper()
	var n int
	require.NoError(t, connect(t, a).QueryRow(context.Background(), q).Scan(&n))
	return n
}

// TestKafkaTransactionCommitAbort: a transaction's records are invisible
// to SQL and to a read_committed consumer until EndTxn commits them, all
// at once; an aborted transaction leaves nothing; the producer's records
// carry its topicgate producer and seqnos, as an idempotent producer's.
func TestKafkaTransactionCommitAbort(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC tx WITH (min_active_partitions = 2)")
	ctx := testCtx(t)
	cl := txnClient(t, a, "writer")

	require.NoError(t, cl.BeginTransaction())
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "tx", Partition: int32(i % 2), Key: []byte("k"), Value: []byte(strconv.Itoa(i))})
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	require.Equal(t, 0, countRows(t, a, "SELECT count(*) FROM tx"), "staged records are invisible before the commit")
	require.NoError(t, cl.EndTransaction(ctx, kgo.TryCommit))
	require.Equal(t, 10, countRows(t, a, "SELECT count(*) FROM tx"))

	require.NoError(t, cl.BeginTransaction())
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "tx", Partition: 0, Value: []byte("aborted")}).FirstErr())
	require.NoError(t, cl.EndTransaction(ctx, kgo.TryAbort))
	require.Equal(t, 0, countRows(t, a, "SELECT count(*) FROM tx WHERE data = 'aborted'"), "an aborted transaction leaves nothing")

	// The next transaction continues the sequences past the aborted batch.
	require.NoError(t, cl.BeginTransaction())
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "tx", Partition: 0, Value: []byte("after")}).FirstErr())
	require.NoError(t, cl.EndTransaction(ctx, kgo.TryCommit))

	got := consumeN(t, a, "tx", 0, 0, 6, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var vals []string
	for _, r := range got {
		vals = append(vals, string(r.Value))
	}
	require.Equal(t, []string{"0", "2", "4", "6", "8", "after"}, vals)
	id, epoch, err := cl.ProducerID(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, countRows(t, a, fmt.Sprintf(
		"SELECT count(DISTINCT producer_id) FROM tx WHERE producer_id LIKE 'kafka/%d/%%' AND seqno / 4294967296 = %d", id, epoch)))
}

// TestKafkaTransactionFencing: a second InitProducerId of a transactional
// id fences the first instance: its open transaction commits nothing and
// it is told PRODUCER_FENCED; the new instance goes on.
func TestKafkaTransactionFencing(t *testing.T) {
	a := startKafkaServer(t, nil)
	exec(t, connect(t, a), "CREATE TOPIC fence")
	ctx := testCtx(t)
	old := txnClient(t, a, "job")
	require.NoError(t, old.BeginTransaction())
	require.NoError(t, old.ProduceSync(ctx, &kgo.Record{Topic: "fence", Value: []byte("zombie")}).FirstErr())

	fresh := txnClient(t, a, "job")
	require.NoError(t, fresh.BeginTransaction())
	require.NoError(t, fresh.ProduceSync(ctx, &kgo.Record{Topic: "fence", Value: []byte("fresh")}).FirstErr())
	oldID, oldEpoch, _ := old.ProducerID(ctx)
	freshID, freshEpoch, err := fresh.ProducerID(ctx)
	require.NoError(t, err)
	require.Equal(t, oldID, freshID, "a transactional id keeps its producer id")
	require.Greater(t, freshEpoch, oldEpoch)

	err = old.EndTransaction(ctx, kgo.TryCommit)
	require.Error(t, err)
	require.True(t, errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerIDMapping), "%v", err)
	require.NoError(t, fresh.EndTransaction(ctx, kgo.TryCommit))
	rows, err := connect(t, a).Query(ctx, "SELECT convert_from(data, 'UTF8') FROM fence")
	require.NoError(t, err)
	var vals []string
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		vals = append(vals, v)
	}
	require.Equal(t, []string{"fresh"}, vals)
}

// TestKafkaTransactionalReadProcessWrite: franz-go's GroupTransactSession
// consumes a topic as group etl, produces one record per input and
// commits the group's offsets in the same transaction
// (send_offsets_to_transaction); every input is answered exactly once and
// the group's consumer position stands at the end of the input.
func TestKafkaTransactionalReadProcessWrite(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC rin WITH (min_active_partitions = 3)")
	exec(t, c, "CREATE TOPIC rout WITH (min_active_partitions = 3)")
	ctx := testCtx(t)
	const n = 300
	var in []*kgo.Record
	for i := range n {
		in = append(in, &kgo.Record{Topic: "rin", Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))})
	}
	require.NoError(t, kafkaClient(t, a).ProduceSync(ctx, in...).FirstErr())

	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(a.KafkaAddr()), kgo.TransactionalID("etl-1"),
		kgo.ConsumerGroup("etl"), kgo.ConsumeTopics("rin"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(), kgo.DefaultProduceTopic("rout"))
	require.NoError(t, err)
	defer sess.Close()
	done := 0
	for done < n {
		fs := sess.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		require.NoError(t, sess.Begin())
		fs.EachRecord(func(r *kgo.Record) {
			sess.Produce(ctx, &kgo.Record{Key: r.Value, Value: append([]byte("out-"), r.Value...)}, func(_ *kgo.Record, err error) {
				require.NoError(t, err)
			})
		})
		committed, err := sess.End(ctx, kgo.TryCommit)
		require.NoError(t, err)
		require.True(t, committed)
		done += fs.NumRecords()
	}
	rows, err := c.Query(ctx, "SELECT convert_from(data, 'UTF8') FROM rout")
	require.NoError(t, err)
	var outs []string
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		outs = append(outs, v)
	}
	require.NoError(t, rows.Err())
	sort.Strings(outs)
	var want []string
	for i := range n {
		want = append(want, "out-"+strconv.Itoa(i))
	}
	sort.Strings(want)
	require.Equal(t, want, outs, "every input answered exactly once")
	require.Equal(t, n, countRows(t, a, "SELECT sum(committed_offset)::int FROM sys.consumers WHERE topic = 'rin' AND consumer = 'etl'"))
}
