package pebblestore

import (
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/sequencer"
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

// meterGroup feeds a committed group's partitions to the meters and
// splits those of 'scale_up' topics that stayed overloaded for their
// window. It runs on the committer goroutine after the group was written.
func (s *PebbleStore) meterGroup(ps []sequencer.Published, now time.Time) {
	var due []sequencer.PartKey
	s.mu.RLock()
	for _, pb := range ps {
		t := s.byID[pb.TopicID]
		if t == nil {
			continue
		}
		m := s.meter.Observe(sequencer.PartKey{Topic: pb.TopicID, Part: pb.Partition}, pb.EndCum, now, topicstore.StabilizationWindow(&t.cfg))
		if topicstore.SplitDue(&t.cfg, m, now) &&
			int(pb.Partition) < len(t.layout.Parts) && !t.layout.Parts[pb.Partition].Inactive {
			due = append(due, sequencer.PartKey{Topic: pb.TopicID, Part: pb.Partition})
		}
	}
	s.mu.RUnlock()
	for _, k := range due {
		s.mu.RLock()
		t := s.byID[k.Topic]
		s.mu.RUnlock()
		if t == nil {
			continue
		}
		if max := t.cfg.MaxActivePartitions; max > 0 && t.layout.Active()+1 > max {
			continue // at its limit: the partition stays as it is
		}
		if err := s.splitLocked(t, k.Part); err != nil {
			s.logf("topicstore: auto-partitioning: split of topic %q partition %d failed: %v", t.cfg.Name, k.Part, err)
			continue
		}
		s.meter.Forget(k.Topic, k.Part, false)
		s.splits.Add(1)
		s.logf("topicstore: auto-partitioning: topic %q partition %d split into %v", t.cfg.Name, k.Part, s.topicChildren(k.Topic, k.Part))
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
