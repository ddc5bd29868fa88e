package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	for _, r := range recs {
		require.Equal(t, int64(-1), r.Offset, "a staged record's offset is unknown until the commit")
	}
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
		kgo.DefaultProduceTopic("rout"))
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

// TestKafkaTransactionRefusals: the transaction APIs' refusals, sent as
// raw requests: an id this gateway never initialized, a timeout past the
// maximum, offsets of a group not added, a batch for a partition not
// added, a commit with nothing open; and a transaction whose timeout
// passed is rolled back, its producer told INVALID_PRODUCER_EPOCH until
// it aborts, and then goes on.
func TestKafkaTransactionRefusals(t *testing.T) {
	timedOut := make(chan string, 1)
	cfg := testConfig(t)
	cfg.KafkaListen = "127.0.0.1:0"
	cfg.KafkaOnTxnTimeout = func(id string) { timedOut <- id }
	a := startServer(t, cfg)
	exec(t, connect(t, a), "CREATE TOPIC rt WITH (min_active_partitions = 2)")
	ctx := testCtx(t)
	cl := kafkaClient(t, a)

	init := func(id string, timeoutMs int32) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &id, timeoutMs
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp
	}
	addParts := func(id string, pid int64, epoch int16, parts ...int32) int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "rt", parts
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	endTxn := func(id string, pid int64, epoch int16, commit bool) int16 {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
		resp, err := req.RequestWith(ctx, cl)
		require.NoError(t, err)
		return resp.ErrorCode
	}

	require.Equal(t, kerr.InvalidTransactionTimeout.Code, init("slow", 16*60*1000).ErrorCode)
	require.Equal(t, kerr.InvalidProducerIDMapping.Code, addParts("never", 12345, 0, 0), "an id this gateway never initialized")

	r := init("t1", 60000)
	require.Zero(t, r.ErrorCode)
	pid, epoch := r.ProducerID, r.ProducerEpoch
	require.Equal(t, kerr.InvalidTxnState.Code, endTxn("t1", pid, epoch, true), "a commit with nothing open")
	require.Zero(t, endTxn("t1", pid, epoch, false), "an abort of nothing")
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, addParts("t1", pid, epoch, 7))

	oc := kmsg.NewPtrTxnOffsetCommitRequest()
	oc.TransactionalID, oc.Group, oc.ProducerID, oc.ProducerEpoch = "t1", "g", pid, epoch
	ot := kmsg.NewTxnOffsetCommitRequestTopic()
	ot.Topic = "rt"
	op := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	ot.Partitions = append(ot.Partitions, op)
	oc.Topics = append(oc.Topics, ot)
	ocr, err := oc.RequestWith(ctx, cl)
	require.NoError(t, err)
	require.Equal(t, kerr.InvalidTxnState.Code, ocr.Topics[0].Partitions[0].ErrorCode, "offsets of a group not added")

	// A transactional batch for a partition not added.
	require.Zero(t, addParts("t1", pid, epoch, 0))
	prod := txnClient(t, a, "t2")
	require.NoError(t, prod.BeginTransaction())
	require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Topic: "rt", Partition: 1, Value: []byte("x")}).FirstErr())
	p2, e2, err := prod.ProducerID(ctx)
	require.NoError(t, err)
	require.Equal(t, kerr.InvalidTxnState.Code, produceTxnBatch(t, cl, "t2", p2, e2, 0), "partition 0 was not added")

	// A timeout rolls back; the producer is told so until it aborts.
	r = init("t3", 100)
	require.Zero(t, r.ErrorCode)
	require.Zero(t, addParts("t3", r.ProducerID, r.ProducerEpoch, 0))
	require.Equal(t, "t3", <-timedOut)
	require.Equal(t, kerr.InvalidProducerEpoch.Code, addParts("t3", r.ProducerID, r.ProducerEpoch, 1))
	require.Equal(t, kerr.InvalidProducerEpoch.Code, endTxn("t3", r.ProducerID, r.ProducerEpoch, true))
	require.Zero(t, endTxn("t3", r.ProducerID, r.ProducerEpoch, false))
	require.Zero(t, addParts("t3", r.ProducerID, r.ProducerEpoch, 1), "after the abort it goes on")
	require.Zero(t, endTxn("t3", r.ProducerID, r.ProducerEpoch, false))
}

// produceTxnBatch sends one transactional record batch of producer (pid,
// epoch) for partition part of rt and returns the partition's error code.
func produceTxnBatch(t *testing.T, cl *kgo.Client, id string, pid int64, epoch int16, part int32) int16 {
	t.Helper()
	raw := recordBatch([]string{"y"}, pid, epoch, 1, false)
	binary.BigEndian.PutUint16(raw[21:], 0x10) // transactional
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID, req.Acks, req.TimeoutMillis = &id, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "rt"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), cl)
	require.NoError(t, err)
	return resp.Topics[0].Partitions[0].ErrorCode
}
