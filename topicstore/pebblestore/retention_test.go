package pebblestore

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// retTopic creates topic "t" (1 partition) with the given retention and
// consumers, and writes one batch of n messages per step, dt apart. It
// returns the time of each batch.
func retTopic(t testing.TB, s *PebbleStore, clk *testClock, cfg topicstore.TopicConfig, n int, dt time.Duration, steps int) []time.Time {
	t.Helper()
	cfg.Name = "t"
	must(t, s.CreateTopic(ctx, cfg))
	var at []time.Time
	for i := range steps {
		at = append(at, clk.Now())
		msgs := make([]topicstore.Message, n)
		for j := range msgs {
			msgs[j] = topicstore.Message{Partition: 0, Body: fmt.Appendf(nil, "m%03d", i*n+j)}
		}
		commit(t, s, "t", msgs...)
		clk.Advance(dt)
	}
	return at
}

func retain(t testing.TB, s *PebbleStore, now time.Time) int64 {
	t.Helper()
	n, err := s.RunRetention(ctx, now)
	must(t, err)
	return n
}

func p0(t testing.TB, s *PebbleStore) topicstore.PartitionInfo {
	t.Helper()
	info, err := s.Topic("t")
	must(t, err)
	return info.Partitions[0]
}

func TestRetentionPeriod(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	// 5 batches of 3 messages, 10 minutes apart; retention 1h.
	ts := retTopic(t, s, clk, topicstore.TopicConfig{RetentionPeriod: time.Hour}, 3, 10*time.Minute, 5)
	before := p0(t, s)
	eq(t, before.Messages, int64(15))
	perBatch := before.Bytes / 5
	eq(t, retain(t, s, ts[0].Add(time.Hour)), int64(0)) // not older: kept
	eq(t, retain(t, s, ts[1].Add(time.Hour+time.Second)), int64(6))
	after := p0(t, s)
	eq(t, [4]int64{after.StartOffset, after.EndOffset, after.Messages, after.Bytes}, [4]int64{6, 15, 9, 3 * perBatch})
	got, _ := scanAll(t, s, "t", topicstore.ScanRange{Partition: 0, Start: 0, End: 8})
	eq(t, got, []string{"6:m006", "7:m007"}) // clamped to the start
	ot, _ := s.OffsetForTime("t", ts[0])
	eq(t, ot[0], int64(6))
	must(t, s.Close())

	s = openTest(t, dir, clk)
	defer s.Close()
	eq(t, p0(t, s), after)
	// Everything expires: an empty partition keeps its offsets over reopen.
	eq(t, retain(t, s, ts[4].Add(2*time.Hour)), int64(9))
	empty := p0(t, s)
	eq(t, [4]int64{empty.StartOffset, empty.EndOffset, empty.Messages, empty.Bytes}, [4]int64{15, 15, 0, 0})
	eq(t, empty.LastWrite, after.LastWrite)
	must(t, s.Close())
	s = openTest(t, dir, clk)
	defer s.Close()
	eq(t, p0(t, s), empty)
	eq(t, retain(t, s, ts[4].Add(3*time.Hour)), int64(0))
	commit(t, s, "t", at(0, body("new"))...)
	got, _ = scanAll(t, s, "t", part(0))
	eq(t, got, []string{"15:new"})
	check(t, p0(t, s).Bytes > 0 && p0(t, s).Bytes < perBatch) // only the new batch
}

// TestRetentionConcurrentAppends runs retention while writers append; the
// partition stays contiguous and consistent (run with -race).
func TestRetentionConcurrentAppends(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, RetentionStorageMB: 1,
		Consumers: []topicstore.ConsumerConfig{{Name: "imp", Important: true}}}))
	msg := bytes.Repeat([]byte{'y'}, 4<<10)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; i < 150; i++ {
				msgs := []topicstore.Message{{Partition: int32(w % 2), Body: msg}, {Partition: int32(w % 2), Body: msg}}
				if _, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: msgs}}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var deleted int64
	retDone := make(chan struct{})
	go func() {
		defer close(retDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			info, _ := s.Topic("t")
			for _, p := range info.Partitions {
				_ = s.SetPosition(ctx, "t", "imp", p.ID, p.EndOffset)
			}
			n, err := s.RunRetention(ctx, clk.Now())
			if err != nil {
				t.Error(err)
				return
			}
			deleted += n
			scanAll(t, s, "t", part(0))
		}
	}()
	wg.Wait()
	close(stop)
	<-retDone
	for _, p := range mustTopic(t, s).Partitions {
		must(t, s.SetPosition(ctx, "t", "imp", p.ID, p.EndOffset))
	}
	deleted += retain(t, s, clk.Now())
	var total int64
	for _, p := range mustTopic(t, s).Partitions {
		eq(t, p.Messages, p.EndOffset-p.StartOffset)
		check(t, p.Bytes <= 1<<20, p.Bytes)
		got, _ := scanAll(t, s, "t", part(p.ID))
		eq(t, int64(len(got)), p.Messages)
		if len(got) > 0 {
			eq(t, got[0][:len(fmt.Sprint(p.StartOffset))+1], fmt.Sprint(p.StartOffset, ":"))
		}
		total += p.StartOffset
	}
	eq(t, total, deleted)
	eq(t, total > 0, true)
}

func mustTopic(t testing.TB, s *PebbleStore) topicstore.TopicInfo {
	info, err := s.Topic("t")
	must(t, err)
	return info
}

func TestRetentionLoopCloses(t *testing.T) {
	s, err := Open(t.TempDir(), Options{RetentionInterval: time.Millisecond})
	must(t, err)
	createTopic(t, s, "t", 1)
	commit(t, s, "t", body("x"))
	must(t, s.Close())
}

// TestRetireDrainedPartitions: an inactive (split) partition is marked
// deleted once retention has removed all its messages and no consumer is
// behind its end; its active children are untouched.
func TestRetireDrainedPartitions(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", RetentionPeriod: time.Hour, AutoPartitioningStrategy: "scale_up",
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	commit(t, s, "t", topicstore.Message{Partition: 0, Body: []byte("old")})
	must(t, s.SplitPartition(ctx, "t", 0))
	commit(t, s, "t", topicstore.Message{Partition: -1, Body: []byte("new")})
	state := func() []bool {
		info, err := s.Topic("t")
		must(t, err)
		var out []bool
		for _, p := range info.Partitions {
			out = append(out, p.Deleted)
		}
		return out
	}
	// The consumer has not read partition 0: it stays while it holds data.
	retain(t, s, clk.Now())
	eq(t, state(), []bool{false, false, false})
	// Retention empties it (the consumer is not important): deleted.
	clk.Advance(2 * time.Hour)
	retain(t, s, clk.Now())
	eq(t, state(), []bool{true, false, false})
	// And so it stays across a restart.
	must(t, s.Close())
	s = openTest(t, dir, clk)
	eq(t, state(), []bool{true, false, false})
}

// TestRetentionWholeBatches: retention deletes whole record batches, so an
// important consumer's position inside a batch keeps all of it (the
// contract suite keeps its positions at batch boundaries).
func TestRetentionWholeBatches(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	ts := retTopic(t, s, clk, topicstore.TopicConfig{RetentionPeriod: time.Hour, Consumers: []topicstore.ConsumerConfig{
		{Name: "imp", Important: true}}}, 3, time.Minute, 3)
	now := ts[2].Add(2 * time.Hour) // everything expired
	must(t, s.SetPosition(ctx, "t", "imp", 0, 2))
	eq(t, retain(t, s, now), int64(0))
	must(t, s.SetPosition(ctx, "t", "imp", 0, 7))
	eq(t, retain(t, s, now), int64(6))
	eq(t, p0(t, s).StartOffset, int64(6))
}

// TestExpiredProducersLeave: a retention run deletes the keys of the
// producers expired by then, and a reopened store finds none of them.
func TestExpiredProducersLeave(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, ProducerExpiry: time.Hour}))
	for i := range 100 {
		commit(t, s, "t", pmsg(fmt.Sprintf("old%d", i), 1, "x"))
	}
	clk.Advance(2 * time.Hour)
	commit(t, s, "t", pmsg("live", 1, "x"))
	producerKeys := func() int {
		it, err := s.db.NewIter(nil)
		must(t, err)
		defer it.Close()
		n := 0
		for ok := it.SeekGE([]byte(keys.PrefixProducer)); ok && keys.HasPrefix(it.Key(), keys.PrefixProducer); ok = it.Next() {
			n++
		}
		return n
	}
	if n := producerKeys(); n != 101 {
		t.Fatalf("%d producer keys before retention, want 101", n)
	}
	if _, err := s.RunRetention(ctx, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if n := producerKeys(); n != 1 {
		t.Fatalf("%d producer keys after retention, want 1 (the live one)", n)
	}
	s.coreMu.Lock()
	left := 0
	for _, ct := range s.core.Topics {
		left += len(ct.Producers)
	}
	s.coreMu.Unlock()
	if left != 1 {
		t.Fatalf("%d producers in memory, want 1", left)
	}
	must(t, s.Close())
	s = openTest(t, dir, clk)
	defer s.Close()
	if ps, err := s.Producers("t"); err != nil || len(ps) != 1 || ps[0].ProducerID != "live" {
		t.Fatalf("after reopening: %v, %v", ps, err)
	}
}
