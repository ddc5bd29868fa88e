package sequencer

import (
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// What the store asks of the state outside a group: a producer's binding,
// a consumer's offsets, what recovery puts back, what retention may
// delete. The caller holds the store's lock of the state, or runs on the
// committer goroutine, which owns it.

// ProducerInfo returns producer id of topic t as Producer reports it: not
// while its binding is fresh or expired at now, and with partition -1
// while its partition is inactive (the binding is void until its next
// write).
func (s *State) ProducerInfo(t *Topic, id string, now time.Time) (topicstore.ProducerInfo, bool) {
	ps := t.Producers[id]
	if ps == nil || ps.Fresh || now.Sub(ps.LastWrite) > s.ExpiryOf(t) {
		return topicstore.ProducerInfo{}, false
	}
	part := ps.Part
	if t.Inactive(part) {
		part = -1 // its partition split: the binding is void until its next write
	}
	return topicstore.ProducerInfo{ProducerID: id, Partition: part, MaxSeqNo: ps.MaxSeqNo, LastWrite: ps.LastWrite}, true
}

// ProducerInfos lists t's producers that are neither fresh nor expired at
// now, in no particular order.
func (s *State) ProducerInfos(t *Topic, now time.Time) []topicstore.ProducerInfo {
	var out []topicstore.ProducerInfo
	for id, ps := range t.Producers {
		if now.Sub(ps.LastWrite) <= s.ExpiryOf(t) && !ps.Fresh {
			out = append(out, topicstore.ProducerInfo{ProducerID: id, Partition: ps.Part, MaxSeqNo: ps.MaxSeqNo, LastWrite: ps.LastWrite})
		}
	}
	return out
}

// ExpireProducers forgets the producers whose topic's expiry passed
// without a write by now and returns their records' keys, to delete.
func (s *State) ExpireProducers(now time.Time) (gone [][]byte) {
	for id, t := range s.Topics {
		exp := s.ExpiryOf(t)
		for name, ps := range t.Producers {
			if !ps.Fresh && now.Sub(ps.LastWrite) > exp {
				delete(t.Producers, name)
				gone = append(gone, keys.Producer(id, name))
			}
		}
	}
	return gone
}

// RestoreProducer puts back a producer record read at startup (v, of
// producer id of topic topicID), unless its topic is gone, it expired by
// now or its partition no longer exists: then it is forgotten, as if
// never seen.
func (s *State) RestoreProducer(topicID uint64, id string, v []byte, now time.Time) error {
	t := s.Topics[topicID]
	if t == nil {
		return nil
	}
	ps, err := DecodeProducer(v)
	if err != nil {
		return err
	}
	if now.Sub(ps.LastWrite) > s.ExpiryOf(t) || int(ps.Part) >= len(t.Parts) {
		return nil // expired: forgotten, as if never seen
	}
	t.Producers[id] = ps
	return nil
}

// RestorePosition puts back a position record read at startup, unless its
// topic, consumer or partition is gone.
func (s *State) RestorePosition(topicID uint64, part int32, consumer string, off int64) {
	if t := s.Topics[topicID]; t != nil {
		if pos := t.Consumers[consumer]; pos != nil && int(part) < len(pos) {
			pos[part] = off
		}
	}
}

// Positions returns consumer's committed offset per partition, nil if t
// has no such consumer.
func (t *Topic) Positions(consumer string) map[int32]int64 {
	pos := t.Consumers[consumer]
	if pos == nil {
		return nil
	}
	out := make(map[int32]int64, len(pos))
	for p := range pos {
		out[int32(p)] = t.Committed(pos, int32(p))
	}
	return out
}

// Stored returns consumer's offsets of the partitions it has a position
// record of (as Positions reads them), nil if t has no such consumer.
func (t *Topic) Stored(consumer string) map[int32]int64 {
	pos := t.Consumers[consumer]
	if pos == nil {
		return nil
	}
	out := make(map[int32]int64, len(pos))
	for p, off := range pos {
		if off != NoPosition {
			out[int32(p)] = t.Committed(pos, int32(p))
		}
	}
	return out
}

// Drained reports whether partition p holds nothing any more (retention
// removed all its messages) and every consumer has committed to its end.
func (t *Topic) Drained(p int) bool {
	cp := t.Parts[p]
	if cp.Start < cp.End {
		return false // retention has not emptied it yet
	}
	for _, pos := range t.Consumers {
		if p < len(pos) && pos[p] > 0 && pos[p] < cp.End { // none stored, or 0: nothing read to wait for
			return false
		}
	}
	return true
}

// PositionsKept reports whether no consumer a retention plan of partition
// part relied on (based: the committed offsets it saw) has moved back
// below what the plan saw.
func (t *Topic) PositionsKept(part int32, based map[string]int64) bool {
	for name, was := range based {
		pos := t.Consumers[name]
		if pos == nil || t.Committed(pos, part) < was {
			return false
		}
	}
	return true
}
