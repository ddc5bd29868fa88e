package pebblestore

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
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
