package pebblestore

import (
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sequencer"
)

// Consumer positions: reads, explicit moves, and the position changes that
// consumer DDL implies.

// pendingPositions validates updates against the catalog on the caller's
// goroutine; the committer checks them again against its state.
func (s *PebbleStore) pendingPositions(us []topicstore.PositionUpdate) ([]sequencer.PosUpdate, error) {
	if len(us) == 0 {
		return nil, nil
	}
	out := make([]sequencer.PosUpdate, len(us))
	for i, u := range us {
		t, err := s.lookup(u.Topic)
		if err != nil {
			return nil, err
		}
		if !t.consumers[u.Consumer] {
			return nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, u.Topic, u.Consumer)
		}
		if u.Partition < 0 || int(u.Partition) >= len(t.parts) {
			return nil, fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, u.Topic, u.Partition)
		}
		out[i] = sequencer.PosUpdate{TopicID: t.id, Topic: u.Topic, Consumer: u.Consumer, Partition: u.Partition,
			Offset: u.Offset, Expect: u.Expect, Forget: u.Forget}
	}
	return out, nil
}

// pendingFences resolves a commit's producer fences' topics; the
// committer checks them against its state.
func (s *PebbleStore) pendingFences(fs []topicstore.ProducerFence) ([]sequencer.Fence, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	out := make([]sequencer.Fence, len(fs))
	for i, f := range fs {
		t, err := s.lookup(f.Topic)
		if err != nil {
			return nil, err
		}
		out[i] = sequencer.Fence{TopicID: t.id, Topic: f.Topic, Producer: f.Producer, Below: f.Below}
	}
	return out, nil
}

// Positions returns the consumer's committed offset per partition. It reads
// the committer's state, so it may include a commit whose fsync is in
// progress (a commit based on it is ordered after that one).
func (s *PebbleStore) Positions(topic, consumer string) (map[int32]int64, error) {
	t, err := s.lookup(topic)
	if err != nil {
		return nil, err
	}
	s.coreMu.Lock()
	defer s.coreMu.Unlock()
	ct := s.core.Topics[t.id]
	if ct == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	out := ct.Positions(consumer)
	if out == nil {
		return nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	return out, nil
}

// StoredPositions returns the consumer's offsets of the partitions it has
// a position record of: committed, or its initial one (read_from).
func (s *PebbleStore) StoredPositions(topic, consumer string) (map[int32]int64, error) {
	t, err := s.lookup(topic)
	if err != nil {
		return nil, err
	}
	s.coreMu.Lock()
	defer s.coreMu.Unlock()
	ct := s.core.Topics[t.id]
	if ct == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	out := ct.Stored(consumer)
	if out == nil {
		return nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	return out, nil
}

// SetPosition moves a consumer's committed offset, through the committer
// (ordered with commits) and synced. The offset must lie in [start, end].
func (s *PebbleStore) SetPosition(ctx context.Context, topic, consumer string, partition int32, offset int64) error {
	if err := s.err(); err != nil {
		return err
	}
	ps, err := s.pendingPositions([]topicstore.PositionUpdate{{Topic: topic, Consumer: consumer, Partition: partition, Offset: offset, Expect: -1}})
	if err != nil {
		return err
	}
	ps[0].Exact = true
	_, err = s.submit(ctx, &op{pos: ps, size: 32})
	return err
}

// consumerDDL writes to b the position records a config change from old
// (nil at CREATE) to cfg implies, for a topic of nparts partitions, and
// returns the consumers' offsets for the core, to install after the sync:
//   - a consumer added with read_from starts, per partition, at the first
//     offset written at or after it (a record, even of offset 0, which
//     StoredPositions lists); without read_from at the start (no record,
//     sequencer.NoPosition);
//   - a consumer whose read_from changed is repositioned the same way;
//   - a dropped consumer's records are deleted;
//   - partitions added later have no record for any consumer (they start
//     at their start), but those added with a consumer given read_from,
//     empty, at 0.
//
// It runs on the committer goroutine, which owns ct.
func (s *PebbleStore) consumerDDL(b *pebble.Batch, id uint64, old, cfg *topicstore.TopicConfig, ct *sequencer.Topic, nparts int) (map[string][]int64, error) {
	oldCfg := map[string]topicstore.ConsumerConfig{}
	if old != nil {
		for _, c := range old.Consumers {
			oldCfg[c.Name] = c
		}
	}
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: keys.Topic(keys.PrefixMessages, id), UpperBound: keys.Topic(keys.PrefixMessages, id+1)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := make(map[string][]int64, len(cfg.Consumers))
	for _, c := range cfg.Consumers {
		pos := make([]int64, nparts)
		for p := range pos {
			pos[p] = sequencer.NoPosition
		}
		prev, existed := oldCfg[c.Name]
		delete(oldCfg, c.Name)
		if existed && prev.ReadFrom.Equal(c.ReadFrom) {
			copy(pos, ct.Consumers[c.Name])
			out[c.Name] = pos
			continue
		}
		for p := range pos {
			k := keys.Position(id, int32(p), c.Name)
			if c.ReadFrom.IsZero() {
				if existed && p < len(ct.Parts) {
					_ = b.Delete(k, nil)
				}
				continue
			}
			var off int64 // a partition added with the consumer is empty
			if p < len(ct.Parts) {
				cp := ct.Parts[p]
				if off, err = offsetForTime(it, id, int32(p), cp.Start, cp.End, c.ReadFrom); err != nil {
					return nil, err
				}
			}
			pos[p] = off
			_ = b.Set(k, keys.EncodePosition(off), nil)
		}
		out[c.Name] = pos
	}
	for name := range oldCfg { // dropped consumers
		for p := range ct.Parts {
			_ = b.Delete(keys.Position(id, int32(p), name), nil)
		}
	}
	return out, it.Error()
}

// offsetForTime returns the base offset of the first batch in [lo, hi) of
// the partition written at or after t, or hi.
func offsetForTime(it *pebble.Iterator, id uint64, part int32, lo, hi int64, t time.Time) (int64, error) {
	wa := t.UnixMicro()
	return firstBatch(it, id, part, lo, hi, func(h topicstore.BatchHeader) bool { return h.WrittenAt >= wa })
}

// firstBatch returns the base offset of the first batch in [lo, hi) for
// which pred holds, or hi; pred must be monotone along the partition (false,
// then true) and lo a batch boundary. A binary search over batch headers:
// O(log n) seeks, no message is decoded. written_at is monotone because the
// committer never lets its clock go backwards (across restarts with a clock
// stepped back the answer is approximate).
func firstBatch(it *pebble.Iterator, id uint64, part int32, lo, hi int64, pred func(topicstore.BatchHeader) bool) (int64, error) {
	for lo < hi {
		h, err := batchAt(it, id, part, lo+(hi-lo)/2)
		if err != nil {
			return 0, err
		}
		if pred(h) {
			hi = h.Base
		} else {
			lo = h.Base + int64(h.Count)
		}
	}
	return lo, nil
}

// batchAt returns the header of the batch holding offset off.
func batchAt(it *pebble.Iterator, id uint64, part int32, off int64) (topicstore.BatchHeader, error) {
	if !it.SeekLT(keys.Batch(id, part, off+1)) || !keys.HasPrefix(it.Key(), string(keys.Partition(id, part))) {
		if err := it.Error(); err != nil {
			return topicstore.BatchHeader{}, err
		}
		return topicstore.BatchHeader{}, fmt.Errorf("%w: no batch holds offset %d", topicstore.ErrCorrupt, off)
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return topicstore.BatchHeader{}, err
	}
	h, _, err := topicstore.DecodeBatchHeader(v)
	if err == nil && off >= h.Base+int64(h.Count) {
		err = fmt.Errorf("%w: no batch holds offset %d", topicstore.ErrCorrupt, off)
	}
	return h, err
}

// OffsetForTime returns, per partition, the first offset whose batch was
// written at or after t (the end offset if none). Batch granularity: a
// batch (at most ~32 KiB) has one written_at.
func (s *PebbleStore) OffsetForTime(topic string, t time.Time) (map[int32]int64, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	tp, err := s.lookup(topic)
	if err != nil {
		return nil, err
	}
	// Ends are read before the iterator is taken (every batch below them is
	// in it), starts after (retention publishes a start before deleting).
	ends := make([]int64, len(tp.parts))
	for i, p := range tp.parts {
		ends[i] = p.visibleEnd.Load()
	}
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: keys.Topic(keys.PrefixMessages, tp.id), UpperBound: keys.Topic(keys.PrefixMessages, tp.id+1)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := make(map[int32]int64, len(tp.parts))
	for i, p := range tp.parts {
		p.mu.Lock()
		start := p.start
		p.mu.Unlock()
		out[int32(i)] = ends[i]
		if start < ends[i] {
			if out[int32(i)], err = offsetForTime(it, tp.id, int32(i), start, ends[i], t); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
