package pebblestore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"topicgate/topicstore"
)

// TestLogsSizedUpFront checks that a write-ahead log is preallocated with
// its size set (sizedFS), and that a copy of the directory taken while
// the store is open (the files a kill -9 leaves, zeros past the last
// record) opens with every acknowledged message.
func TestLogsSizedUpFront(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{RetentionInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20})
	must(t, err)
	ctx := context.Background()
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	for i := 0; i < 10; i++ {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t",
			Messages: []topicstore.Message{{Partition: 0, Body: []byte("m")}}}}})
		must(t, err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatal("no write-ahead log")
	}
	var sized bool
	for _, l := range logs {
		if st, err := os.Stat(l); err == nil && st.Size() >= 4<<20 {
			sized = true
		}
	}
	if !sized {
		t.Fatalf("no log has its preallocated size: %v", logs)
	}
	crash := t.TempDir()
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(crash, e.Name()), b, 0o644))
	}
	must(t, s.Close())
	c, err := Open(crash, Options{RetentionInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20})
	must(t, err)
	defer c.Close()
	info, err := c.Topic("t")
	must(t, err)
	if got := info.Partitions[0].EndOffset; got != 10 {
		t.Fatalf("after the crash copy, partition 0 ends at %d, want 10", got)
	}
}
