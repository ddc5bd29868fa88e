package reads

import (
	"container/list"
	"sync"
)

// Cache keeps the data of recently written or read record batch
// and staged messages, keyed by stream sequence, up to a byte budget,
// least recently used out first. A stream sequence names one message for
// the stream's life and a message is never changed, so a cached copy is
// never stale: a message that retention or a sweep removed is simply
// never asked for again (the fold no longer indexes it) and ages out.
//
// Why: the fold is headers only, so without it every read of a record
// batch is a direct get, a round trip to a node (about a millisecond
// here). Consumers mostly read what was written a moment ago, and a
// gateway that wrote it still has the bytes: a read-process-write
// transaction's read, or a consumer trailing its producers, then costs
// no round trip. Data a gateway did not write is cached as it is read,
// so readers of one partition through one gateway share one fetch.
//
// The slices it returns are shared: callers must not modify them.
type Cache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    *list.List // of *entry, most recent at the front
	bySeq  map[uint64]*list.Element
	hits   int64
	misses int64
}

type entry struct {
	seq  uint64
	data []byte
}

// NewCache returns a cache of budget bytes; 0 or less disables it.
func NewCache(budget int64) *Cache {
	return &Cache{budget: budget, lru: list.New(), bySeq: map[uint64]*list.Element{}}
}

// Get returns the data at seq if it is cached.
func (c *Cache) Get(seq uint64) ([]byte, bool) {
	if c == nil || c.budget <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.bySeq[seq]
	if e == nil {
		c.misses++
		return nil, false
	}
	c.hits++
	c.lru.MoveToFront(e)
	return e.Value.(*entry).data, true
}

// Put caches data as the message at seq; data must not change afterwards.
// A message larger than a quarter of the budget is not cached.
func (c *Cache) Put(seq uint64, data []byte) {
	if c == nil || c.budget <= 0 || int64(len(data)) > c.budget/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.bySeq[seq]; e != nil {
		c.lru.MoveToFront(e)
		return
	}
	c.bySeq[seq] = c.lru.PushFront(&entry{seq: seq, data: data})
	c.used += int64(len(data))
	for c.used > c.budget {
		last := c.lru.Back()
		ce := last.Value.(*entry)
		c.lru.Remove(last)
		delete(c.bySeq, ce.seq)
		c.used -= int64(len(ce.data))
	}
}

// Stats reports the cache's hits, misses and bytes held.
func (c *Cache) Stats() (hits, misses, bytes int64) {
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses, c.used
}
