package reads

import (
	"context"
	"sync"
	"time"

	"topicgate/topicstore/jetstream/fold"
)

// Host is what the reads need of the store.
type Host interface {
	// Lock and Unlock are the store's lock: the fold's state (Config.Fold)
	// is read only under it.
	sync.Locker
	// Closed reports, under the lock, whether the store is closed.
	Closed() bool
	// GetRecord returns the payload of record batch message seq, which
	// the fold holds, from the cluster (asked again while the stream
	// cannot answer); the cache is the caller's.
	GetRecord(ctx context.Context, seq uint64) ([]byte, error)
	// Unavailable wraps a cluster error so that the caller can tell it
	// apart (topicstore.ErrUnavailable).
	Unavailable(err error) error
}

// Config is what the reads know of their gateway.
type Config struct {
	Fold           *fold.State      // the fold's state, read under the host's lock
	Clock          func() time.Time // the store's clock
	ProducerExpiry time.Duration    // how long producers live without writes, unless a topic says otherwise
	CacheBytes     int64            // the record cache's budget (NewCache)
}

// Reads answers the store's reads from the fold's state and the record
// batches it indexes.
type Reads struct {
	cfg   Config
	h     Host
	cache *Cache
}

// New returns the reads of a store, with an empty record cache.
func New(cfg Config, h Host) *Reads {
	return &Reads{cfg: cfg, h: h, cache: NewCache(cfg.CacheBytes)}
}

// Cache is the record cache: the committer puts in it the record batches
// its gateway wrote (Record puts those it fetched).
func (rd *Reads) Cache() *Cache { return rd.cache }
