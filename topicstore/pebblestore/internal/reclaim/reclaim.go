package reclaim

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

// Host is what the reclaimer needs of the store: a manual compaction of
// a key range (pebble.DB.Compact, without parallelism).
type Host interface {
	Compact(start, end []byte) error
}

// keySpan is a key range [start, end).
type keySpan struct{ start, end []byte }

// Reclaimer is the queue of key ranges to compact.
type Reclaimer struct {
	host Host

	mu    sync.Mutex
	queue []keySpan
	wake  chan struct{} // capacity 1: a pending wake-up
	done  int64         // ranges compacted (EngineStats), under mu
	idle  *sync.Cond    // signalled when the queue is empty and nothing runs
	busy  bool
}

// New returns an empty reclaimer on h.
func New(h Host) *Reclaimer {
	r := &Reclaimer{host: h, wake: make(chan struct{}, 1)}
	r.idle = sync.NewCond(&r.mu)
	return r
}

// add queues sp and wakes the loop.
func (r *Reclaimer) add(sp keySpan) {
	r.mu.Lock()
	r.queue = append(r.queue, sp)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Topic queues the message range of a dropped topic.
func (r *Reclaimer) Topic(id uint64) {
	r.add(keySpan{keys.Topic(keys.PrefixMessages, id), keys.Topic(keys.PrefixMessages, id+1)})
}

// Unknown queues the message ranges of the topic IDs below nextID that
// are not in known (the catalog's): contiguous runs of them as one range.
func (r *Reclaimer) Unknown(known []uint64, nextID uint64) {
	ids := append([]uint64(nil), known...)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	from := uint64(1)
	for _, id := range append(ids, nextID) {
		if id > from {
			r.add(keySpan{keys.Topic(keys.PrefixMessages, from), keys.Topic(keys.PrefixMessages, id)})
		}
		from = id + 1
	}
}

// Done is how many ranges have been compacted.
func (r *Reclaimer) Done() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// Run compacts queued ranges until quit is closed. The store runs it on
// a goroutine it waits for before it closes the DB.
func (r *Reclaimer) Run(quit <-chan struct{}) {
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
			case <-quit:
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
		case <-quit:
			return
		default:
		}
		// Close waits for this goroutine before it closes the DB, so
		// Compact never runs on a closed DB.
		if err := r.host.Compact(sp.start, sp.end); err != nil {
			log.Printf("topicstore: reclaiming dropped data in %x..%x: %v", sp.start, sp.end, err)
		}
		r.mu.Lock()
		r.done++
		r.mu.Unlock()
	}
}

// Wait blocks until every queued range has been compacted, or the store
// is closed (tests).
func (r *Reclaimer) Wait() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) > 0 || r.busy {
		r.idle.Wait()
	}
}
