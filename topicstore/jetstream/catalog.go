package jetstream

import (
	"errors"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Topic DDL: each change is one catalog message, conditional on the
// catalog subject's last sequence, so two gateways creating the same topic
// cannot both succeed; a creation's stream sequence is the topic's ID, so
// a topic dropped and created again never sees the old one's messages.
//
// A creation also numbers the topic (TopicInfo.ID, 1, 2, ... as in the
// embedded store): its batch holds a message on <prefix>.cn, rolled up and
// conditional on that subject's last sequence, carrying the number
// (Tg-Created), and the record carries it too (fold.CatalogRec.Ordinal). So
// creations are numbered in order, and every gateway knows every live
// topic's number without counting creation records, which lets a drop
// remove them: the drop's tombstone rolls its catalog subject up, the
// topic's messages are purged, and once the tombstone is tombstoneAge old
// the maintenance lease holder purges it too (a gateway folding more than
// that behind would miss the drop, as a Kafka consumer lagging past
// delete.retention.ms misses a tombstone). Nothing is then kept of a
// dropped topic, in the stream or in any fold.

// tombstoneAge is how long a dropped topic's tombstone stays in the
// stream (Kafka's delete.retention.ms default).
const tombstoneAge = 24 * time.Hour

// CreateTopic implements topicstore.Store.
func (s *Store) CreateTopic(ctx context.Context, cfg topicstore.TopicConfig) error {
	cfg = topicstore.CloneConfig(cfg)
	if err := topicstore.NormalizeConfig(&cfg); err != nil {
		return err
	}
	return s.catalogChange(ctx, cfg.Name, func(old *fold.Topic) (*fold.CatalogRec, error) {
		if old != nil {
			return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicExists, cfg.Name)
		}
		l := topicstore.FlatLayout(cfg.MinActivePartitions)
		if topicstore.AutoPartitioned(&cfg) {
			l.KeyAll()
		}
		return &fold.CatalogRec{Config: cfg, CreatedAt: s.opts.Clock().UTC().UnixMicro(), Layout: l}, nil
	})
}

// AlterTopic implements topicstore.Store, with the embedded store's rules.
func (s *Store) AlterTopic(ctx context.Context, name string, fn func(*topicstore.TopicConfig) error) error {
	return s.catalogChange(ctx, name, func(old *fold.Topic) (*fold.CatalogRec, error) {
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

// DropTopic implements topicstore.Store: a catalog message without a
// topic record (naming the dropped topic's ID, Tg-Dropped); the topic's
// messages are purged after it. A gateway that dies between the two
// leaves them to the maintenance lease holder, which purges what every
// dropped topic its fold knows of may have left (purgeLeftovers).
func (s *Store) DropTopic(ctx context.Context, name string) error {
	var id uint64
	err := s.catalogChange(ctx, name, func(old *fold.Topic) (*fold.CatalogRec, error) {
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
	if s.purgeTopic(ctx, id) == nil {
		s.mu.Lock()
		if l := s.fold.Leftovers[id]; l != nil {
			l.Purged = true
		}
		s.mu.Unlock()
	}
	return nil
}

// topicFilters are the subjects of topic id's messages: its record
// batches, producers and their expiry notices, positions, retention
// starts, guards, shared-consumer states and read-session members.
func (s *Store) topicFilters(id uint64) []string {
	out := []string{s.subj.Expiry(id)}
	for _, kind := range []string{fold.KindData, fold.KindProducer, fold.KindPosition, fold.KindStart, fold.KindGuard, fold.KindShared, fold.KindMember} {
		out = append(out, s.subj.TopicFilter(kind, id))
	}
	return out
}

// purgeTopic deletes every message of dropped topic id.
func (s *Store) purgeTopic(ctx context.Context, id uint64) error {
	for _, f := range s.topicFilters(id) {
		rctx, cancel := s.request(ctx)
		err := s.io.purge(rctx, f, 0)
		cancel()
		if err != nil {
			return s.unavailable(err)
		}
	}
	return nil
}

// purgeLeftovers purges what the dropped topics the fold knows of may
// have left (a gateway died between a drop and its purge), and the
// tombstones older than tombstoneAge at now; a dropped topic is forgotten
// once both are purged. A maintenance step of the lease holder.
func (s *Store) purgeLeftovers(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	ids := make([]uint64, 0, len(s.fold.Leftovers))
	for id := range s.fold.Leftovers {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		s.mu.Lock()
		l := *s.fold.Leftovers[id]
		s.mu.Unlock()
		if !l.Purged {
			if err := s.purgeTopic(ctx, id); err != nil {
				return err
			}
		}
		old := now.Sub(l.At) >= tombstoneAge
		if old {
			// Only the tombstone and what came before it: a creation of
			// the name since stays.
			rctx, cancel := s.request(ctx)
			err := s.io.purge(rctx, s.subj.Catalog(l.Name), l.Seq+1)
			cancel()
			if err != nil {
				return s.unavailable(err)
			}
		}
		s.mu.Lock()
		if cur := s.fold.Leftovers[id]; cur != nil {
			cur.Purged = true
			if old {
				s.forgetDrop(id)
			}
		}
		s.mu.Unlock()
	}
	return nil
}

// forgetDrops forgets the dropped topics whose tombstone is older than
// twice tombstoneAge at now, purged or not: the lease holder of that time
// purged it. Every gateway's maintenance runs it.
func (s *Store) forgetDrops(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, l := range s.fold.Leftovers {
		if now.Sub(l.At) >= 2*tombstoneAge {
			s.forgetDrop(id)
		}
	}
}

// forgetDrop drops dropped topic id from the fold: its leftover and its
// name's catalog sequence, unless the name was created again since. It
// runs under s.mu.
func (s *Store) forgetDrop(id uint64) {
	l := s.fold.Leftovers[id]
	if l == nil {
		return
	}
	delete(s.fold.Leftovers, id)
	if s.fold.ByName[l.Name] == nil && s.fold.CatSeqs[l.Name] == l.Seq {
		delete(s.fold.CatSeqs, l.Name)
	}
}

// catalogChange publishes change's record for name (nil: a drop),
// conditional on the catalog subject not having changed since the fold
// saw it, and planning again from a caught-up fold if it had.
func (s *Store) catalogChange(ctx context.Context, name string, change func(old *fold.Topic) (*fold.CatalogRec, error)) error {
	if s.isClosed() {
		return topicstore.ErrClosed
	}
	deadline := time.Now().Add(s.opts.Timeout)
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		old := s.fold.ByName[name]
		last := s.fold.CatSeqs[name]
		rec, err := change(old)
		s.mu.Unlock()
		if err == errNothing {
			return nil
		}
		if err != nil {
			return err
		}
		m := nats.NewMsg(s.subj.Catalog(name))
		var number *nats.Msg
		if rec == nil && old != nil {
			m.Header.Set(fold.HDropped, strconv.FormatUint(old.Rec.ID, 10))
			m.Header.Set(fold.HAt, strconv.FormatInt(s.opts.Clock().UnixMicro(), 10))
			// The tombstone is all the name's subject keeps.
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		}
		if rec != nil && old == nil {
			// A creation: the next topic number, given out in order.
			s.mu.Lock()
			rec.Ordinal = s.fold.Created + 1
			number = nats.NewMsg(s.subj.Of(fold.KindNumbers))
			number.Header.Set(fold.HCreated, strconv.FormatUint(rec.Ordinal, 10))
			number.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
			jsext.Expect(number, s.fold.CnSeq)
			s.mu.Unlock()
		}
		if rec != nil {
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			m.Header.Set(fold.HTopic, string(b))
		}
		jsext.Expect(m, last)
		rctx, cancel := s.request(ctx)
		var acked uint64
		if number != nil {
			var ack *jsext.BatchAck
			if ack, err = s.io.publishBatch(rctx, []*nats.Msg{number, m}); err == nil {
				acked = ack.Sequence
			}
		} else {
			var ack *natsjs.PubAck
			if ack, err = s.js.PublishMsg(rctx, m); err == nil {
				acked = ack.Sequence
			}
		}
		cancel()
		if err == nil {
			return s.waitApplied(ctx, acked)
		}
		if noLeader(err) && time.Now().Before(deadline) && ctx.Err() == nil {
			s.awaitLeader(attempt) // nothing stored: an election (commit.go)
			continue
		}
		code := jsext.ErrorCode(err)
		if (code != jsext.ErrCodeWrongLastSequence && code != jsext.ErrCodeWrongLastSequenceConstant) || attempt >= maxAttempts {
			return s.unavailable(err)
		}
		if err := s.catchUp(err); err != nil {
			return err
		}
		s.mu.Lock()
		absent := s.fold.ByName[name] == nil
		s.mu.Unlock()
		if absent {
			s.repairCatalogSeq(ctx, name)
		}
	}
}

// repairCatalogSeq sets the fold's last sequence of name's catalog subject
// to the stream's: a fold that forgot a dropped topic (forgetDrops) before
// its tombstone was purged expects the subject empty, and one that holds
// the sequence of a tombstone purged since expects it not to be.
func (s *Store) repairCatalogSeq(ctx context.Context, name string) {
	rctx, cancel := s.request(ctx)
	seq, _, err := s.io.lastFor(rctx, s.subj.Catalog(name))
	cancel()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fold.ByName[name] != nil {
		return
	}
	if seq == 0 {
		delete(s.fold.CatSeqs, name)
	} else {
		s.fold.CatSeqs[name] = seq
	}
}

// known makes sure the fold has seen topic name if the stream holds it: a
// name this gateway does not know may have been created through another
// gateway a moment ago, so it catches up with the stream (sync) and looks
// again. Only misses pay the round trip; a topic the stream lacks is
// ErrTopicNotFound, an unreachable cluster ErrUnavailable.
func (s *Store) known(name string) error {
	s.mu.Lock()
	_, ok := s.fold.ByName[name]
	s.mu.Unlock()
	if ok {
		return nil
	}
	return s.io.sync(context.Background())
}

// Topic implements topicstore.Store.
func (s *Store) Topic(name string) (topicstore.TopicInfo, error) {
	if err := s.known(name); err != nil {
		return topicstore.TopicInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[name]
	if t == nil {
		return topicstore.TopicInfo{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, name)
	}
	return t.Info(), nil
}

// Topics implements topicstore.Store.
func (s *Store) Topics() []topicstore.TopicInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]topicstore.TopicInfo, 0, len(s.fold.ByName))
	for _, t := range s.fold.ByName {
		out = append(out, t.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Config.Name < out[j].Config.Name })
	return out
}

// SplitPartition implements topicstore.Store: one catalog change, with
// the embedded store's rules. A commit planned on the old layout carries a
// guard on the catalog subject, so it is refused and planned again on the
// new one: nothing is written to the parent after the split.
func (s *Store) SplitPartition(ctx context.Context, topic string, partition int32) error {
	return s.catalogChange(ctx, topic, func(old *fold.Topic) (*fold.CatalogRec, error) {
		if old == nil {
			return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
		}
		l := old.Rec.Layout.Clone()
		if max := old.Rec.Config.MaxActivePartitions; max > 0 && l.Active()+1 > max {
			return nil, fmt.Errorf("%w: topic %q already has %d active partitions, its max_active_partitions", topicstore.ErrAutoPartitioning, topic, l.Active())
		}
		if _, _, err := l.Split(partition); err != nil {
			return nil, fmt.Errorf("topic %q: %w", topic, err)
		}
		rec := old.Rec
		rec.Layout = l
		return &rec, nil
	})
}

// WriteRates implements topicstore.Store: the fold's meters, the same on
// every gateway.
func (s *Store) WriteRates(topic string) ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	now := s.opts.Clock()
	out := make([]float64, len(t.Parts))
	for i, ps := range t.Parts {
		if ps.Meter != nil {
			out[i] = ps.Meter.Rate(now)
		}
	}
	return out, nil
}

// autoSplit splits the partitions a group wrote that stayed overloaded for
// their window ('scale_up'), as the embedded store does after a group.
// Gateways need no election for it: the split is a catalog change
// conditional on the catalog subject, so when two gateways decide the same
// split, the second one finds the partition split already and does
// nothing.
func (s *Store) autoSplit(wrote [][]plan.PartKey) {
	type due struct {
		name string
		part int32
	}
	var splits []due
	s.mu.Lock()
	now := s.opts.Clock()
	seen := map[plan.PartKey]bool{}
	for _, ks := range wrote {
		for _, k := range ks {
			t := s.fold.ByID[k.Topic]
			if seen[k] || t == nil || int(k.Part) >= len(t.Parts) || decide.Inactive(&t.Rec.Layout, k.Part) {
				continue
			}
			seen[k] = true
			if !topicstore.SplitDue(&t.Rec.Config, t.Parts[k.Part].Meter, now) {
				continue
			}
			if max := t.Rec.Config.MaxActivePartitions; max > 0 && t.Rec.Layout.Active()+1 > max {
				continue // at its limit: the partition stays as it is
			}
			splits = append(splits, due{t.Rec.Config.Name, k.Part})
		}
	}
	s.mu.Unlock()
	for _, d := range splits {
		_ = s.catalogChange(context.Background(), d.name, func(old *fold.Topic) (*fold.CatalogRec, error) {
			if old == nil || decide.Inactive(&old.Rec.Layout, d.part) {
				return nil, errNothing // dropped, or split by another gateway meanwhile
			}
			l := old.Rec.Layout.Clone()
			if _, _, err := l.Split(d.part); err != nil {
				return nil, err
			}
			rec := old.Rec
			rec.Layout = l
			return &rec, nil
		})
	}
}

// errNothing is what a catalog change returns when there is nothing to
// change: catalogChange then publishes nothing.
var errNothing = errors.New("nothing to change")
