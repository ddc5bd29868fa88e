package catalog

import (
	"context"
	"fmt"
	"slices"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
)

// TombstoneAge is how long a dropped topic's tombstone stays in the
// stream (Kafka's delete.retention.ms default).
const TombstoneAge = 24 * time.Hour

// DropTopic implements topicstore.Store's DropTopic: a catalog message
// without a topic record (naming the dropped topic's ID, Tg-Dropped); the
// topic's messages are purged after it. A gateway that dies between the
// two leaves them to the maintenance lease holder, which purges what
// every dropped topic its fold knows of may have left (PurgeLeftovers).
func (c *Catalog) DropTopic(ctx context.Context, name string) error {
	var id uint64
	err := c.Change(ctx, name, func(old *fold.Topic) (*fold.CatalogRec, error) {
		if old == nil {
			return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
		}
		id = old.Rec.ID
		return nil, nil
	})
	if err != nil {
		return err
	}
	// The drop is committed; what is left of the topic is garbage that no
	// fold reads (its ID is never reused).
	if c.purgeTopic(ctx, id) == nil {
		c.h.Lock()
		if l := c.cfg.Fold.Leftovers[id]; l != nil {
			l.Purged = true
		}
		c.h.Unlock()
	}
	return nil
}

// TopicFilters are the subjects of topic id's messages: its record
// batches, producers and their expiry notices, positions, retention
// starts, guards, shared-consumer states and read-session members.
func (c *Catalog) TopicFilters(id uint64) []string {
	subj := c.cfg.Subjects
	out := []string{subj.Expiry(id)}
	for _, kind := range []string{fold.KindData, fold.KindProducer, fold.KindPosition, fold.KindStart, fold.KindGuard, fold.KindShared, fold.KindMember} {
		out = append(out, subj.TopicFilter(kind, id))
	}
	return out
}

// purgeTopic deletes every message of dropped topic id.
func (c *Catalog) purgeTopic(ctx context.Context, id uint64) error {
	for _, f := range c.TopicFilters(id) {
		rctx, cancel := c.request(ctx)
		err := c.h.Purge(rctx, f, 0)
		cancel()
		if err != nil {
			return c.h.Unavailable(err)
		}
	}
	return nil
}

// PurgeLeftovers purges what the dropped topics the fold knows of may
// have left (a gateway died between a drop and its purge), and the
// tombstones older than TombstoneAge at now; a dropped topic is forgotten
// once both are purged. A maintenance step of the lease holder.
func (c *Catalog) PurgeLeftovers(ctx context.Context, now time.Time) error {
	f := c.cfg.Fold
	c.h.Lock()
	ids := make([]uint64, 0, len(f.Leftovers))
	for id := range f.Leftovers {
		ids = append(ids, id)
	}
	c.h.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		c.h.Lock()
		l := *f.Leftovers[id]
		c.h.Unlock()
		if !l.Purged {
			if err := c.purgeTopic(ctx, id); err != nil {
				return err
			}
		}
		old := now.Sub(l.At) >= TombstoneAge
		if old {
			// Only the tombstone and what came before it: a creation of
			// the name since stays.
			rctx, cancel := c.request(ctx)
			err := c.h.Purge(rctx, c.cfg.Subjects.Catalog(l.Name), l.Seq+1)
			cancel()
			if err != nil {
				return c.h.Unavailable(err)
			}
		}
		c.h.Lock()
		if cur := f.Leftovers[id]; cur != nil {
			cur.Purged = true
			if old {
				c.forgetDrop(id)
			}
		}
		c.h.Unlock()
	}
	return nil
}

// ForgetDrops forgets the dropped topics whose tombstone is older than
// twice TombstoneAge at now, purged or not: the lease holder of that time
// purged it. Every gateway's maintenance runs it.
func (c *Catalog) ForgetDrops(now time.Time) {
	c.h.Lock()
	defer c.h.Unlock()
	for id, l := range c.cfg.Fold.Leftovers {
		if now.Sub(l.At) >= 2*TombstoneAge {
			c.forgetDrop(id)
		}
	}
}

// forgetDrop drops dropped topic id from the fold: its leftover and its
// name's catalog sequence, unless the name was created again since. It
// runs under the host's lock.
func (c *Catalog) forgetDrop(id uint64) {
	f := c.cfg.Fold
	l := f.Leftovers[id]
	if l == nil {
		return
	}
	delete(f.Leftovers, id)
	if f.ByName[l.Name] == nil && f.CatSeqs[l.Name] == l.Seq {
		delete(f.CatSeqs, l.Name)
	}
}
