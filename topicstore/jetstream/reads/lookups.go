package reads

import (
	"fmt"
	"sort"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/jetstream/fold"
)

// Producers answers topicstore.Store's Producers.
func (rd *Reads) Producers(topic string) ([]topicstore.ProducerInfo, error) {
	rd.h.Lock()
	defer rd.h.Unlock()
	t := rd.cfg.Fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	now := rd.cfg.Clock()
	var out []topicstore.ProducerInfo
	for id, ps := range t.Prods {
		if now.Sub(ps.At) > rd.expiry(t) {
			continue
		}
		out = append(out, producerInfo(t, id, ps))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out, nil
}

// Producer answers topicstore.Store's Producer.
func (rd *Reads) Producer(topic, producer string) (topicstore.ProducerInfo, bool) {
	rd.h.Lock()
	defer rd.h.Unlock()
	t := rd.cfg.Fold.ByName[topic]
	if t == nil {
		return topicstore.ProducerInfo{}, false
	}
	ps := t.Prods[producer]
	if ps == nil || rd.cfg.Clock().Sub(ps.At) > rd.expiry(t) {
		return topicstore.ProducerInfo{}, false
	}
	return producerInfo(t, producer, ps), true
}

// producerInfo describes a producer; one bound to a partition that split
// is unbound (-1) until its next write binds it again.
func producerInfo(t *fold.Topic, id string, ps *fold.Producer) topicstore.ProducerInfo {
	part := ps.Part
	if decide.Inactive(&t.Rec.Layout, part) {
		part = -1
	}
	return topicstore.ProducerInfo{ProducerID: id, Partition: part, MaxSeqNo: ps.MaxNo, LastWrite: ps.At}
}

// Positions answers topicstore.Store's Positions.
func (rd *Reads) Positions(topic, consumer string) (map[int32]int64, error) {
	return rd.positions(topic, consumer, func(t *fold.Topic, p int32) (int64, bool) {
		return t.Position(consumer, p), true
	})
}

// StoredPositions answers topicstore.Store's StoredPositions.
func (rd *Reads) StoredPositions(topic, consumer string) (map[int32]int64, error) {
	return rd.positions(topic, consumer, func(t *fold.Topic, p int32) (int64, bool) {
		return t.StoredPosition(consumer, p)
	})
}

// positions is consumer's position in each partition of topic that at
// has one.
func (rd *Reads) positions(topic, consumer string, at func(t *fold.Topic, p int32) (int64, bool)) (map[int32]int64, error) {
	rd.h.Lock()
	defer rd.h.Unlock()
	t := rd.cfg.Fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	if !t.HasConsumer(consumer) {
		return nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	out := make(map[int32]int64, len(t.Parts))
	for p := range t.Parts {
		if off, ok := at(t, int32(p)); ok {
			out[int32(p)] = off
		}
	}
	return out, nil
}

// OffsetForTime answers topicstore.Store's OffsetForTime.
func (rd *Reads) OffsetForTime(topic string, at time.Time) (map[int32]int64, error) {
	rd.h.Lock()
	defer rd.h.Unlock()
	t := rd.cfg.Fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	out := make(map[int32]int64, len(t.Parts))
	for p, ps := range t.Parts {
		out[int32(p)] = ps.OffsetAt(at)
	}
	return out, nil
}

// WrittenAt answers topicstore.WrittenAter's WrittenAt from the fold's
// index: the written time of the batch holding the first retained
// message at or after offset.
func (rd *Reads) WrittenAt(topic string, part int32, offset int64) (time.Time, bool) {
	rd.h.Lock()
	defer rd.h.Unlock()
	t := rd.cfg.Fold.ByName[topic]
	if t == nil || part < 0 || int(part) >= len(t.Parts) {
		return time.Time{}, false
	}
	ps := t.Parts[part]
	off := max(offset, ps.Start)
	if off >= ps.End {
		return time.Time{}, false
	}
	i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].Base > off }) - 1
	if i < 0 {
		return time.Time{}, false
	}
	return fold.TimeMicros(ps.Recs[i].WrittenAt), true
}

// Changed answers topicstore.Store's Changed: the channel is closed when the
// fold applies the topic's next record batch (from any gateway) or its
// drop or alteration.
func (rd *Reads) Changed(topic string) (<-chan struct{}, error) {
	rd.h.Lock()
	defer rd.h.Unlock()
	t := rd.cfg.Fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	return t.Changed, nil
}

// expiry is how long t's producers live without writes.
func (rd *Reads) expiry(t *fold.Topic) time.Duration {
	return topicstore.ProducerExpiry(&t.Rec.Config, rd.cfg.ProducerExpiry)
}
