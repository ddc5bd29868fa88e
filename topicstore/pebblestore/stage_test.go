package pebblestore

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/storetest"
)

func stagedStats(t testing.TB, s *PebbleStore) StagedStats {
	t.Helper()
	st, err := s.StagedStats()
	must(t, err)
	return st
}

// refRecords counts the reference records of a topic's partition.
func refRecords(t testing.TB, s *PebbleStore, topic string, p int32) (refs, inline int) {
	t.Helper()
	tp, err := s.lookup(topic)
	must(t, err)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: keys.Partition(tp.id, p), UpperBound: keys.Partition(tp.id, p+1)})
	must(t, err)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		h, _, err := topicstore.DecodeBatchHeader(it.Value())
		must(t, err)
		if h.Ref {
			refs++
		} else {
			inline++
		}
	}
	return refs, inline
}

func commitStaged(t testing.TB, s *PebbleStore, topic string, sb ...topicstore.StagedBatch) topicstore.WriteResult {
	t.Helper()
	res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic, Staged: sb}}})
	must(t, err)
	return res.Writes[0]
}

func TestStagedCommitByReferenceInterleaved(t *testing.T) {
	s := newStore(t, nil)
	createTopic(t, s, "t", 1)
	// Concurrent inline writers to the same partition while transactions
	// stage and commit by reference.
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				commit(t, s, "t", body(fmt.Sprintf("w%d-%d", w, i)), body(fmt.Sprintf("w%d-%d", w, i)))
			}
		})
	}
	const txns, per = 4, 3000
	var twg sync.WaitGroup
	for x := range txns {
		twg.Go(func() {
			id := uint64(100 + x)
			tag := fmt.Sprintf("tx%d", x)
			a, err := s.StageBatch(ctx, id, "t", storetest.Messages(tag, per/2, 100, "", 0))
			must(t, err)
			b, err := s.StageBatch(ctx, id, "t", storetest.Messages(tag+"b", per/2, 100, "", 0))
			must(t, err)
			check(t, len(a.Chunks) > 1, "several chunks")
			res := commitStaged(t, s, "t", a, b)
			eq(t, res.Written, per)
		})
	}
	twg.Wait()
	stop.Store(true)
	wg.Wait()
	// Each transaction's messages are contiguous and in order.
	first := map[string]int64{}
	last := map[string]int64{}
	count := map[string]int{}
	var prev int64 = -1
	must(t, s.Scan(ctx, "t", part(0), func(m *topicstore.Message) bool {
		check(t, m.Offset == prev+1, "contiguous offsets", m.Offset, prev)
		prev = m.Offset
		tag, _, _ := strings.Cut(string(m.Body), "-")
		if strings.HasPrefix(tag, "tx") {
			tag = strings.TrimSuffix(tag, "b")
			if _, ok := first[tag]; !ok {
				first[tag] = m.Offset
			}
			last[tag] = m.Offset
			count[tag]++
		}
		return true
	}))
	for tag, n := range count {
		eq(t, n, per, tag)
		eq(t, last[tag]-first[tag]+1, int64(per), "no other writer inside "+tag)
	}
	eq(t, len(count), txns)
	refs, _ := refRecords(t, s, "t", 0)
	check(t, refs >= txns*2, "committed by reference", refs)
	st := stagedStats(t, s)
	eq(t, [3]int{st.Open, st.Referenced, st.Keys}, [3]int{0, txns, refs})
	info := mustTopicNamed(t, s, "t")
	check(t, info.Partitions[0].Bytes > txns*per*100, "bytes counted", info.Partitions[0].Bytes)
}

func mustTopicNamed(t testing.TB, s *PebbleStore, name string) topicstore.TopicInfo {
	t.Helper()
	info, err := s.Topic(name)
	must(t, err)
	return info
}

func TestStagedDedup(t *testing.T) {
	s := newStore(t, nil)
	createTopic(t, s, "t", 2)
	commit(t, s, "t", storetest.Messages("in", 10, 20, "p", 1)...) // seqnos 1..10
	// Staged seqnos 5..1004 of p: 5..10 are duplicates (fallback: copy).
	sb, err := s.StageBatch(ctx, 1, "t", storetest.Messages("st", 1000, 100, "p", 5))
	must(t, err)
	// A fresh producer q commits by reference.
	sq, err := s.StageBatch(ctx, 1, "t", storetest.Messages("q", 1000, 100, "q", 1))
	must(t, err)
	res := commitStaged(t, s, "t", sb, sq)
	eq(t, [2]int{res.Written, res.Duplicates}, [2]int{1000 - 6 + 1000, 6})
	ps, err := s.Producers("t")
	must(t, err)
	eq(t, ps[0].MaxSeqNo, int64(1004))
	eq(t, ps[1].MaxSeqNo, int64(1000))
	_, msgs := scanAll(t, s, "t", part(ps[0].Partition))
	eq(t, len(msgs), 10+994)
	for i, m := range msgs {
		eq(t, m.SeqNo, int64(i+1))
	}
	check(t, strings.HasPrefix(string(msgs[10].Body), "st-000006|"), string(msgs[10].Body))
	// Repeating q's staged seqnos: all duplicates, nothing written.
	sq2, err := s.StageBatch(ctx, 2, "t", storetest.Messages("q", 1000, 100, "q", 1))
	must(t, err)
	res = commitStaged(t, s, "t", sq2)
	eq(t, [2]int{res.Written, res.Duplicates}, [2]int{0, 1000})
	// Producer messages without seqnos take the copy path too.
	noSeq := storetest.Messages("auto", 3, 10, "q", 0)
	for i := range noSeq {
		noSeq[i].HasSeqNo = false
	}
	sa, err := s.StageBatch(ctx, 3, "t", noSeq)
	must(t, err)
	res = commitStaged(t, s, "t", sa)
	eq(t, res.Written, 3)
	ps, _ = s.Producers("t")
	eq(t, ps[1].MaxSeqNo, int64(1003))
	// Copied batches are deleted; referenced ones stay.
	st := stagedStats(t, s)
	refs0, _ := refRecords(t, s, "t", 0)
	refs1, _ := refRecords(t, s, "t", 1)
	eq(t, st.Keys, refs0+refs1)
}

func TestStagedRollbackAndStartupCleanup(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	createTopic(t, s, "t", 1)
	_, err := s.StageBatch(ctx, 1, "t", storetest.Messages("a", 2000, 100, "", 0))
	must(t, err)
	check(t, stagedStats(t, s).Keys > 1)
	must(t, s.DiscardStaged(1))
	eq(t, stagedStats(t, s), StagedStats{})
	// Staged and never committed: garbage at the next start.
	_, err = s.StageBatch(ctx, 2, "t", storetest.Messages("b", 2000, 100, "", 0))
	must(t, err)
	keep, err := s.StageBatch(ctx, 3, "t", storetest.Messages("c", 2000, 100, "", 0))
	must(t, err)
	commitStaged(t, s, "t", keep)
	before := stagedStats(t, s)
	must(t, s.Close())
	s = openTest(t, dir, nil)
	defer s.Close()
	st := stagedStats(t, s)
	eq(t, [3]int{st.Open, st.Referenced, st.Keys}, [3]int{0, 1, len(keep.Chunks)})
	check(t, before.Keys > st.Keys, "uncommitted keys deleted")
	// Committed by reference, readable after the reopen; a new staging
	// after the reopen does not collide with the old one.
	got, _ := scanAll(t, s, "t", part(0))
	eq(t, len(got), 2000)
	sb, err := s.StageBatch(ctx, 3, "t", storetest.Messages("d", 2000, 100, "", 0))
	must(t, err)
	commitStaged(t, s, "t", sb)
	got, _ = scanAll(t, s, "t", part(0))
	eq(t, len(got), 4000)
	check(t, strings.HasPrefix(got[0], "0:c-000000|") && strings.HasPrefix(got[2000], "2000:d-000000|"), got[0], got[2000])
	info := mustTopicNamed(t, s, "t")
	eq(t, info.Partitions[0].EndOffset, int64(4000))
}

func TestStagedRetentionAndDrop(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	defer func() { s.Close() }()
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", RetentionPeriod: time.Hour, MinActivePartitions: 2}))
	// One transaction references data from both partitions.
	a, err := s.StageBatch(ctx, 1, "t", append(storetest.Messages("a", 1000, 100, "", 0), storetest.Messages("p", 1000, 100, "pp", 1)...))
	must(t, err)
	commitStaged(t, s, "t", a)
	clk.Advance(30 * time.Minute)
	commit(t, s, "t", topicstore.Message{Partition: 0, Body: []byte("late0")}, topicstore.Message{Partition: 1, Body: []byte("late1")})
	eq(t, stagedStats(t, s).Referenced, 1)
	// Partition by partition: the data goes when no partition references it.
	eq(t, retain(t, s, clk.Now().Add(40*time.Minute)), int64(2000))
	st := stagedStats(t, s)
	eq(t, [2]int{st.Referenced, st.Keys}, [2]int{0, 0})
	for p := range int32(2) {
		got, _ := scanAll(t, s, "t", part(p))
		eq(t, len(got), 1)
	}
	// Reopen: the partitions' starts and the empty staging survive.
	must(t, s.Close())
	s = openTest(t, dir, clk)
	eq(t, stagedStats(t, s).Keys, 0)
	// Drop deletes referenced data of the topic.
	b, err := s.StageBatch(ctx, 2, "t", storetest.Messages("b", 1000, 100, "", 0))
	must(t, err)
	commitStaged(t, s, "t", b)
	createTopic(t, s, "u", 1)
	c, err := s.StageBatch(ctx, 2, "u", storetest.Messages("c", 1000, 100, "", 0))
	must(t, err)
	commitStaged(t, s, "u", c)
	eq(t, stagedStats(t, s).Referenced, 2)
	must(t, s.DropTopic(ctx, "t"))
	st = stagedStats(t, s)
	eq(t, [2]int{st.Referenced, st.Keys}, [2]int{1, len(c.Chunks)})
	got, _ := scanAll(t, s, "u", part(0))
	eq(t, len(got), 1000)
}

func TestStagedScanRacesRetention(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", RetentionPeriod: time.Hour}))
	sb, err := s.StageBatch(ctx, 1, "t", storetest.Messages("a", 2000, 100, "", 0))
	must(t, err)
	commitStaged(t, s, "t", sb)
	clk.Advance(2 * time.Hour)
	commit(t, s, "t", body("new"))
	n := 0
	must(t, s.Scan(ctx, "t", part(0), func(m *topicstore.Message) bool {
		if n == 0 { // retention deletes everything the scan has not read yet
			retain(t, s, clk.Now())
		}
		n++
		return true
	}))
	check(t, n >= 1, n)
}

// TestStagedSurvivesCrash: staged writes are unsynced, but the commit's
// fsync of the sequential WAL makes them durable; an uncommitted staging
// does not survive (or is deleted at start).
func TestStagedSurvivesCrash(t *testing.T) {
	fs := vfs.NewStrictMem()
	opts := Options{fs: fs, RetentionInterval: -1, MemTableSize: 4 << 20}
	must(t, fs.MkdirAll("db", 0o755))
	root, err := fs.OpenDir("")
	must(t, err)
	must(t, root.Sync()) // the data directory itself survives the crash
	must(t, root.Close())
	s, err := Open("db", opts)
	must(t, err)
	createTopic(t, s, "t", 1)
	a, err := s.StageBatch(ctx, 1, "t", storetest.Messages("a", 3000, 100, "", 0))
	must(t, err)
	commitStaged(t, s, "t", a)
	_, err = s.StageBatch(ctx, 2, "t", storetest.Messages("b", 3000, 100, "", 0))
	must(t, err)
	fs.SetIgnoreSyncs(true)
	must(t, s.Close())
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)
	s, err = Open("db", opts)
	must(t, err)
	defer s.Close()
	got, _ := scanAll(t, s, "t", part(0))
	eq(t, len(got), 3000)
	check(t, strings.HasPrefix(got[2999], "2999:a-002999|"), got[2999])
	st := stagedStats(t, s)
	eq(t, [2]int{st.Referenced, st.Keys}, [2]int{1, len(a.Chunks)})
}
