package pebblestore

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"topicgate/topicstore"
)

// sstBytes is the size of the store's sstables on disk; call it on a closed
// store, whose obsolete files Pebble has deleted.
func sstBytes(t *testing.T, dir string) int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	must(t, err)
	var n int64
	for _, f := range files {
		fi, err := os.Stat(f)
		must(t, err)
		n += fi.Size()
	}
	return n
}

// fillForReclaim writes about 24 MB of incompressible messages to "big" and
// a few small ones to "kept", interleaved so that they share sstables.
func fillForReclaim(t *testing.T, s *PebbleStore) {
	createTopic(t, s, "big", 4)
	createTopic(t, s, "kept", 1)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 24; i++ {
		msgs := make([]topicstore.Message, 256)
		for j := range msgs {
			b := make([]byte, 4096)
			rng.Read(b)
			msgs[j] = topicstore.Message{Partition: -1, Body: b}
		}
		commit(t, s, "big", msgs...)
		commit(t, s, "kept", body("k"))
	}
}

// reclaimOpts turns Pebble's own compactions off, so that only the
// reclaimer can free the dropped data and the tests do not depend on when
// a background compaction happens to run.
func reclaimOpts() Options {
	return Options{MemTableSize: 1 << 20, CacheSize: 8 << 20, RetentionInterval: -1, noCompact: true}
}

// TestDropReclaimsDisk: DROP TOPIC returns the topic's disk space without
// waiting for level 0 to fill up, and leaves the other topics' data alone.
func TestDropReclaimsDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, reclaimOpts())
	must(t, err)
	fillForReclaim(t, s)
	must(t, s.db.Flush())
	full := sstBytes(t, dir)
	check(t, full > 20<<20, "expected > 20 MB of sstables, have", full)
	must(t, s.DropTopic(context.Background(), "big"))
	s.reclaim.Wait()
	check(t, s.EngineStats().Reclaims >= 1, "no reclaim counted")
	must(t, s.Close())
	if left := sstBytes(t, dir); left > full/10 {
		t.Fatalf("after DROP TOPIC %d of %d sstable bytes remain", left, full)
	}
	s, err = Open(dir, reclaimOpts())
	must(t, err)
	defer s.Close()
	got, _ := scanAll(t, s, "kept", part(0))
	eq(t, len(got), 24)
}

// TestReclaimAfterRestart: a topic dropped by a process that stopped
// before its compaction ran is reclaimed when the store opens again.
func TestReclaimAfterRestart(t *testing.T) {
	dir := t.TempDir()
	opts := reclaimOpts()
	opts.noReclaim = true
	s, err := Open(dir, opts)
	must(t, err)
	fillForReclaim(t, s)
	must(t, s.DropTopic(context.Background(), "big"))
	must(t, s.db.Flush())
	must(t, s.Close())
	full := sstBytes(t, dir)
	check(t, full > 20<<20, "without the reclaimer the dropped data stays:", full)

	s, err = Open(dir, reclaimOpts())
	must(t, err)
	s.reclaim.Wait()
	must(t, s.Close())
	if left := sstBytes(t, dir); left > full/10 {
		t.Fatalf("after reopening %d of %d sstable bytes remain", left, full)
	}
	s, err = Open(dir, reclaimOpts())
	must(t, err)
	defer s.Close()
	got, _ := scanAll(t, s, "kept", part(0))
	eq(t, len(got), 24)
	createTopic(t, s, "big", 1) // a new topic with the old name starts empty
	got, _ = scanAll(t, s, "big", part(0))
	eq(t, len(got), 0)
}

// TestOnReleaseAfterFlushAndDeletion: the OnRelease hook is called when a
// flush frees a memtable and when a compaction's deleted tables leave the
// block cache, the two moments Pebble frees memory in bulk.
func TestOnReleaseAfterFlushAndDeletion(t *testing.T) {
	var calls atomic.Int64
	opts := reclaimOpts()
	opts.OnRelease = func() { calls.Add(1) }
	s, err := Open(t.TempDir(), opts)
	must(t, err)
	fillForReclaim(t, s)
	must(t, s.db.Flush())
	flushed := calls.Load()
	check(t, flushed >= 1, "no call after a flush:", flushed)
	must(t, s.DropTopic(context.Background(), "big"))
	s.reclaim.Wait()
	must(t, s.Close()) // waits for the deletion of the compacted tables
	check(t, calls.Load() > flushed, "no call after the dropped topic's tables were deleted:", calls.Load(), flushed)
}
