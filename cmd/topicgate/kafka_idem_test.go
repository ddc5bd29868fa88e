package main

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/kafka"
)

// TestKafkaIdempotentProducer: franz-go's default producer (idempotent)
// gets a producer id and produces to two partitions; the offsets are
// contiguous, and SQL sees each partition's records as the topicgate
// producer kafka/<id>/<partition> with seqnos epoch·2³² + sequence.
func TestKafkaIdempotentProducer(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC idem WITH (min_active_partitions = 2)")
	cl, err := kgo.NewClient(kgo.SeedBrokers(a.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 50 {
		recs = append(recs, &kgo.Record{Topic: "idem", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))})
	}
	require.NoError(t, cl.ProduceSync(testCtx(t), recs...).FirstErr())
	next := map[int32]int64{}
	for _, r := range recs {
		require.Equal(t, next[r.Partition], r.Offset, "record %s", r.Value)
		next[r.Partition]++
	}
	id, epoch, err := cl.ProducerID(testCtx(t))
	require.NoError(t, err)
	require.GreaterOrEqual(t, id, int64(0))
	rows, err := c.Query(context.Background(), "SELECT partition, producer_id, min(seqno), max(seqno), count(*) FROM idem GROUP BY partition, producer_id ORDER BY partition")
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var p, lo, hi, n int64
		var prod string
		require.NoError(t, rows.Scan(&p, &prod, &lo, &hi, &n))
		got = append(got, fmt.Sprintf("%d %s %d..%d %d", p, prod, lo, hi, n))
	}
	require.NoError(t, rows.Err())
	base := int64(epoch) << 32
	require.Equal(t, []string{
		fmt.Sprintf("0 kafka/%d/0 %d..%d 25", id, base, base+24),
		fmt.Sprintf("1 kafka/%d/1 %d..%d 25", id, base, base+24),
	}, got)

	// sys.kafka_producers reads the mapping back: one row per partition,
	// the producer's epoch and the last sequence the store holds.
	rows, err = c.Query(context.Background(), "SELECT partition, producer_id, producer_epoch, last_sequence, last_write_at IS NOT NULL FROM sys.kafka_producers WHERE topic = 'idem' ORDER BY partition")
	require.NoError(t, err)
	got = nil
	for rows.Next() {
		var p, pid int64
		var ep, last int32
		var written bool
		require.NoError(t, rows.Scan(&p, &pid, &ep, &last, &written))
		got = append(got, fmt.Sprintf("%d %d %d %d %v", p, pid, ep, last, written))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{
		fmt.Sprintf("0 %d %d 24 true", id, epoch),
		fmt.Sprintf("1 %d %d 24 true", id, epoch),
	}, got)
}

// initProducer sends InitProducerId (v4) and returns the id and epoch;
// id >= 0 asks for the next epoch of that producer.
func (r *rawKafka) initProducer(id int64, epoch int16, corr int32) (int64, int16) {
	r.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.ProducerID, req.ProducerEpoch = id, epoch
	r.send(request(req, 4, corr))
	got, body := r.response()
	require.Equal(r.t, corr, got)
	resp := kmsg.InitProducerIDResponse{Version: 4}
	require.Equal(r.t, byte(0), body[0], "a flexible response header's empty tags")
	require.NoError(r.t, resp.ReadFrom(body[1:]))
	require.Equal(r.t, int16(0), resp.ErrorCode)
	return resp.ProducerID, resp.ProducerEpoch
}

// TestKafkaIdempotentSequences: a resent batch is DUPLICATE_SEQUENCE_NUMBER
// and writes nothing; a gap or an overlap is OUT_OF_ORDER_SEQUENCE_NUMBER;
// the next epoch starts at sequence 0 and fences the last one
// (INVALID_PRODUCER_EPOCH); a sequence that wraps is out of order. Producer ids come from the store's
// __kafka_producer_ids topic and are never handed out twice.
func TestKafkaIdempotentSequences(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC seqs")
	r := dialKafka(t, a)
	pid, epoch := r.initProducer(-1, -1, 1)
	pid2, _ := r.initProducer(-1, -1, 2)
	require.NotEqual(t, pid, pid2)
	require.Equal(t, int16(0), epoch)
	type step struct {
		vals  []string
		epoch int16
		seq   int32
		code  int16
		base  int64
	}
	for i, s := range []step{
		{[]string{"a", "b"}, 0, 0, 0, 0},
		{[]string{"a", "b"}, 0, 0, kerr.DuplicateSequenceNumber.Code, -1},
		{[]string{"b"}, 0, 1, kerr.DuplicateSequenceNumber.Code, -1},
		{[]string{"x"}, 0, 5, kerr.OutOfOrderSequenceNumber.Code, -1},
		{[]string{"b", "c"}, 0, 1, kerr.OutOfOrderSequenceNumber.Code, -1},
		{[]string{"c"}, 0, 2, 0, 2},
		{[]string{"d"}, 1, 3, kerr.OutOfOrderSequenceNumber.Code, -1},
	} {
		p := r.produceRaw("seqs", recordBatch(s.vals, pid, s.epoch, s.seq, false), int32(10+i))
		require.Equal(t, []any{s.code, s.base}, []any{p.ErrorCode, p.BaseOffset}, "step %d", i)
	}
	id, next := r.initProducer(pid, epoch, 30)
	require.Equal(t, []any{pid, int16(1)}, []any{id, next})
	p := r.produceRaw("seqs", recordBatch([]string{"d"}, pid, 1, 0, false), 31)
	require.Equal(t, []any{int16(0), int64(3)}, []any{p.ErrorCode, p.BaseOffset})
	p = r.produceRaw("seqs", recordBatch([]string{"old"}, pid, 0, 3, false), 32)
	require.Equal(t, kerr.InvalidProducerEpoch.Code, p.ErrorCode)
	// A batch whose sequence wraps to 0 cannot be a seqno that goes on:
	// the producer is told to take a new epoch.
	p = r.produceRaw("seqs", recordBatch([]string{"w1", "w2"}, pid2, 0, math.MaxInt32, false), 33)
	require.Equal(t, kerr.OutOfOrderSequenceNumber.Code, p.ErrorCode)

	var data []string
	rows, err := c.Query(context.Background(), "SELECT convert_from(data, 'UTF8') FROM seqs ORDER BY offset")
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		data = append(data, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"a", "b", "c", "d"}, data)
	var n int64
	require.NoError(t, c.QueryRow(context.Background(), fmt.Sprintf("SELECT count(*) FROM %s", kafka.ProducerIDTopic)).Scan(&n))
	require.Equal(t, int64(2), n, "one message per producer id handed out")
}
