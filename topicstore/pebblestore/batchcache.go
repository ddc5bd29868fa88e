package pebblestore

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// batchCache keeps the stored values of a few record batches recently
// read whose CRC was checked, so that a reader taking a few messages at a
// time from one large batch (a shared consumer's workers acquiring ten
// messages of a COPY's thousand) neither seeks Pebble nor checks the
// whole batch's CRC again for each take. A batch never changes once
// written and its key is never reused (topic ids are not given twice), so
// an entry needs no invalidation: a batch retention deleted lies wholly
// below its partition's start, which every Scan clamps to, so it is never
// asked for again and ages out. Only inline batches are kept (a
// reference record's payload is staged data read apart). The cache holds
// at most batchCacheBytes, a batch at most batchCacheMaxEntry, least
// recently used first out.
type batchCache struct {
	mu    sync.Mutex
	bytes int
	m     map[batchKey]*list.Element
	lru   list.List // of *cachedBatch, most recently used in front
}

const (
	batchCacheBytes    = 8 << 20
	batchCacheMaxEntry = 1 << 20
)

// batchKey names a batch: its topic, partition and first offset.
type batchKey struct {
	topic uint64
	part  int32
	base  int64
}

type cachedBatch struct {
	key batchKey
	v   []byte // the stored value: never modified
	// held counts its partition's entries (partition.cached), so that a
	// Scan of a partition with none takes no lock.
	held *atomic.Int32
}

// get returns the value of batch k, if kept.
func (c *batchCache) get(k batchKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedBatch).v, true
}

// put keeps a copy of v, batch k's stored value (v may be Pebble's
// buffer); held is its partition's count of entries.
func (c *batchCache) put(k batchKey, v []byte, held *atomic.Int32) {
	if len(v) > batchCacheMaxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[batchKey]*list.Element{}
	}
	if e := c.m[k]; e != nil {
		c.lru.MoveToFront(e)
		return
	}
	c.m[k] = c.lru.PushFront(&cachedBatch{key: k, v: append([]byte(nil), v...), held: held})
	held.Add(1)
	c.bytes += len(v)
	for c.bytes > batchCacheBytes {
		old := c.lru.Remove(c.lru.Back()).(*cachedBatch)
		delete(c.m, old.key)
		old.held.Add(-1)
		c.bytes -= len(old.v)
	}
}
