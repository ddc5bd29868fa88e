package sequencer

import (
	"time"

	"topicgate/topicstore/decide"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// Consumer positions in the deterministic core. A committed offset is the
// next offset the consumer will read. The core keeps every consumer's
// offsets (Topic.Consumers); a stored offset below the partition's start
// reads as the start, and NoPosition (nothing stored, no record)
// therefore means "from the start".

// NoPosition is a partition's entry in Topic.Consumers when the consumer
// has no position record there.
const NoPosition int64 = -1

// PosUpdate is a validated PositionUpdate (or SetPosition) for the core.
type PosUpdate struct {
	TopicID   uint64
	Topic     string // for error messages
	Consumer  string
	Partition int32
	Offset    int64
	Expect    int64 // < 0: no expectation
	Exact     bool  // SetPosition: Offset must lie in [start, end]
	Forget    bool  // forget the stored position (its record is deleted)
}

type posRef struct {
	topic    uint64
	consumer string
	part     int32
}

// Committed returns the effective committed offset of c in partition p.
func (t *Topic) Committed(pos []int64, p int32) int64 {
	return max(pos[p], t.Parts[p].Start)
}

// checkPositions validates ps in order, as if applied one after the other
// (an update sees earlier updates of the same request; earlier requests of
// the group are already in the state). It changes nothing.
func (s *State) checkPositions(ps []PosUpdate) error {
	var local map[posRef]int64
	if len(ps) > 1 {
		local = make(map[posRef]int64, len(ps))
	}
	for _, u := range ps {
		t := s.Topics[u.TopicID]
		if t == nil || len(t.Parts) == 0 {
			return decide.TopicGone(u.Topic)
		}
		pos := t.Consumers[u.Consumer]
		if pos == nil {
			return decide.ConsumerGone(u.Topic, u.Consumer)
		}
		if u.Partition < 0 || int(u.Partition) >= len(t.Parts) || int(u.Partition) >= len(pos) {
			return decide.PartitionGone(u.Topic, u.Partition)
		}
		ref := posRef{u.TopicID, u.Consumer, u.Partition}
		p := t.Parts[u.Partition]
		cur, ok := local[ref]
		if !ok {
			cur = t.Committed(pos, u.Partition)
		}
		d := decide.Position{Topic: u.Topic, Consumer: u.Consumer, Partition: u.Partition,
			Offset: u.Offset, Expect: u.Expect, Exact: u.Exact, Forget: u.Forget}
		if err := decide.CheckPosition(d, cur, p.Start, p.End); err != nil {
			return err
		}
		if local != nil {
			local[ref] = decide.Moved(d, p.Start)
		}
	}
	return nil
}

// applyPositions applies checked updates to the state and appends their
// records to sets (a forgotten position's with a nil value: its record is
// deleted, in its place in the group's order).
func (s *State) applyPositions(sets []KV, ps []PosUpdate) []KV {
	for _, u := range ps {
		k := keys.Position(u.TopicID, u.Partition, u.Consumer)
		if u.Forget {
			s.Topics[u.TopicID].Consumers[u.Consumer][u.Partition] = NoPosition
			sets = append(sets, KV{k, nil})
			continue
		}
		s.Topics[u.TopicID].Consumers[u.Consumer][u.Partition] = u.Offset
		sets = append(sets, KV{k, keys.EncodePosition(u.Offset)})
	}
	return sets
}

// Fence is a validated topicstore.ProducerFence for the core.
type Fence struct {
	TopicID         uint64
	Topic, Producer string // Topic for error messages
	Below           int64
}

// checkFences checks a request's producer fences against the state
// (earlier requests of the group already in it). It changes nothing.
func (s *State) checkFences(fs []Fence, now time.Time) error {
	for _, f := range fs {
		t := s.Topics[f.TopicID]
		if t == nil {
			return decide.TopicGone(f.Topic)
		}
		var p *decide.Producer
		if ps := s.LiveProducer(t, f.Producer, now); ps != nil {
			p = &ps.Producer
		}
		if err := decide.CheckFence(f.Topic, f.Producer, p, f.Below); err != nil {
			return err
		}
	}
	return nil
}
