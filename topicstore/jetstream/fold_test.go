package jetstream

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestFoldFillsWhenConsumerStalls: a gateway whose ordered consumer
// delivers nothing (as when its node died, or when its connection moved
// and a new consumer waits for the meta leader) still commits, on a fold
// that fill brings up to date with batched direct gets, past what another
// gateway wrote meanwhile (more than one fill batch).
func TestFoldFillsWhenConsumerStalls(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	stores := openStores(t, c, Options{Replicas: 1, Stream: "TGFILL", Timeout: 2 * time.Second}, 2)
	a, b := stores[0], stores[1]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	_, err := b.Topic("t")
	require.NoError(t, err)
	b.cons.Stop() // b's fold gets nothing from its consumer from now on
	write := func(s *Store, producer string, seq int64) {
		t.Helper()
		res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
			{Partition: 0, ProducerID: producer, SeqNo: seq, HasSeqNo: true, Body: []byte("x")}}}}})
		require.NoError(t, err)
		require.Equal(t, 1, res.Writes[0].Written)
	}
	const n = 400 // three messages each (guard, producer, records): past fillBatch
	for i := range n {
		write(a, "pa", int64(i+1))
	}
	start := time.Now()
	write(b, "pb", 1)
	t.Logf("b's commit on a stalled consumer took %v", time.Since(start))
	ti, err := b.Topic("t")
	require.NoError(t, err)
	require.Equal(t, int64(n+1), ti.Partitions[0].EndOffset)
	var offs []int64
	require.NoError(t, b.Scan(ctx, "t", topicstore.ScanRange{Partition: 0, End: -1}, func(m *topicstore.Message) bool {
		offs = append(offs, m.Offset)
		return true
	}))
	require.Len(t, offs, n+1)
	p, ok := b.Producer("t", "pa")
	require.True(t, ok)
	require.Equal(t, int64(n), p.MaxSeqNo, "b folded a's producer state")
}

// TestLeaderGetMatchesDirectGet: the fallback of a record batch read that
// a lagging replica answered "not found" (leaderGet) returns what a direct
// get does, and a sequence the stream lacks is an error.
func TestLeaderGetMatchesDirectGet(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	s := openStores(t, c, Options{Replicas: 1, Stream: "TGGET"}, 1)[0]
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
		{Partition: 0, Body: []byte("one")}, {Partition: 0, Body: []byte("two")}}}}})
	require.NoError(t, err)
	s.mu.Lock()
	seq := s.fold.ByName["t"].Parts[0].Recs[0].Seq
	s.mu.Unlock()
	direct, err := s.stream.GetMsg(ctx, seq)
	require.NoError(t, err)
	got, err := s.leaderGet(ctx, seq)
	require.NoError(t, err)
	require.Equal(t, direct.Data, got)
	_, err = s.leaderGet(ctx, seq+1000)
	require.ErrorContains(t, err, "is gone from the leader too")
}

// TestOpenFoldsPastTheTimeout: a gateway starts on a stream whose fold
// takes longer than one request's timeout (here 100 ms; about 60k
// messages a second fold here), since the wait at start is bounded by
// progress, not by the timeout (at 5 s a stream of 300k messages could no
// longer be opened).
func TestOpenFoldsPastTheTimeout(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGREPLAY", Timeout: 100 * time.Millisecond}
	first := openStores(t, c, Options{Replicas: 1, Stream: o.Stream}, 1)[0]
	// Guards (tg...g.*) are folded and ignored: the cheapest way to make
	// a long stream.
	const n = 30000
	js := first.js
	var acks []natsjs.PubAckFuture
	for i := range n {
		f, err := js.PublishAsync(first.subj.Guard(uint64(i%64), "x"), nil)
		require.NoError(t, err)
		acks = append(acks, f)
	}
	for _, f := range acks {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			require.NoError(t, err)
		}
	}
	info, err := first.stream.Info(ctx) // what the stream holds before the open
	require.NoError(t, err)
	start := time.Now()
	s := openStores(t, c, o, 1)[0]
	t.Logf("opened on a stream of %d messages in %v (timeout %v)", n, time.Since(start), o.Timeout)
	s.mu.Lock()
	applied := s.applied
	s.mu.Unlock()
	require.GreaterOrEqual(t, applied, info.State.LastSeq, "the open returned with everything before it folded")
}

// TestRecordFields: a record batch's fields read the same from Tg-Rec as
// from the one-field headers that batches written before it carry, and a
// malformed Tg-Rec is an error, not zeros.
func TestRecordFields(t *testing.T) {
	s := &Store{stage: stagings{gw: "g1"}}
	m := nats.NewMsg("x")
	plan.RecordHeaders(m, s.stage.gw, 7, 3, 1700000000000001, 42, 99, 12)
	r, ref, cum, gw, err := fold.RecordFields(m.Header)
	require.NoError(t, err)
	require.Equal(t, fold.Rec{Base: 7, N: 3, WrittenAt: 1700000000000001, Size: 42}, r)
	// The fold holds one entry per retained record batch: 32 bytes.
	require.Equal(t, uintptr(32), unsafe.Sizeof(r))
	require.Equal(t, uint64(12), ref)
	require.Equal(t, int64(99), cum)
	require.Equal(t, "g1", gw)

	old := nats.Header{}
	for k, v := range map[string]string{fold.HBase: "7", fold.HCount: "3", fold.HAt: "1700000000000001", fold.HBytes: "42", fold.HCum: "99", fold.HGw: "g1", fold.HRef: "12"} {
		old.Set(k, v)
	}
	r2, ref2, cum2, gw2, err := fold.RecordFields(old)
	require.NoError(t, err)
	require.Equal(t, []any{r, ref, cum, gw}, []any{r2, ref2, cum2, gw2})

	for _, bad := range []string{"1 2 3", "1 2 x 4 5 g 0", "1 2 3 4 5 g"} {
		h := nats.Header{}
		h.Set(fold.HRec, bad)
		_, _, _, _, err := fold.RecordFields(h)
		require.Error(t, err, bad)
	}
}

// TestForgetWriters: a topic's writers are those that wrote within
// fold.WriterMemory of the newest batch; an older one is forgotten when a new
// writer comes, so the map holds the gateways writing now, not every one
// that ever did.
func TestForgetWriters(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := &fold.Topic{Writers: map[string]time.Time{
		"old": now.Add(-fold.WriterMemory - time.Second), "recent": now.Add(-fold.ContendedFor)}}
	ts.ForgetWriters(now)
	require.Equal(t, map[string]time.Time{"recent": now.Add(-fold.ContendedFor)}, ts.Writers)
}
