package jetstream

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/snapshot"

	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// snapWorkload commits n record batches to topics t (4 partitions, a
// consumer c, a shared consumer q) and u, with producers, and moves c.
func snapWorkload(t *testing.T, s *Store, from, n int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < from+n; i++ {
		topic := "t"
		if i%5 == 0 {
			topic = "u"
		}
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic, Messages: []topicstore.Message{
			{Partition: -1, ProducerID: fmt.Sprintf("p%d", i%7), SeqNo: int64(i + 1), HasSeqNo: true, Body: []byte(fmt.Sprintf("m%d", i))},
			{Partition: -1, Body: []byte("x")}}}}})
		require.NoError(t, err)
		if i%10 == 9 {
			require.NoError(t, s.SetPosition(ctx, "t", "c", int32(i/10%4), int64(i/10)))
		}
	}
}

// scanAll is every message of topic as partition/offset:body.
func scanAll(t *testing.T, s *Store, topic string) []string {
	t.Helper()
	ti, err := s.Topic(topic)
	require.NoError(t, err)
	var out []string
	for p := range ti.Partitions {
		require.NoError(t, s.Scan(context.Background(), topic, topicstore.ScanRange{Partition: int32(p), End: -1}, func(m *topicstore.Message) bool {
			out = append(out, fmt.Sprintf("%d/%d:%s", m.Partition, m.Offset, m.Body))
			return true
		}))
	}
	return out
}

// TestSnapshotStart: a gateway that starts from a snapshot (taken, then
// followed by more commits, retention and a shared consumer's steps)
// holds the same state as one that replays the whole stream, reads the
// same messages, and commits on; a second snapshot finds every gateway's
// digest equal to its writer's.
func TestSnapshotStart(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGSNAP", Timeout: 2 * time.Second, RetentionInterval: -1, SnapshotEvery: 1}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 4,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}, {Name: "q", Shared: true}}}))
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "u", MinActivePartitions: 2, RetentionPeriod: time.Hour}))
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "gone", MinActivePartitions: 2}))
	snapWorkload(t, a, 0, 300)
	got, err := a.Acquire(ctx, topicstore.AcquireRequest{Topic: "t", Consumer: "q", Session: 1, Max: 5})
	require.NoError(t, err)
	require.NotEmpty(t, got)

	require.NoError(t, a.snap.Write(ctx))
	a.mu.Lock()
	point := a.fold.Snap.Last
	a.mu.Unlock()
	require.NotZero(t, point)

	// After the snapshot: more commits, a consumer added with read_from,
	// retention that cuts u's batches the snapshot holds.
	snapWorkload(t, a, 300, 200)
	require.NoError(t, a.catalog.Change(ctx, "t", func(old *fold.Topic) (*fold.CatalogRec, error) {
		rec := old.Rec
		rec.Config = topicstore.CloneConfig(old.Rec.Config)
		rec.Config.Consumers = append(rec.Config.Consumers, topicstore.ConsumerConfig{Name: "late", ReadFrom: time.Now().Add(-time.Hour)})
		return &rec, nil
	}))
	_, err = a.RunRetention(ctx, time.Now().Add(2*time.Hour))
	require.NoError(t, err)
	// A topic in the snapshot, dropped since: its tombstone rolled its
	// creation up, and a start from the snapshot skips it.
	require.NoError(t, a.DropTopic(ctx, "gone"))

	b := openStores(t, c, o, 1)[0] // from the snapshot
	full := o
	full.IgnoreSnapshots = true
	f := openStores(t, c, full, 1)[0]
	b.mu.Lock()
	from := b.fold.Snap.From
	b.mu.Unlock()
	require.Equal(t, point, from, "b started from the snapshot")
	f.mu.Lock()
	require.Zero(t, f.fold.Snap.From)
	f.mu.Unlock()
	require.NoError(t, a.sync(ctx))
	require.NoError(t, b.sync(ctx))
	require.NoError(t, f.sync(ctx))
	require.Equal(t, foldDigest(t, f), foldDigest(t, b), "a start from the snapshot folds what a full replay does")
	for _, topic := range []string{"t", "u"} {
		require.Equal(t, scanAll(t, f, topic), scanAll(t, b, topic), topic)
	}
	require.Equal(t, scanAll(t, a, "t"), scanAll(t, b, "t"))

	// b commits on, and dedup holds across the snapshot: p1's seqno 2
	// (stored before it) is a duplicate.
	res, err := b.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
		{Partition: -1, ProducerID: "p1", SeqNo: 2, HasSeqNo: true, Body: []byte("again")}}}}})
	require.NoError(t, err)
	require.Zero(t, res.Writes[0].Written, "a duplicate")
	snapWorkload(t, b, 500, 20)

	// A second snapshot, by b this time: every gateway folded its point
	// and finds its digest equal to b's.
	require.NoError(t, b.snap.Write(ctx))
	for _, s := range []*Store{a, b, f} {
		require.NoError(t, s.sync(ctx))
		require.Zero(t, s.snap.Mismatches())
		s.mu.Lock()
		require.Equal(t, b.fold.Snap.Last, s.fold.Snap.Last)
		s.mu.Unlock()
	}
	require.Equal(t, int64(1), b.snap.Written())

	// A gateway whose state differs (here a partition's byte count on a,
	// changed by hand) says so at the next snapshot; the others do not.
	a.mu.Lock()
	a.fold.ByName["t"].Parts[0].Bytes++
	a.mu.Unlock()
	require.NoError(t, b.snap.Write(ctx))
	for _, s := range []*Store{a, f} {
		require.NoError(t, s.sync(ctx))
	}
	require.Equal(t, int64(1), a.snap.Mismatches(), "a's state differs from b's")
	require.Zero(t, b.snap.Mismatches())
	require.Zero(t, f.snap.Mismatches())
	require.Equal(t, int64(1), a.ClusterStats(ctx).SnapshotMismatches)
}

// TestSnapshotDue: maintenance writes a snapshot once the stream has
// grown by SnapshotEvery messages and a quarter of the retained batches.
func TestSnapshotDue(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGSNAPD", Timeout: 2 * time.Second, RetentionInterval: -1, SnapshotEvery: 50}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 4, Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "u", MinActivePartitions: 1}))
	require.NoError(t, a.snap.Maybe(ctx))
	require.Zero(t, a.snap.Written(), "a few messages: not due")
	snapWorkload(t, a, 0, 60)
	require.NoError(t, a.snap.Maybe(ctx))
	require.Equal(t, int64(1), a.snap.Written())
	require.NoError(t, a.snap.Maybe(ctx))
	require.Equal(t, int64(1), a.snap.Written(), "nothing new: not due")
	cs := a.ClusterStats(ctx)
	require.NotZero(t, cs.SnapshotSeq)
}

// TestSnapshotFallback: a snapshot the gateway cannot use (corrupt, of a
// newer format) is skipped with a warning: the gateway replays the stream
// and starts all the same.
func TestSnapshotFallback(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGSNAPF", Timeout: 2 * time.Second, RetentionInterval: -1}
	a := openStores(t, c, o, 1)[0]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 4,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}, {Name: "q", Shared: true}}}))
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "u", MinActivePartitions: 2}))
	snapWorkload(t, a, 0, 50)
	require.NoError(t, a.snap.Write(ctx))
	// The digest without the last sequence applied: each gateway that
	// opens publishes a heartbeat.
	digest := func(s *Store) string {
		d := foldDigest(t, s)
		return d[strings.Index(d, "\n"):]
	}
	want := digest(a)

	obs, err := a.js.ObjectStore(ctx, a.snap.Bucket())
	require.NoError(t, err)
	good, err := obs.GetBytes(ctx, snapshot.Object)
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"newer format": append(append([]byte(nil), fold.SnapMagic...), 9),
		"truncated":    good[:len(good)-3],
		"garbage":      []byte("not a snapshot at all"),
	} {
		_, err := obs.PutBytes(ctx, snapshot.Object, data)
		require.NoError(t, err)
		s := openStores(t, c, o, 1)[0]
		s.mu.Lock()
		require.Zero(t, s.fold.Snap.From, name)
		s.mu.Unlock()
		require.Equal(t, want, digest(s), name)
	}

	// A snapshot that does not fit the catalog (a topic the catalog
	// lacks): Open starts again with a full replay.
	_, err = obs.PutBytes(ctx, snapshot.Object, reencode(t, good, func(m *fold.SnapMeta) { m.Topics[0].ID = 99999 }))
	require.NoError(t, err)
	s := openStores(t, c, o, 1)[0]
	s.mu.Lock()
	require.Zero(t, s.fold.Snap.From)
	s.mu.Unlock()
	require.Equal(t, want, digest(s))
}

// reencode changes a snapshot's JSON part.
func reencode(t *testing.T, b []byte, f func(*fold.SnapMeta)) []byte {
	t.Helper()
	rest := b[len(fold.SnapMagic):]
	_, n := binary.Uvarint(rest)
	rest = rest[n:]
	l, n := binary.Uvarint(rest)
	var m fold.SnapMeta
	require.NoError(t, json.Unmarshal(rest[n:n+int(l)], &m))
	f(&m)
	js, err := json.Marshal(m)
	require.NoError(t, err)
	out := append([]byte(nil), fold.SnapMagic...)
	out = binary.AppendUvarint(out, fold.SnapVersion)
	out = binary.AppendUvarint(out, uint64(len(js)))
	out = append(out, js...)
	return append(out, rest[n+int(l):]...)
}
