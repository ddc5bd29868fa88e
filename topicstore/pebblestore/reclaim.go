package pebblestore

import (
	"log"
	"sort"
	"sync"

	"topicgate/topicstore/pebblestore/internal/keys"
)

// A dropped topic's messages are deleted by one range tombstone (DropTopic),
// which frees no disk space by itself: Pebble drops the covered data only
// when a compaction reads it, or, for whole files below level 0, with a
// delete-only compaction once the tombstone has been flushed. After a drop
// nothing may write to the memtable that holds the tombstone, and the
// dropped topic's files in level 0 are read only when level 0 fills up, so
// before the reclaimer a dropped 500 MB topic stayed on disk indefinitely.
//
// The reclaimer is one background goroutine that runs a manual compaction
// (DB.Compact) over each dropped topic's message range, one at a time: it
// flushes the memtable if it overlaps, then compacts the range level by
// level, dropping the covered data (and rewriting the live data of other
// topics that shares files with it, which a compaction would have done
// later anyway). Ranges wait in a queue; Close stops the loop after the
// compaction in progress. Startup queues the ranges of topic IDs that have
// no catalog entry (topics dropped before a crash or a shutdown let their
// compaction run); for ranges already reclaimed that finds no files and
// costs nothing.

// keySpan is a key range [start, end).
type keySpan struct{ start, end []byte }

// reclaimer is the queue of key ranges to compact.
type reclaimer struct {
	mu    sync.Mutex
	queue []keySpan
	wake  chan struct{} // capacity 1: a pending wake-up
	done  int64         // ranges compacted (EngineStats), under mu
	idle  *sync.Cond    // signalled when the queue is empty and nothing runs
	busy  bool
}

func (r *reclaimer) init() {
	r.wake = make(chan struct{}, 1)
	r.idle = sync.NewCond(&r.mu)
}

// add queues sp and wakes the loop.
func (r *reclaimer) add(sp keySpan) {
	r.mu.Lock()
	r.queue = append(r.queue, sp)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// reclaimTopic queues the message range of a dropped topic.
func (s *PebbleStore) reclaimTopic(id uint64) {
	s.reclaim.add(keySpan{keys.Topic(keys.PrefixMessages, id), keys.Topic(keys.PrefixMessages, id+1)})
}

// reclaimUnknown queues the message ranges of the topic IDs below nextID
// that have no catalog entry: contiguous runs of them as one range.
func (s *PebbleStore) reclaimUnknown() {
	ids := make([]uint64, 0, len(s.byID))
	for id := range s.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	from := uint64(1)
	for _, id := range append(ids, s.nextID) {
		if id > from {
			s.reclaim.add(keySpan{keys.Topic(keys.PrefixMessages, from), keys.Topic(keys.PrefixMessages, id)})
		}
		from = id + 1
	}
}

// reclaimLoop compacts queued ranges until Close.
func (s *PebbleStore) reclaimLoop() {
	defer s.bg.Done()
	r := &s.reclaim
	defer func() { // Close: what is left stays for the next start
		r.mu.Lock()
		r.queue, r.busy = nil, false
		r.idle.Broadcast()
		r.mu.Unlock()
	}()
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.busy = false
			r.idle.Broadcast()
			r.mu.Unlock()
			select {
			case <-s.quit:
				return
			case <-r.wake:
			}
			continue
		}
		sp := r.queue[0]
		r.queue = r.queue[1:]
		r.busy = true
		r.mu.Unlock()
		select {
		case <-s.quit:
			return
		default:
		}
		// Close waits for this goroutine (bg) before it closes the DB, so
		// Compact never runs on a closed DB.
		if err := s.db.Compact(sp.start, sp.end, false); err != nil {
			log.Printf("topicstore: reclaiming dropped data in %x..%x: %v", sp.start, sp.end, err)
		}
		r.mu.Lock()
		r.done++
		r.mu.Unlock()
	}
}

// waitReclaimed blocks until every queued range has been compacted, or
// the store is closed (tests).
func (s *PebbleStore) waitReclaimed() {
	r := &s.reclaim
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) > 0 || r.busy {
		r.idle.Wait()
	}
}
