package main

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startKafkaServer starts a test server (on the selected store) with the
// Kafka door on 127.0.0.1:0; onWait, when set, is told each time a Fetch
// starts waiting.
func startKafkaServer(t testing.TB, onWait func()) *app {
	t.Helper()
	cfg := testConfig(t)
	cfg.KafkaListen = "127.0.0.1:0"
	cfg.KafkaOnWait = onWait
	return startServer(t, cfg)
}

// kafkaClient is a franz-go client of a's Kafka door (an idempotent
// producer, franz-go's default), producing to the partition each record
// names.
func kafkaClient(t testing.TB, a *app, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(a.KafkaAddr()), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)
	cl, err := kgo.NewClient(opts...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// testCtx is a context that ends with the test, or after a minute.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// consumeN reads n records of topic's partition part from offset from.
func consumeN(t testing.TB, a *app, topic string, part int32, from int64, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {part: kgo.NewOffset().At(from)}}))
	cl := kafkaClient(t, a, opts...)
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "waiting for %d records, have %d", n, len(out))
		for _, e := range fs.Errors() {
			t.Fatalf("fetch %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// TestKafkaMetadata: Metadata names this gateway as broker 0 at the
// address the client reached, the leader of every partition; a topic
// that does not exist is UNKNOWN_TOPIC_OR_PARTITION (no auto-creation),
// an auto-partitioned one INVALID_TOPIC_EXCEPTION.
func TestKafkaMetadata(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC orders WITH (min_active_partitions = 3)")
	exec(t, c, "CREATE TOPIC auto WITH (auto_partitioning_strategy = 'scale_up', max_active_partitions = 4)")
	cl := kafkaClient(t, a)
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"orders", "missing", "auto"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, mt)
	}
	resp, err := req.RequestWith(testCtx(t), cl)
	require.NoError(t, err)
	require.Len(t, resp.Brokers, 1)
	require.Equal(t, []any{int32(0), "127.0.0.1", "topicgate"}, []any{resp.Brokers[0].NodeID, resp.Brokers[0].Host, *resp.ClusterID})
	require.Equal(t, a.KafkaAddr(), fmt.Sprintf("%s:%d", resp.Brokers[0].Host, resp.Brokers[0].Port))
	require.Len(t, resp.Topics, 3)
	orders := resp.Topics[0]
	require.Equal(t, int16(0), orders.ErrorCode)
	require.Len(t, orders.Partitions, 3)
	for i, p := range orders.Partitions {
		require.Equal(t, []any{int32(i), int32(0), []int32{0}}, []any{p.Partition, p.Leader, p.ISR})
	}
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, resp.Topics[1].ErrorCode)
	require.Equal(t, kerr.InvalidTopicException.Code, resp.Topics[2].ErrorCode)

	all := kmsg.NewPtrMetadataRequest() // Topics nil: every topic
	resp, err = all.RequestWith(testCtx(t), cl)
	require.NoError(t, err)
	var names []string
	for _, t := range resp.Topics {
		names = append(names, *t.Topic)
	}
	require.Equal(t, []string{"auto", "orders"}, names)
}

// kafkaValues are record values of varied sizes and bytes (binary,
// empty, compressible, a 1 MiB one).
func kafkaValues() [][]byte {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	return [][]byte{[]byte("hello"), {0, 1, 2, 0xff, 0xfe}, {}, bytes.Repeat([]byte("z"), 5000), big}
}

// TestKafkaProduceConsumeCodecs: a batch of each codec produced through
// the Kafka door is answered with its offsets and consumed back through
// it byte-exact, offset by offset, with its timestamps.
func TestKafkaProduceConsumeCodecs(t *testing.T) {
	a := startKafkaServer(t, nil)
	exec(t, connect(t, a), "CREATE TOPIC codecs WITH (min_active_partitions = 2)")
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()}, {"zstd", kgo.ZstdCompression()}}
	ts := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	next := int64(0)
	for _, cc := range codecs {
		t.Run(cc.name, func(t *testing.T) {
			// A long linger, then Flush: the records go as one batch.
			cl := kafkaClient(t, a, kgo.ProducerBatchCompression(cc.codec), kgo.ProducerLinger(time.Minute),
				kgo.ProducerBatchMaxBytes(16<<20))
			vals := kafkaValues()
			errs := make([]error, len(vals))
			recs := make([]*kgo.Record, len(vals))
			for i, v := range vals {
				recs[i] = &kgo.Record{Topic: "codecs", Partition: 1, Value: v, Timestamp: ts.Add(time.Duration(i) * time.Millisecond)}
				cl.Produce(testCtx(t), recs[i], func(_ *kgo.Record, err error) { errs[i] = err })
			}
			require.NoError(t, cl.Flush(testCtx(t)))
			for i, r := range recs {
				require.NoError(t, errs[i])
				require.Equal(t, next+int64(i), r.Offset, "record %d", i)
			}
			got := consumeN(t, a, "codecs", 1, next, len(vals))
			require.Len(t, got, len(vals))
			for i, r := range got {
				require.Equal(t, next+int64(i), r.Offset)
				require.True(t, bytes.Equal(vals[i], r.Value), "value %d: %d bytes back, %d sent", i, len(r.Value), len(vals[i]))
				require.Equal(t, ts.Add(time.Duration(i)*time.Millisecond).UnixMilli(), r.Timestamp.UnixMilli())
			}
			next += int64(len(vals))
		})
	}
}

// TestKafkaProduceThenSelect: what Kafka produced, SQL reads: data,
// partition, offset, and created_at from the record's timestamp.
func TestKafkaProduceThenSelect(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC k2s WITH (min_active_partitions = 2)")
	ts := time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	cl := kafkaClient(t, a)
	res := cl.ProduceSync(testCtx(t),
		&kgo.Record{Topic: "k2s", Partition: 1, Value: []byte("a"), Timestamp: ts},
		&kgo.Record{Topic: "k2s", Partition: 1, Value: []byte("b"), Timestamp: ts.Add(time.Second)},
		&kgo.Record{Topic: "k2s", Partition: 0, Value: []byte("c"), Timestamp: ts})
	require.NoError(t, res.FirstErr())
	rows, err := c.Query(context.Background(), "SELECT partition, offset, data, created_at FROM k2s ORDER BY partition, offset")
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var p, off int64
		var data []byte
		var at time.Time
		require.NoError(t, rows.Scan(&p, &off, &data, &at))
		got = append(got, fmt.Sprintf("%d/%d %s %s", p, off, data, at.UTC().Format(time.RFC3339Nano)))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{
		"0/0 c 2026-01-02T03:04:05.678Z",
		"1/0 a 2026-01-02T03:04:05.678Z",
		"1/1 b 2026-01-02T03:04:06.678Z",
	}, got)
}

// TestKafkaInsertThenFetch: what SQL inserted, Kafka fetches, with
// created_at as the record timestamp.
func TestKafkaInsertThenFetch(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC s2k WITH (min_active_partitions = 2)")
	exec(t, c, `INSERT INTO s2k (partition, data, created_at) VALUES (1, 'x', '2026-03-04 05:06:07.5+00'), (1, '\x00ff'::bytea, now())`)
	got := consumeN(t, a, "s2k", 1, 0, 2)
	require.Equal(t, []any{"x", int64(0), []byte{0, 0xff}, int64(1)}, []any{string(got[0].Value), got[0].Offset, got[1].Value, got[1].Offset})
	require.Equal(t, time.Date(2026, 3, 4, 5, 6, 7, 500_000_000, time.UTC).UnixMilli(), got[0].Timestamp.UnixMilli())
}

// TestKafkaListOffsets: earliest, latest and by timestamp; a partition
// that does not exist is UNKNOWN_TOPIC_OR_PARTITION.
func TestKafkaListOffsets(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	cfg := testConfig(t)
	cfg.KafkaListen = "127.0.0.1:0"
	cfg.Clock = func() time.Time { return time.Unix(0, now.Load()) }
	a := startServer(t, cfg)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC lo")
	exec(t, c, "INSERT INTO lo (data) VALUES ('a'), ('b')")
	now.Add(int64(time.Second))
	mid := time.Unix(0, now.Load())
	exec(t, c, "INSERT INTO lo (data) VALUES ('c')")
	var end int64
	require.NoError(t, c.QueryRow(context.Background(), "SELECT max(offset) + 1 FROM lo").Scan(&end))
	cl := kafkaClient(t, a)
	list := func(part int32, ts int64) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "lo"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = part, ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		// Straight to broker 0: the client would refuse a partition its
		// metadata does not list before asking.
		kresp, err := cl.Broker(0).Request(testCtx(t), req)
		require.NoError(t, err)
		return kresp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	require.Equal(t, []any{int16(0), int64(0)}, []any{list(0, -2).ErrorCode, list(0, -2).Offset})
	require.Equal(t, end, list(0, -1).Offset)
	at := list(0, mid.UnixMilli())
	require.Equal(t, []any{int16(0), end - 1}, []any{at.ErrorCode, at.Offset})
	require.Equal(t, int64(-1), list(0, mid.Add(time.Hour).UnixMilli()).Offset, "nothing written after")
	require.Equal(t, kerr.UnknownTopicOrPartition.Code, list(7, -1).ErrorCode)
}

// TestKafkaFetchWakesOnInsert: a consumer at the end of a partition
// long-polls (30 s) and is woken by an INSERT through SQL, well before
// its wait ends: the fetch waits on the store's events.
func TestKafkaFetchWakesOnInsert(t *testing.T) {
	waiting := make(chan struct{}, 1)
	a := startKafkaServer(t, func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	})
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC lp")
	cl := kafkaClient(t, a, kgo.FetchMaxWait(30*time.Second),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"lp": {0: kgo.NewOffset().At(0)}}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan kgo.Fetches, 1)
	go func() { got <- cl.PollFetches(ctx) }()
	select {
	case <-waiting:
	case <-ctx.Done():
		t.Fatal("the fetch never waited")
	}
	exec(t, c, "INSERT INTO lp (data) VALUES ('wake')")
	fs := <-got
	require.NoError(t, ctx.Err(), "the fetch was not woken by the INSERT")
	require.NoError(t, fs.Err())
	recs := fs.Records()
	require.Len(t, recs, 1)
	require.Equal(t, "wake", string(recs[0].Value))
}

// TestKafkaOffsetOutOfRange: a fetch past the end is OFFSET_OUT_OF_RANGE,
// which a consumer resets from (here: to the start).
func TestKafkaOffsetOutOfRange(t *testing.T) {
	a := startKafkaServer(t, nil)
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC oor")
	exec(t, c, "INSERT INTO oor (data) VALUES ('a'), ('b')")
	cl := kafkaClient(t, a)
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 100, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "oor"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = 5, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t), cl)
	require.NoError(t, err)
	require.Equal(t, kerr.OffsetOutOfRange.Code, resp.Topics[0].Partitions[0].ErrorCode)
	got := consumeN(t, a, "oor", 0, 5, 2, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.Equal(t, []string{"a", "b"}, []string{string(got[0].Value), string(got[1].Value)})
}
