package pebblestore

import (
	"sync"
	"time"

	"topicgate/topicstore"
)

// Auto-partitioning (docs/dialect/auto-partitioning.md). The committer
// meters every partition's write rate from the groups it commits: each
// group adds its payload bytes per partition to the partition's meter, a
// ring of meterBuckets buckets spanning the topic's stabilization window.
// After a group, a partition of a 'scale_up' topic splits when it has been
// metered for a whole window and its mean rate over that window is at least
// auto_partitioning_up_utilization_percent of
// partition_write_speed_bytes_per_second, unless the topic has
// max_active_partitions active partitions already. The split runs on the
// committer right after the group (splitLocked): writers wait for at most
// that one synced catalog change.
//
// The meter reads no clock: the committer passes the group's time, so
// tests drive it with an injected clock.

// partMeter is one partition's write meter (the leaf's arithmetic).
type partMeter = topicstore.WriteMeter

// writeMeter holds the partitions' meters. The committer adds to it;
// Topic reads rates from any goroutine.
type writeMeter struct {
	mu    sync.Mutex
	parts map[partKey]*partMeter
}

// observe records that partition k's cumulative bytes reached cum at now
// and returns its meter (created on first sight: the bytes before are not
// counted). window is the topic's stabilization window.
func (w *writeMeter) observe(k partKey, cum int64, now time.Time, window time.Duration) *partMeter {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.parts[k]
	if m == nil || m.Window != window {
		if w.parts == nil {
			w.parts = map[partKey]*partMeter{}
		}
		last := cum
		if m != nil {
			last = m.LastCum
		}
		m = topicstore.NewWriteMeter(window, now, last)
		w.parts[k] = m
	}
	m.Observe(now, cum)
	return m
}

// rate returns partition k's write rate over its window (0 if unmetered).
func (w *writeMeter) rate(k partKey, now time.Time) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m := w.parts[k]; m != nil {
		return m.Rate(now)
	}
	return 0
}

// forget drops the meters of a topic (dropped) or of one partition.
func (w *writeMeter) forget(topic uint64, part int32, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.parts {
		if k.topic == topic && (all || k.part == part) {
			delete(w.parts, k)
		}
	}
}

// meterGroup feeds a committed group's partitions to the meters and
// splits those of 'scale_up' topics that stayed overloaded for their
// window. It runs on the committer goroutine after the group was written.
func (s *PebbleStore) meterGroup(ps []published, now time.Time) {
	var due []partKey
	s.mu.RLock()
	for _, pb := range ps {
		t := s.byID[pb.TopicID]
		if t == nil {
			continue
		}
		m := s.meter.observe(partKey{pb.TopicID, pb.Partition}, pb.EndCum, now, topicstore.StabilizationWindow(&t.cfg))
		if topicstore.SplitDue(&t.cfg, m, now) &&
			int(pb.Partition) < len(t.layout.Parts) && !t.layout.Parts[pb.Partition].Inactive {
			due = append(due, partKey{pb.TopicID, pb.Partition})
		}
	}
	s.mu.RUnlock()
	for _, k := range due {
		s.mu.RLock()
		t := s.byID[k.topic]
		s.mu.RUnlock()
		if t == nil {
			continue
		}
		if max := t.cfg.MaxActivePartitions; max > 0 && t.layout.Active()+1 > max {
			continue // at its limit: the partition stays as it is
		}
		if err := s.splitLocked(t, k.part); err != nil {
			s.logf("topicstore: auto-partitioning: split of topic %q partition %d failed: %v", t.cfg.Name, k.part, err)
			continue
		}
		s.meter.forget(k.topic, k.part, false)
		s.splits.Add(1)
		s.logf("topicstore: auto-partitioning: topic %q partition %d split into %v", t.cfg.Name, k.part, s.topicChildren(k.topic, k.part))
	}
}

// topicChildren returns the children of a topic's partition.
func (s *PebbleStore) topicChildren(id uint64, part int32) []int32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.byID[id]; t != nil && int(part) < len(t.layout.Parts) {
		return t.layout.Parts[part].Children
	}
	return nil
}

// logf logs through Options.Logf, if set.
func (s *PebbleStore) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}
