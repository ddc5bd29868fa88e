package jetstream

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestOwnBatchFoldedFromWhatWasPublished: a gateway folds a batch it
// published from its own copy once the fold has everything before it
// (waitOwn), so its commits complete even with its ordered consumer
// stopped, and only need the consumer (or fill) for what other gateways
// wrote in between. The two gateways' folds end up identical, and what
// was written reads back whole from each: the shortcut folds exactly what
// the stream holds. Each gateway's record cache holds what it wrote, and
// what it read once.
func TestOwnBatchFoldedFromWhatWasPublished(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	stores := openStores(t, c, Options{Replicas: 1, Stream: "TGOWN", Timeout: 2 * time.Second}, 2)
	a, b := stores[0], stores[1]
	require.NoError(t, a.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	require.NoError(t, b.sync(ctx))
	a.cons.Stop() // from now on a's fold gets nothing from its consumer
	write := func(s *Store, producer string, seq int64, part int32) {
		t.Helper()
		res, err := s.Commit(ctx, &topicstore.CommitRequest{
			Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
				{Partition: part, ProducerID: producer, SeqNo: seq, HasSeqNo: true, Body: []byte(fmt.Sprint(producer, seq))}}}},
			Positions: []topicstore.PositionUpdate{{Topic: "t", Consumer: "c", Partition: part, Offset: seq - 1, Expect: -1}}})
		require.NoError(t, err)
		require.Equal(t, 1, res.Writes[0].Written)
	}
	before := a.ownApplied.Load()
	for i := range 20 {
		write(a, "pa", int64(i+1), 0)
	}
	require.Equal(t, int64(20), a.ownApplied.Load()-before, "a folded each of its batches itself")
	write(b, "pb", 1, 1) // a's fold must get this one by fill before its next batch
	write(a, "pa", 21, 0)
	write(a, "pa", 22, 0)
	require.NoError(t, b.sync(ctx))
	require.NoError(t, a.sync(ctx))
	require.Equal(t, foldDigest(t, b), foldDigest(t, a))
	// a wrote 22 of the 23 record batches, so it fetches one; b wrote one.
	// A second read of each is all from the cache.
	for round := range 2 {
		for i, s := range stores {
			h0, m0, _ := s.reads.Cache().Stats()
			require.NoError(t, s.Scan(ctx, "t", topicstore.ScanRange{Partition: 0, End: -1}, func(*topicstore.Message) bool { return true }))
			require.NoError(t, s.Scan(ctx, "t", topicstore.ScanRange{Partition: 1, End: -1}, func(*topicstore.Message) bool { return true }))
			h1, m1, _ := s.reads.Cache().Stats()
			want := [][]int64{{22, 1}, {1, 22}}[i]
			if round == 1 {
				want = []int64{23, 0}
			}
			require.Equal(t, want, []int64{h1 - h0, m1 - m0}, "gateway %d, round %d: cache hits and misses", i, round)
		}
	}
	for _, s := range stores {
		var got []string
		for p := int32(0); p < 2; p++ {
			require.NoError(t, s.Scan(ctx, "t", topicstore.ScanRange{Partition: p, End: -1}, func(m *topicstore.Message) bool {
				got = append(got, fmt.Sprintf("%d/%d:%s", m.Partition, m.Offset, m.Body))
				return true
			}))
		}
		require.Len(t, got, 23)
		require.Equal(t, "0/21:pa22", got[21])
		require.Equal(t, "1/0:pb1", got[22])
	}
}

// foldDigest prints the fold's state of every topic: partitions (record
// batches, ends, last sequences), producers (but for the count of
// messages before their last) and positions.
func foldDigest(t *testing.T, s *Store) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return foldDigestLocked(s)
}

// foldDigestLocked is foldDigest under s.mu.
func foldDigestLocked(s *Store) string {
	var lines []string
	lines = append(lines, fmt.Sprint("applied ", s.applied))
	for name, ts := range s.fold.ByName {
		for i, ps := range ts.Parts {
			lines = append(lines, fmt.Sprintf("%s/%d start=%d end=%d last=%d bytes=%d recs=%v refs=%v", name, i, ps.Start, ps.End, ps.LastSeq, ps.Bytes, ps.Recs, ps.Refs))
		}
		for id, pr := range ts.Prods {
			// pending only chooses when a producer's subject rolls up:
			// a fold that missed a purge counts messages that are gone.
			st := *pr
			st.Pending = 0
			lines = append(lines, fmt.Sprintf("%s producer %s %+v", name, id, st))
		}
		for c, m := range ts.Pos {
			for p, st := range m {
				lines = append(lines, fmt.Sprintf("%s position %s/%d %+v", name, c, p, *st))
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
