package pebblestore

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
)

// TestBufferedTable: a table written through sizedFS in small and large
// pieces reads back whole, and Stat, a sync and Close each see every
// byte written before them; other files are written through as they come.
func TestBufferedTable(t *testing.T) {
	dir := t.TempDir()
	fs := sizedFS{vfs.Default}
	f, err := fs.Create(filepath.Join(dir, "000001.sst"))
	must(t, err)
	_, ok := f.(*bufferedFile)
	check(t, ok, "a table is buffered")
	var want []byte
	for i := range 300 {
		p := bytes.Repeat([]byte{byte(i)}, 1000+i*13)
		if i == 150 {
			p = bytes.Repeat([]byte{'L'}, sstBufferBytes+7) // larger than the buffer
		}
		n, err := f.Write(p)
		must(t, err)
		eq(t, n, len(p))
		want = append(want, p...)
		if i == 100 {
			st, err := f.Stat()
			must(t, err)
			eq(t, st.Size(), int64(len(want)), "Stat sees what was written")
			must(t, f.Sync())
		}
	}
	must(t, f.Close())
	r, err := fs.Open(filepath.Join(dir, "000001.sst"))
	must(t, err)
	got, err := io.ReadAll(r)
	must(t, err)
	must(t, r.Close())
	check(t, bytes.Equal(got, want), "the table reads back as written")

	g, err := fs.Create(filepath.Join(dir, "000002.log"))
	must(t, err)
	_, buffered := g.(*bufferedFile)
	check(t, !buffered, "a log is not buffered")
	must(t, g.Close())
}

// TestSizedLogReplays: a write-ahead log is preallocated with its size set
// (sizedFS), and a copy of the directory taken while the store is open
// (the files a kill -9 leaves: a log with zeros past its last record)
// opens with every acknowledged message.
func TestSizedLogReplays(t *testing.T) {
	dir := t.TempDir()
	opts := Options{RetentionInterval: -1, MemTableSize: 4 << 20, CacheSize: 8 << 20}
	s, err := Open(dir, opts)
	must(t, err)
	ctx := context.Background()
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
	for range 10 {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t",
			Messages: []topicstore.Message{{Partition: 0, Body: []byte("m")}}}}})
		must(t, err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	check(t, len(logs) > 0, "a write-ahead log")
	var sized bool
	for _, l := range logs {
		if st, err := os.Stat(l); err == nil && st.Size() >= 4<<20 {
			sized = true
		}
	}
	check(t, sized, "a log has its preallocated size")
	crash := t.TempDir()
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(crash, e.Name()), b, 0o644))
	}
	must(t, s.Close())
	c, err := Open(crash, opts)
	must(t, err)
	defer c.Close()
	info, err := c.Topic("t")
	must(t, err)
	eq(t, info.Partitions[0].EndOffset, int64(10), "partition 0's end after the crash copy")
}
