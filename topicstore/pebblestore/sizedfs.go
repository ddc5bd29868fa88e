package pebblestore

import (
	"os"
	"strings"

	"github.com/cockroachdb/pebble/vfs"
	"golang.org/x/sys/unix"
)

// sizedFS is the file system the store hands Pebble: the operating
// system's, except that preallocating a file sets its size, and a table
// being written is written in large pieces (bufferedFile). Pebble
// preallocates only its write-ahead logs (110% of a memtable, as each log
// begins) and does it with FALLOC_FL_KEEP_SIZE, so every append still
// grows the file and every commit's fdatasync then also commits the file
// system's journal for the new size. With the size set up front the
// appends land inside the file, as PostgreSQL's WAL writes land inside
// its preallocated segments. Pebble reads the zeros past a log's last
// record as its end (record.ErrZeroedChunk, the preallocation case it
// documents), so a log replays the same either way.
type sizedFS struct{ vfs.FS }

func (fs sizedFS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, ".sst") {
		return &bufferedFile{File: f, buf: make([]byte, 0, sstBufferBytes)}, nil
	}
	return sizedFile{f}, nil
}

func (fs sizedFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	if err != nil {
		return nil, err
	}
	return sizedFile{f}, nil
}

// sizedFile preallocates with the file's size changed.
type sizedFile struct{ vfs.File }

func (f sizedFile) Preallocate(offset, length int64) error {
	if err := unix.Fallocate(int(f.Fd()), 0, offset, length); err != nil {
		return f.File.Preallocate(offset, length) // a file system without fallocate
	}
	return nil
}

// sstBufferBytes is how much of a table being written bufferedFile holds
// before it writes: Pebble writes a table through a 4 KiB bufio.Writer,
// so each ~4 KiB block was one write system call (a fifth of the server's
// CPU while ingesting batches went to them).
const sstBufferBytes = 256 << 10

// bufferedFile is a table being written (Create of a *.sst), its writes
// gathered in a buffer that every other call writes out first: a sync
// syncs all that was written, a read or Stat sees it, Close writes it.
type bufferedFile struct {
	vfs.File
	buf []byte
}

func (f *bufferedFile) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	_, err := f.File.Write(f.buf)
	f.buf = f.buf[:0]
	return err
}

func (f *bufferedFile) Write(p []byte) (int, error) {
	if len(f.buf)+len(p) > sstBufferBytes {
		if err := f.flush(); err != nil {
			return 0, err
		}
		if len(p) >= sstBufferBytes {
			return f.File.Write(p)
		}
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

func (f *bufferedFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *bufferedFile) Read(p []byte) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *bufferedFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *bufferedFile) Stat() (os.FileInfo, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	return f.File.Stat()
}

func (f *bufferedFile) Sync() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *bufferedFile) SyncData() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *bufferedFile) SyncTo(length int64) (bool, error) {
	if err := f.flush(); err != nil {
		return false, err
	}
	return f.File.SyncTo(length)
}

func (f *bufferedFile) Close() error {
	err := f.flush()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
