package pebblestore

import (
	"context"
	"log"
	"time"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// Retention deletes whole record batches from the start of a partition. A
// run plans each topic's cuts outside the committer (binary searches over
// batch headers, see firstBatch) and applies them on the committer, as a
// synced batch with one DeleteRange per partition, after checking that no
// constraining consumer position moved back meanwhile.
//
// A message may go when (a) it is older than retention_period, or the
// partition exceeds retention_storage_mb (oldest batches go until it fits),
// and (b) every important consumer has committed it, and (c) no consumer
// with availability_period > 0 has it uncommitted while it is younger than
// that period. When everything is deleted an empty batch (count 0) is left
// at the new start, so that a reopen recovers the start, end, bytes and last
// write time from batch headers alone; the next append overwrites it.

// partCut is a planned deletion of [start, cut) in one partition.
type partCut struct {
	part     int32
	cut      int64
	startCum int64 // cumulative bytes at cut
	lastWA   int64 // written_at of the last deleted batch
	// Constraining consumers' committed offsets the plan relied on.
	based map[string]int64
}

// retentionEvery is how often retentionLoop runs now: interval, or half
// the shortest retention period when shorter.
func (s *PebbleStore) retentionEvery(interval time.Duration) time.Duration {
	infos := s.Topics()
	cfgs := make([]topicstore.TopicConfig, len(infos))
	for i, ti := range infos {
		cfgs[i] = ti.Config
	}
	return topicstore.RetentionEvery(interval, cfgs)
}

// retentionLoop runs RunRetention every interval (or half the shortest
// retention period, when shorter) until Close.
func (s *PebbleStore) retentionLoop(interval time.Duration) {
	defer s.bg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	every := s.retentionEvery(interval)
	timer := time.NewTimer(every)
	defer timer.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-timer.C:
			if _, err := s.RunRetention(ctx, s.opts.Clock()); err != nil && s.err() == nil {
				log.Printf("topicstore: retention: %v", err)
			}
			every = s.retentionEvery(interval)
			timer.Reset(every)
		}
	}
}

// RunRetention applies retention to every topic as of now and returns the
// number of messages deleted.
func (s *PebbleStore) RunRetention(ctx context.Context, now time.Time) (int64, error) {
	if err := s.err(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	ts := make([]*topic, 0, len(s.topics))
	for _, t := range s.topics {
		ts = append(ts, t)
	}
	s.mu.RUnlock()
	var total int64
	for _, t := range ts {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		cuts, err := s.planRetention(t, now)
		if err != nil || len(cuts) == 0 {
			if err != nil {
				return total, err
			}
			continue
		}
		var n int64
		if _, err := s.submit(ctx, &op{ddl: func() (err error) { n, err = s.applyRetention(t, cuts); return }}); err != nil {
			return total, err
		}
		total += n
	}
	for _, t := range ts {
		if t.layout.Active() == len(t.layout.Parts) {
			continue // no inactive partitions
		}
		if _, err := s.submit(ctx, &op{ddl: func() error { return s.retireDrained(t.id) }}); err != nil {
			return total, err
		}
	}
	if _, err := s.submit(ctx, &op{ddl: func() error { return s.expireProducers(now) }}); err != nil {
		return total, err
	}
	return total, nil
}

// expireProducers forgets the producers whose topic's
// producer_inactivity_period passed without a write by now: they leave
// the core and their keys the store (Open skips expired keys anyway, so
// the deletion need not sync). It runs on the committer goroutine, as a
// DDL op: no group decides on a producer while it goes.
func (s *PebbleStore) expireProducers(now time.Time) error {
	s.coreMu.Lock()
	gone := s.core.ExpireProducers(now)
	s.coreMu.Unlock()
	if len(gone) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, k := range gone {
		_ = b.Delete(k, nil)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		s.fail(err)
		return s.err()
	}
	return nil
}

// retireDrained marks deleted the inactive partitions of topic id that
// hold nothing any more (retention removed all their messages) and that
// every consumer has committed to their end
// (docs/dialect/auto-partitioning.md, Deletion); it runs on the committer
// goroutine, as a layout change.
func (s *PebbleStore) retireDrained(id uint64) error {
	s.mu.RLock()
	t := s.byID[id]
	s.mu.RUnlock()
	ct := s.core.Topics[id]
	if t == nil || ct == nil {
		return nil // dropped meanwhile
	}
	l := t.layout.Clone()
	changed := false
	for i := range l.Parts {
		pl := &l.Parts[i]
		if !pl.Inactive || pl.Deleted || i >= len(ct.Parts) {
			continue
		}
		if ct.Drained(i) {
			pl.Deleted, changed = true, true
		}
	}
	if !changed {
		return nil
	}
	return s.relayout(t, topicstore.CloneConfig(t.cfg), l)
}

// planRetention computes the cuts of a topic's partitions.
func (s *PebbleStore) planRetention(t *topic, now time.Time) ([]partCut, error) {
	period := t.cfg.RetentionPeriod
	if period <= 0 {
		period = topicstore.DefaultRetention
	}
	expireWA := now.Add(-period).UnixMicro()
	limit := t.cfg.RetentionStorageMB << 20
	var gated []topicstore.ConsumerConfig // consumers that can hold data back
	for _, c := range t.cfg.Consumers {
		if c.Important || c.AvailabilityPeriod > 0 {
			gated = append(gated, c)
		}
	}
	// Ends are read before the iterator is taken, so every batch below them
	// is in it; starts after, and retention publishes a new start before it
	// deletes, so no batch from the start on is missing.
	type endState struct{ end, endCum, lastWA int64 }
	ends := make([]endState, len(t.parts))
	for i, p := range t.parts {
		p.mu.Lock()
		ends[i] = endState{p.visibleEnd.Load(), p.endCum, p.lastWrite.UnixMicro()}
		p.mu.Unlock()
	}
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: keys.Topic(keys.PrefixMessages, t.id), UpperBound: keys.Topic(keys.PrefixMessages, t.id+1)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var cuts []partCut
	for i, p := range t.parts {
		part := int32(i)
		end, endCum, lastWA := ends[i].end, ends[i].endCum, ends[i].lastWA
		p.mu.Lock()
		start, startCum := p.start, p.startCum
		p.mu.Unlock()
		if start >= end {
			continue
		}
		cut, err := firstBatch(it, t.id, part, start, end, func(h topicstore.BatchHeader) bool { return h.WrittenAt >= expireWA })
		if err != nil {
			return nil, err
		}
		if limit > 0 && endCum-startCum > limit {
			bySize, err := firstBatch(it, t.id, part, start, end, func(h topicstore.BatchHeader) bool { return endCum-h.CumBefore <= limit })
			if err != nil {
				return nil, err
			}
			cut = max(cut, bySize)
		}
		if cut <= start {
			continue
		}
		pc := partCut{part: part}
		if len(gated) > 0 {
			pc.based = map[string]int64{}
			s.coreMu.Lock()
			ct := s.core.Topics[t.id]
			for _, c := range gated {
				if ct != nil && ct.Consumers[c.Name] != nil && i < len(ct.Parts) {
					pc.based[c.Name] = ct.Committed(ct.Consumers[c.Name], part)
				}
			}
			s.coreMu.Unlock()
		}
		for _, c := range gated {
			committed, ok := pc.based[c.Name]
			if !ok {
				continue
			}
			floor := min(committed, end) // start of the batch holding it
			if floor < end && floor > start {
				h, err := batchAt(it, t.id, part, floor)
				if err != nil {
					return nil, err
				}
				floor = h.Base
			}
			floor = max(floor, start)
			if c.Important {
				cut = min(cut, floor)
			} else if cut > floor {
				availWA := now.Add(-c.AvailabilityPeriod).UnixMicro()
				young, err := firstBatch(it, t.id, part, floor, end, func(h topicstore.BatchHeader) bool { return h.WrittenAt >= availWA })
				if err != nil {
					return nil, err
				}
				cut = min(cut, young)
			}
		}
		if cut <= start {
			continue
		}
		pc.cut = cut
		if cut == end {
			pc.startCum, pc.lastWA = endCum, lastWA
		} else {
			h, err := batchAt(it, t.id, part, cut)
			if err != nil {
				return nil, err
			}
			pc.startCum = h.CumBefore
		}
		cuts = append(cuts, pc)
	}
	return cuts, it.Error()
}

// applyRetention runs on the committer: it rechecks and applies the cuts.
func (s *PebbleStore) applyRetention(t *topic, cuts []partCut) (int64, error) {
	s.mu.RLock()
	same := s.byID[t.id] == t
	s.mu.RUnlock()
	if !same {
		return 0, nil // altered or dropped since planned: the next run replans
	}
	ct := s.core.Topics[t.id] // the committer owns it
	b := s.db.NewBatch()
	var done []partCut
	var deleted int64
	for _, pc := range cuts {
		cp := ct.Parts[pc.part]
		if cp.Start >= pc.cut || !ct.PositionsKept(pc.part, pc.based) {
			continue
		}
		_ = b.DeleteRange(keys.Partition(t.id, pc.part), keys.Batch(t.id, pc.part, pc.cut), nil)
		if cp.End == pc.cut { // empty now: keep the start in a count-0 batch
			v := make([]byte, topicstore.BatchHeaderLen)
			topicstore.PutBatchHeader(v, topicstore.BatchHeader{Base: pc.cut, WrittenAt: pc.lastWA, CumBefore: pc.startCum, CRC: topicstore.Checksum(nil)})
			_ = b.Set(keys.Batch(t.id, pc.part, pc.cut), v, nil)
		}
		s.releaseRefs(b, ct, pc.part, pc.cut)
		deleted += pc.cut - cp.Start
		done = append(done, pc)
	}
	if len(done) == 0 {
		b.Close()
		return 0, nil
	}
	// Publish the new starts first: a reader that reads the start after
	// taking its iterator never looks for a deleted batch.
	s.coreMu.Lock()
	for _, pc := range done {
		ct.Parts[pc.part].Start = pc.cut
	}
	s.coreMu.Unlock()
	for _, pc := range done {
		p := t.parts[pc.part]
		p.mu.Lock()
		p.start, p.startCum = pc.cut, pc.startCum
		p.mu.Unlock()
	}
	if err := s.syncDDL(b); err != nil {
		return 0, err
	}
	return deleted, nil
}
