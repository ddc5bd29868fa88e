package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// Host is what the catalog needs of the store.
type Host interface {
	// Lock and Unlock are the store's lock: the fold's state (Config.Fold)
	// is read, and the drops' bookkeeping in it changed, only under it.
	sync.Locker
	// Closed reports, under the lock, whether the store is closed.
	Closed() bool
	// Connected reports whether the store's connection to the cluster is
	// up (a publish made while it is down may still be sent later).
	Connected() bool
	// Publish publishes m, conditional as its headers say, and returns
	// its stream sequence.
	Publish(ctx context.Context, m *nats.Msg) (uint64, error)
	// PublishBatch publishes msgs as one atomic batch, conditional as
	// their headers say.
	PublishBatch(ctx context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error)
	// LastFor returns the sequence of the last message on subject, 0 when
	// the subject holds none.
	LastFor(ctx context.Context, subject string) (uint64, nats.Header, error)
	// Purge deletes the messages on subject (a filter) below sequence
	// below; 0: all of them.
	Purge(ctx context.Context, subject string, below uint64) error
	// WaitApplied blocks until the fold has applied seq; it fails with
	// topicstore.ErrUnavailable when that takes longer than the store's
	// timeout.
	WaitApplied(ctx context.Context, seq uint64) error
	// Sync waits until the fold has applied the stream's last message.
	Sync(ctx context.Context) error
	// CatchUp waits until the fold has caught up with what refused a
	// publish as stale (a wrong last sequence).
	CatchUp(refusal error) error
	// NoLeader reports whether a publish failed for want of a node to
	// take it (an election): nothing of it was stored.
	NoLeader(err error) bool
	// AwaitLeader waits before the attempt+1st publish after NoLeader.
	AwaitLeader(attempt int)
	// Unavailable wraps a cluster error so that the caller can tell it
	// apart (topicstore.ErrUnavailable).
	Unavailable(err error) error
}

// Config is what the catalog knows of its gateway.
type Config struct {
	Subjects fold.Subjects    // the stream's subjects
	Fold     *fold.State      // the fold's state, under the host's lock
	Clock    func() time.Time // the store's clock: creation and drop times, meters
	Timeout  time.Duration    // bounds each request to the cluster
	// MaxAttempts bounds how often a change refused for a stale fold is
	// decided again (the committer's bound for its groups).
	MaxAttempts int
}

// Catalog is the store's topic catalog (doc.go says what it owns).
type Catalog struct {
	cfg Config
	h   Host
}

// New returns the catalog of a store.
func New(cfg Config, h Host) *Catalog { return &Catalog{cfg: cfg, h: h} }

// ErrNothing is what a change returns when there is nothing to change:
// Change then publishes nothing.
var ErrNothing = errors.New("nothing to change")

// request returns a context bounded by the store's timeout.
func (c *Catalog) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.Timeout)
}

// Change publishes change's record for name (nil: a drop), conditional
// on the catalog subject not having changed since the fold saw it, and
// planning again from a caught-up fold if it had. change runs under the
// host's lock; ErrNothing from it makes Change publish nothing.
func (c *Catalog) Change(ctx context.Context, name string, change func(old *fold.Topic) (*fold.CatalogRec, error)) error {
	c.h.Lock()
	closed := c.h.Closed()
	c.h.Unlock()
	if closed {
		return topicstore.ErrClosed
	}
	f := c.cfg.Fold
	deadline := time.Now().Add(c.cfg.Timeout)
	for attempt := 0; ; attempt++ {
		c.h.Lock()
		old := f.ByName[name]
		last := f.CatSeqs[name]
		rec, err := change(old)
		c.h.Unlock()
		if err == ErrNothing {
			return nil
		}
		if err != nil {
			return err
		}
		m := nats.NewMsg(c.cfg.Subjects.Catalog(name))
		var number *nats.Msg
		if rec == nil && old != nil {
			m.Header.Set(fold.HDropped, strconv.FormatUint(old.Rec.ID, 10))
			m.Header.Set(fold.HAt, strconv.FormatInt(c.cfg.Clock().UnixMicro(), 10))
			// The tombstone is all the name's subject keeps.
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		}
		if rec != nil && old == nil {
			// A creation: the next topic number, given out in order.
			c.h.Lock()
			rec.Ordinal = f.Created + 1
			number = nats.NewMsg(c.cfg.Subjects.Of(fold.KindNumbers))
			number.Header.Set(fold.HCreated, strconv.FormatUint(rec.Ordinal, 10))
			number.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
			jsext.Expect(number, f.CnSeq)
			c.h.Unlock()
		}
		if rec != nil {
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			m.Header.Set(fold.HTopic, string(b))
		}
		jsext.Expect(m, last)
		rctx, cancel := c.request(ctx)
		var acked uint64
		if number != nil {
			var ack *jsext.BatchAck
			if ack, err = c.h.PublishBatch(rctx, []*nats.Msg{number, m}); err == nil {
				acked = ack.Sequence
			}
		} else {
			acked, err = c.h.Publish(rctx, m)
		}
		cancel()
		if err == nil {
			return c.h.WaitApplied(ctx, acked)
		}
		if c.h.NoLeader(err) && time.Now().Before(deadline) && ctx.Err() == nil {
			c.h.AwaitLeader(attempt) // nothing stored: an election
			continue
		}
		code := jsext.ErrorCode(err)
		if (code != jsext.ErrCodeWrongLastSequence && code != jsext.ErrCodeWrongLastSequenceConstant) || attempt >= c.cfg.MaxAttempts {
			return c.h.Unavailable(err)
		}
		if err := c.h.CatchUp(err); err != nil {
			return err
		}
		c.h.Lock()
		absent := f.ByName[name] == nil
		c.h.Unlock()
		if absent {
			c.repairSeq(ctx, name)
		}
	}
}

// repairSeq sets the fold's last sequence of name's catalog subject to
// the stream's: a fold that forgot a dropped topic (ForgetDrops) before
// its tombstone was purged expects the subject empty, and one that holds
// the sequence of a tombstone purged since expects it not to be.
func (c *Catalog) repairSeq(ctx context.Context, name string) {
	rctx, cancel := c.request(ctx)
	seq, _, err := c.h.LastFor(rctx, c.cfg.Subjects.Catalog(name))
	cancel()
	if err != nil {
		return
	}
	c.h.Lock()
	defer c.h.Unlock()
	f := c.cfg.Fold
	if f.ByName[name] != nil {
		return
	}
	if seq == 0 {
		delete(f.CatSeqs, name)
	} else {
		f.CatSeqs[name] = seq
	}
}

// CreateTopic implements topicstore.Store's CreateTopic.
func (c *Catalog) CreateTopic(ctx context.Context, cfg topicstore.TopicConfig) error {
	cfg = topicstore.CloneConfig(cfg)
	if err := topicstore.NormalizeConfig(&cfg); err != nil {
		return err
	}
	return c.Change(ctx, cfg.Name, func(old *fold.Topic) (*fold.CatalogRec, error) {
		if old != nil {
			return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicExists, cfg.Name)
		}
		l := topicstore.FlatLayout(cfg.MinActivePartitions)
		if topicstore.AutoPartitioned(&cfg) {
			l.KeyAll()
		}
		return &fold.CatalogRec{Config: cfg, CreatedAt: c.cfg.Clock().UTC().UnixMicro(), Layout: l}, nil
	})
}

// AlterTopic implements topicstore.Store's AlterTopic, with the embedded
// store's rules.
func (c *Catalog) AlterTopic(ctx context.Context, name string, fn func(*topicstore.TopicConfig) error) error {
	return c.Change(ctx, name, func(old *fold.Topic) (*fold.CatalogRec, error) {
		if old == nil {
			return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
		}
		cfg := topicstore.CloneConfig(old.Rec.Config)
		if err := fn(&cfg); err != nil {
			return nil, err
		}
		cfg.Name = name
		if err := topicstore.NormalizeConfig(&cfg); err != nil {
			return nil, err
		}
		if cfg.MinActivePartitions < old.Rec.Config.MinActivePartitions {
			return nil, fmt.Errorf("%w: topic %q has min_active_partitions %d, asked for %d",
				topicstore.ErrPartitionsDecrease, name, old.Rec.Config.MinActivePartitions, cfg.MinActivePartitions)
		}
		if topicstore.AutoPartitioned(&old.Rec.Config) && !topicstore.AutoPartitioned(&cfg) {
			return nil, fmt.Errorf("%w: topic %q: once enabled, auto-partitioning can only be paused ('paused'), not %q",
				topicstore.ErrAutoPartitioning, name, cfg.AutoPartitioningStrategy)
		}
		l := old.Rec.Layout.Clone()
		if topicstore.AutoPartitioned(&cfg) && !l.Keyed {
			l.KeyAll()
		}
		for l.Active() < cfg.MinActivePartitions {
			if !l.Keyed {
				l.Parts = append(l.Parts, topicstore.PartLayout{Parent: -1})
				continue
			}
			if _, _, err := l.Split(l.Widest()); err != nil {
				return nil, err
			}
		}
		rec := old.Rec
		rec.Config, rec.Layout = cfg, l
		return &rec, nil
	})
}

// Known makes sure the fold has seen topic name if the stream holds it: a
// name this gateway does not know may have been created through another
// gateway a moment ago, so it catches up with the stream (Host.Sync) and
// looks again. Only misses pay the round trip; a topic the stream lacks
// is ErrTopicNotFound, an unreachable cluster ErrUnavailable.
func (c *Catalog) Known(name string) error {
	c.h.Lock()
	_, ok := c.cfg.Fold.ByName[name]
	c.h.Unlock()
	if ok {
		return nil
	}
	return c.h.Sync(context.Background())
}

// Topic implements topicstore.Store's Topic.
func (c *Catalog) Topic(name string) (topicstore.TopicInfo, error) {
	if err := c.Known(name); err != nil {
		return topicstore.TopicInfo{}, err
	}
	c.h.Lock()
	defer c.h.Unlock()
	t := c.cfg.Fold.ByName[name]
	if t == nil {
		return topicstore.TopicInfo{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
	}
	return t.Info(), nil
}

// PartitionCount implements topicstore.PartitionCounter, with Topic's
// view of the catalog.
func (c *Catalog) PartitionCount(name string) (int, error) {
	if err := c.Known(name); err != nil {
		return 0, err
	}
	c.h.Lock()
	defer c.h.Unlock()
	t := c.cfg.Fold.ByName[name]
	if t == nil {
		return 0, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
	}
	return len(t.Parts), nil
}

// TopicConfig implements topicstore.Configer: the topic's definition
// without its partitions.
func (c *Catalog) TopicConfig(name string) (topicstore.TopicConfig, error) {
	c.h.Lock()
	defer c.h.Unlock()
	t := c.cfg.Fold.ByName[name]
	if t == nil {
		return topicstore.TopicConfig{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
	}
	return topicstore.CloneConfig(t.Rec.Config), nil
}

// Topics implements topicstore.Store's Topics.
func (c *Catalog) Topics() []topicstore.TopicInfo {
	c.h.Lock()
	defer c.h.Unlock()
	out := make([]topicstore.TopicInfo, 0, len(c.cfg.Fold.ByName))
	for _, t := range c.cfg.Fold.ByName {
		out = append(out, t.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Config.Name < out[j].Config.Name })
	return out
}
