package pebblestore

import (
	"github.com/cockroachdb/pebble/vfs"
	"golang.org/x/sys/unix"
)

// sizedFS is the file system the store hands Pebble: the operating
// system's, except that preallocating a file sets its size. Pebble
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
