package pebblestore

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
)

// failFS fails every file sync once armed.
type failFS struct {
	vfs.FS
	fail *atomic.Bool
}

type failFile struct {
	vfs.File
	fail *atomic.Bool
}

var errInjected = errors.New("injected sync failure")

func (f failFS) wrap(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return failFile{file, f.fail}, nil
}
func (f failFS) Create(name string) (vfs.File, error) { return f.wrap(f.FS.Create(name)) }
func (f failFS) ReuseForWrite(o, n string) (vfs.File, error) {
	return f.wrap(f.FS.ReuseForWrite(o, n))
}

func (f failFile) Sync() error {
	if f.fail.Load() {
		return errInjected
	}
	return f.File.Sync()
}
func (f failFile) SyncData() error { return f.Sync() }
func (f failFile) SyncTo(n int64) (bool, error) {
	if f.fail.Load() {
		return false, errInjected
	}
	return f.File.SyncTo(n)
}

func TestSyncFailureIsFatal(t *testing.T) {
	var fail atomic.Bool
	s, err := Open(t.TempDir(), Options{fs: failFS{vfs.Default, &fail}})
	must(t, err)
	defer s.Close()
	createTopic(t, s, "t", 1)
	commit(t, s, "t", body("ok"))
	fail.Store(true)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{body("lost")}}}})
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		mustErrIs(t, err, errInjected)
	}
	// The store refuses further work; nothing unsynced became visible.
	_, err = s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{body("x")}}}})
	mustErrIs(t, err, errInjected)
	mustErrIs(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "u"}), errInjected)
	info, _ := s.Topic("t")
	eq(t, info.Partitions[0].EndOffset, int64(1))
}
