package jetstream

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/storetest"
)

// sweepStores opens stores on one stream with a session TTL of ttl, each
// with its own clock: real time plus its skew.
func sweepStores(t *testing.T, c *jstest.Cluster, stream string, ttl time.Duration, skews ...*atomic.Int64) []*Store {
	t.Helper()
	var out []*Store
	for _, skew := range skews {
		s, err := Open(context.Background(), Options{URLs: c.URLs(), Replicas: 1, Stream: stream, RetentionInterval: -1, GroupTTL: ttl,
			Clock: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}

// caughtUp waits until s has folded a staged batch's chunks (a staging
// does not wait for any fold).
func caughtUp(t *testing.T, s *Store, sb topicstore.StagedBatch) {
	t.Helper()
	require.NoError(t, s.waitApplied(context.Background(), sb.Chunks[len(sb.Chunks)-1].Seq))
}

// TestSweepDeadGatewayStaging: what a gateway that dies staged, and no
// commit joined, is swept by another once the dead one's heartbeat has
// expired a TTL ago; what it committed by reference stays readable; a
// live gateway's stagings are left alone.
func TestSweepDeadGatewayStaging(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	const ttl = time.Second
	var none, ahead, none2 atomic.Int64
	st := sweepStores(t, c, "TGSWEEP", ttl, &none, &ahead, &none2)
	a, b, o := st[0], st[1], st[2] // o only folds
	stagings := func(s *Store) []string {
		require.NoError(t, s.sync(ctx))
		s.mu.Lock()
		defer s.mu.Unlock()
		var out []string
		for key := range s.fold.Swept.Subjects {
			out = append(out, key)
		}
		require.Len(t, s.fold.Swept.Chunks, func() int {
			n := 0
			for _, ss := range s.fold.Swept.Subjects {
				n += len(ss.Seqs)
			}
			return n
		}())
		return out
	}
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2}))
	done, err := a.StageBatch(ctx, 1, "t", storetest.Messages("done", 2000, 300, "", 0))
	require.NoError(t, err)
	require.Greater(t, len(done.Chunks), 1)
	_, err = a.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Staged: []topicstore.StagedBatch{done}}}})
	require.NoError(t, err)
	open, err := a.StageBatch(ctx, 2, "t", storetest.Messages("open", 2000, 300, "", 0))
	require.NoError(t, err)
	before, _, err := b.StagedMessages(ctx)
	require.NoError(t, err)
	require.EqualValues(t, len(done.Chunks)+len(open.Chunks), before)

	caughtUp(t, b, open)
	gw := a.stage.gw
	require.Equal(t, []string{gw + ".2"}, stagings(o), "a committed staging is forgotten, an open one kept")
	n, err := b.maint.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a lives: its staging stays")

	require.NoError(t, a.Close()) // dies with transaction 2 open
	ahead.Store(int64(3 * ttl))   // b's clock: a's heartbeat expired over a TTL ago
	n, err = b.maint.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, len(open.Chunks), n)
	after, _, err := b.StagedMessages(ctx)
	require.NoError(t, err)
	require.EqualValues(t, len(done.Chunks), after, "the committed chunks stay")
	read := 0
	for p := int32(0); p < 2; p++ {
		require.NoError(t, b.Scan(ctx, "t", topicstore.ScanRange{Partition: p, End: -1}, func(m *topicstore.Message) bool {
			read++
			return true
		}))
	}
	require.Equal(t, 2000, read, "what a committed by reference is readable")
	n, err = b.maint.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a second sweep finds nothing")
	require.Empty(t, stagings(o), "every gateway forgets a swept staging")
	require.Empty(t, stagings(b))

	// A discarded staging goes from the stream and from every fold.
	sb, err := b.StageBatch(ctx, 3, "t", storetest.Messages("gone", 500, 300, "", 0))
	require.NoError(t, err)
	caughtUp(t, o, sb)
	require.Len(t, stagings(o), 1)
	require.NoError(t, b.DiscardStaged(3))
	require.Empty(t, stagings(o))
	left, _, err := b.StagedMessages(ctx)
	require.NoError(t, err)
	require.EqualValues(t, len(done.Chunks), left, "the discarded chunks are gone")
}

// TestSweepFencesLiveGateway: a gateway taken for dead while it lives
// (another's clock runs ahead, as when it is cut off from the cluster)
// loses its open staging to the sweep, and its commit of it is refused
// with ErrStagingSwept, publishing nothing; what it stages afterwards
// commits.
func TestSweepFencesLiveGateway(t *testing.T) {
	c := jstest.Start(t, 1)
	const ttl = time.Second
	var none, ahead atomic.Int64
	st := sweepStores(t, c, "TGFENCE", ttl, &none, &ahead)
	a, b := st[0], st[1]
	ctx := context.Background()
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	sb, err := a.StageBatch(ctx, 1, "t", storetest.Messages("lost", 1000, 300, "", 0))
	require.NoError(t, err)
	caughtUp(t, b, sb)
	ahead.Store(int64(time.Hour))
	n, err := b.maint.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, len(sb.Chunks), n)

	_, err = a.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Staged: []topicstore.StagedBatch{sb}}}})
	require.ErrorIs(t, err, topicstore.ErrStagingSwept)
	ti, err := a.Topic("t")
	require.NoError(t, err)
	require.Zero(t, ti.Partitions[0].EndOffset, "the refused commit published nothing")
	require.NoError(t, a.DiscardStaged(1))

	sb, err = a.StageBatch(ctx, 2, "t", storetest.Messages("kept", 1000, 300, "", 0))
	require.NoError(t, err)
	_, err = a.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Staged: []topicstore.StagedBatch{sb}}}})
	require.NoError(t, err)
	ti, err = a.Topic("t")
	require.NoError(t, err)
	require.EqualValues(t, 1000, ti.Partitions[0].EndOffset)
}
