package main

import (
	"log"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// wal is the log. Callers append under mu and wait for the sync that
// covers their bytes; flushLoop writes and syncs what is pending, one sync
// at a time, and closes the waiters' channels after it.
type wal struct {
	f    *os.File
	size int64
	off  int64 // flushLoop's

	mu      sync.Mutex
	cond    *sync.Cond
	pending []byte
	waiting []chan struct{}

	// With -hops: appends go through hop to a committer goroutine, and
	// each sync's waiters through synced to a syncer goroutine.
	hop    chan hopReq
	synced chan []chan struct{}
}

type hopReq struct {
	rec  []byte
	done chan struct{}
}

// openLog creates the log file at path, pre-written with size zero bytes,
// and starts its goroutines.
func openLog(path string, size int64, hops bool) (*wal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros, off); err != nil {
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	w := &wal{f: f, size: size}
	w.cond = sync.NewCond(&w.mu)
	if hops {
		w.hop = make(chan hopReq, 1024)
		w.synced = make(chan []chan struct{}, 1024)
		go w.committer()
		go w.syncer()
	}
	go w.flushLoop()
	return w, nil
}

// write appends msgs as one record and returns once it is synced.
func (w *wal) write(msgs [][]byte) {
	var rec []byte
	for _, m := range msgs {
		rec = append(rec, m...)
	}
	done := make(chan struct{})
	if w.hop != nil {
		w.hop <- hopReq{rec, done}
	} else {
		w.enqueue(rec, done)
	}
	<-done
}

func (w *wal) enqueue(rec []byte, done chan struct{}) {
	w.mu.Lock()
	w.pending = append(w.pending, rec...)
	w.waiting = append(w.waiting, done)
	w.cond.Signal()
	w.mu.Unlock()
}

func (w *wal) committer() {
	for r := range w.hop {
		w.enqueue(r.rec, r.done)
	}
}

func (w *wal) syncer() {
	for cs := range w.synced {
		for _, c := range cs {
			close(c)
		}
	}
}

func (w *wal) flushLoop() {
	var buf []byte
	var waiting []chan struct{}
	for {
		w.mu.Lock()
		for len(w.waiting) == 0 {
			w.cond.Wait()
		}
		buf, w.pending = w.pending, buf[:0]
		waiting, w.waiting = w.waiting, waiting[:0]
		w.mu.Unlock()
		if w.off+int64(len(buf)) > w.size {
			w.off = 0
		}
		if _, err := w.f.WriteAt(buf, w.off); err != nil {
			log.Fatal(err)
		}
		w.off += int64(len(buf))
		if err := unix.Fdatasync(int(w.f.Fd())); err != nil {
			log.Fatal(err)
		}
		if w.synced != nil {
			w.synced <- waiting
			waiting = nil
			continue
		}
		for _, c := range waiting {
			close(c)
		}
	}
}
