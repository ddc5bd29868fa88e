package pebblestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sequencer"
)

// DDL runs on the committer goroutine (see op.ddl), so it is ordered with
// commits and never races with offset assignment. Every DDL write is synced.

// CreateTopic creates a topic with partitions 0..MinActivePartitions-1.
func (s *PebbleStore) CreateTopic(ctx context.Context, cfg topicstore.TopicConfig) error {
	cfg = topicstore.CloneConfig(cfg)
	if err := topicstore.NormalizeConfig(&cfg); err != nil {
		return err
	}
	_, err := s.submit(ctx, &op{ddl: func() error {
		s.mu.RLock()
		exists := s.topics[cfg.Name] != nil
		s.mu.RUnlock()
		if exists {
			return fmt.Errorf("%w: %q", topicstore.ErrTopicExists, cfg.Name)
		}
		l := topicstore.FlatLayout(cfg.MinActivePartitions)
		if topicstore.AutoPartitioned(&cfg) {
			l.KeyAll()
		}
		rec := catalogRecord{Config: cfg, ID: s.nextID, CreatedAt: s.opts.Clock().UTC(), Partitions: len(l.Parts), Layout: &l}
		b := s.db.NewBatch()
		if err := putCatalog(b, rec); err != nil {
			return err
		}
		_ = b.Set([]byte(keys.NextTopicID), binary.BigEndian.AppendUint64(nil, rec.ID+1), nil)
		ct := &sequencer.Topic{ID: rec.ID, Producers: map[string]*sequencer.ProducerState{}, Parts: make([]sequencer.Partition, rec.Partitions)}
		ct.SetLayout(l.Clone())
		cons, err := s.consumerDDL(b, rec.ID, nil, &cfg, ct, rec.Partitions)
		if err != nil {
			b.Close()
			return err
		}
		ct.Consumers = cons
		if err := s.syncDDL(b); err != nil {
			return err
		}
		s.nextID++
		t := newTopic(rec)
		for i := range t.parts {
			t.parts[i] = &partition{}
		}
		s.install(t, ct)
		return nil
	}})
	return err
}

// AlterTopic applies fn to a copy of the topic's config and stores the
// result; raising MinActivePartitions adds partitions. fn runs on the
// committer goroutine and must not call the store. Consumers are matched by
// name: one absent from the new config is dropped (its positions deleted),
// a new one starts at read_from (see consumerDDL), and changing an existing
// consumer's read_from repositions it (ALTER CONSUMER SET (read_from = ...)).
func (s *PebbleStore) AlterTopic(ctx context.Context, name string, fn func(*topicstore.TopicConfig) error) error {
	_, err := s.submit(ctx, &op{ddl: func() error {
		s.mu.RLock()
		old := s.topics[name]
		s.mu.RUnlock()
		if old == nil {
			return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
		}
		cfg := topicstore.CloneConfig(old.cfg)
		if err := fn(&cfg); err != nil {
			return err
		}
		cfg.Name = name
		if err := topicstore.NormalizeConfig(&cfg); err != nil {
			return err
		}
		if cfg.MinActivePartitions < old.cfg.MinActivePartitions {
			return fmt.Errorf("%w: topic %q has min_active_partitions %d, asked for %d",
				topicstore.ErrPartitionsDecrease, name, old.cfg.MinActivePartitions, cfg.MinActivePartitions)
		}
		if topicstore.AutoPartitioned(&old.cfg) && !topicstore.AutoPartitioned(&cfg) {
			return fmt.Errorf("%w: topic %q: once enabled, auto-partitioning can only be paused ('paused'), not %q",
				topicstore.ErrAutoPartitioning, name, cfg.AutoPartitioningStrategy)
		}
		l := old.layout.Clone()
		if topicstore.AutoPartitioned(&cfg) && !l.Keyed {
			l.KeyAll() // enabling auto-partitioning keys the active partitions
		}
		// More active partitions: a keyed layout splits its widest
		// ranges, a flat one appends partitions.
		for l.Active() < cfg.MinActivePartitions {
			if !l.Keyed {
				l.Parts = append(l.Parts, topicstore.PartLayout{Parent: -1})
				continue
			}
			if _, _, err := l.Split(l.Widest()); err != nil {
				return err
			}
		}
		return s.relayout(old, cfg, l)
	}})
	return err
}

// SplitPartition splits active partition part of a keyed topic in two at
// the middle of its range, as auto-partitioning does (split.go): the
// parent becomes inactive and two new active partitions take its range.
// It is one synced catalog change, ordered with commits: a commit before
// it wrote to the parent, one after it writes to a child. A split past
// max_active_partitions is refused (ErrAutoPartitioning).
func (s *PebbleStore) SplitPartition(ctx context.Context, name string, part int32) error {
	_, err := s.submit(ctx, &op{ddl: func() error {
		s.mu.RLock()
		old := s.topics[name]
		s.mu.RUnlock()
		if old == nil {
			return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
		}
		return s.splitLocked(old, part)
	}})
	return err
}

// splitLocked splits part of t; it runs on the committer goroutine.
func (s *PebbleStore) splitLocked(t *topic, part int32) error {
	l := t.layout.Clone()
	if max := t.cfg.MaxActivePartitions; max > 0 && l.Active()+1 > max {
		return fmt.Errorf("%w: topic %q already has %d active partitions, its max_active_partitions", topicstore.ErrAutoPartitioning, t.cfg.Name, l.Active())
	}
	if _, _, err := l.Split(part); err != nil {
		return fmt.Errorf("topic %q: %w", t.cfg.Name, err)
	}
	return s.relayout(t, topicstore.CloneConfig(t.cfg), l)
}

// relayout stores cfg and layout l for topic old in one synced batch and
// installs them: new partitions get empty state, consumers positions for
// them, and the core routes by l from the next commit on. It runs on the
// committer goroutine.
func (s *PebbleStore) relayout(old *topic, cfg topicstore.TopicConfig, l topicstore.Layout) error {
	rec := catalogRecord{Config: cfg, ID: old.id, CreatedAt: old.createdAt, Partitions: len(l.Parts), Layout: &l}
	b := s.db.NewBatch()
	if err := putCatalog(b, rec); err != nil {
		b.Close()
		return err
	}
	ct := s.core.Topics[old.id] // the committer owns it: no lock to read
	cons, err := s.consumerDDL(b, old.id, &old.cfg, &cfg, ct, rec.Partitions)
	if err != nil {
		b.Close()
		return err
	}
	thaw := s.sharedDDL(b, old, &cfg) // shared-consumer state of dropped consumers (shared.go)
	defer thaw()
	if err := s.syncDDL(b); err != nil {
		return err
	}
	t := newTopic(rec)
	copy(t.parts, old.parts)
	for i := len(old.parts); i < len(t.parts); i++ {
		t.parts[i] = &partition{}
	}
	s.coreMu.Lock()
	for len(ct.Parts) < len(t.parts) {
		ct.Parts = append(ct.Parts, sequencer.Partition{})
	}
	ct.Consumers = cons
	ct.SetLayout(l.Clone())
	s.coreMu.Unlock()
	s.install(t, ct)
	return nil
}

// DropTopic deletes a topic: its catalog entry, and its messages,
// producers and consumer positions with range deletions over its ID; it
// wakes the topic's Changed waiters. A topic re-created with the
// same name gets a new ID and starts empty.
func (s *PebbleStore) DropTopic(ctx context.Context, name string) error {
	_, err := s.submit(ctx, &op{ddl: func() error {
		s.mu.RLock()
		t := s.topics[name]
		s.mu.RUnlock()
		if t == nil {
			return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
		}
		b := s.db.NewBatch()
		if ct := s.core.Topics[t.id]; ct != nil { // referenced staged data goes too
			for i := range ct.Parts {
				s.releaseRefs(b, ct, int32(i), math.MaxInt64)
			}
		}
		for _, prefix := range []string{keys.PrefixMessages, keys.PrefixProducer, keys.PrefixPositions} {
			_ = b.DeleteRange(keys.Topic(prefix, t.id), keys.Topic(prefix, t.id+1), nil)
		}
		_ = b.Delete(keys.Catalog(name), nil)
		thaw := s.sharedDDL(b, t, nil) // shared-consumer state (shared.go)
		defer thaw()
		if err := s.syncDDL(b); err != nil {
			return err
		}
		s.mu.Lock()
		delete(s.topics, name)
		delete(s.byID, t.id)
		s.mu.Unlock()
		s.coreMu.Lock()
		delete(s.core.Topics, t.id)
		s.coreMu.Unlock()
		s.wake(t.id)
		s.meter.Forget(t.id, 0, true)
		s.reclaim.Topic(t.id) // return the disk space now (internal/reclaim)
		return nil
	}})
	return err
}

// syncDDL commits a DDL batch with sync; a failure is fatal for the store.
func (s *PebbleStore) syncDDL(b *pebble.Batch) error {
	defer b.Close()
	if err := b.Commit(pebble.Sync); err != nil {
		s.fail(err)
		return s.err()
	}
	return nil
}

func (s *PebbleStore) install(t *topic, ct *sequencer.Topic) {
	s.configureThrottle(t, ct)
	ct.Expiry = t.cfg.ProducerExpiry
	s.coreMu.Lock()
	s.core.Topics[t.id] = ct
	s.coreMu.Unlock()
	s.mu.Lock()
	s.topics[t.cfg.Name] = t
	s.byID[t.id] = t
	s.mu.Unlock()
}

func putCatalog(b *pebble.Batch, rec catalogRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Set(keys.Catalog(rec.Config.Name), v, nil)
}

func sortTopics(ts []*topic) {
	slices.SortFunc(ts, func(a, b *topic) int { return strings.Compare(a.cfg.Name, b.cfg.Name) })
}

func sortProducers(ps []topicstore.ProducerInfo) {
	slices.SortFunc(ps, func(a, b topicstore.ProducerInfo) int { return strings.Compare(a.ProducerID, b.ProducerID) })
}

// configureThrottle gives t (a topic about to be installed, created, altered
// or recovered) its throttle: the one of the catalog entry it replaces, so
// counters and buckets carry over, reconfigured to t's limits; a new one only
// once the topic is throttled. ct.Throttle is set only while the topic is
// throttled, so the core's hot path of an unthrottled topic is one nil check.
// It runs on the committer goroutine (or in Open before it starts).
func (s *PebbleStore) configureThrottle(t *topic, ct *sequencer.Topic) {
	s.mu.RLock()
	old := s.byID[t.id]
	s.mu.RUnlock()
	if old != nil {
		t.thr = old.thr
	}
	rate, burst := topicstore.ThrottleLimits(&t.cfg)
	if t.thr == nil && rate > 0 {
		t.thr = &sequencer.Throttle{}
	}
	if t.thr != nil {
		now := s.opts.Clock()
		if now.Before(s.lastNow) {
			now = s.lastNow
		}
		t.thr.Reconfigure(now, rate, burst)
	}
	ct.Throttle = nil
	if rate > 0 {
		ct.Throttle = t.thr
	}
}
