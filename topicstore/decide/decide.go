package decide

import (
	"fmt"
	"time"

	"topicgate/topicstore"
)

// Producer is a producer's dedup state and binding as a commit sees it,
// updated in place as the commit admits its messages.
type Producer struct {
	// Part is the partition the producer is bound to.
	Part int32
	// MaxSeqNo is the last seqno accepted from it.
	MaxSeqNo int64
	// Fresh: no seqno of it is known (new, expired, or its partition
	// gone), so the next one is accepted whatever it is.
	Fresh bool
}

// Admit decides one message of the producer: a duplicate (ok false), or
// accepted with its seqno, which is the next after the last when the
// message has none.
func (p *Producer) Admit(hasSeq bool, seq int64) (int64, bool) {
	if hasSeq && !p.Fresh && seq <= p.MaxSeqNo {
		return 0, false
	}
	if !hasSeq {
		seq = p.MaxSeqNo + 1
	}
	p.Fresh, p.MaxSeqNo = false, seq
	return seq, true
}

// Chunk is the verdict on a staged chunk of one producer, decided whole
// from its seqno summary.
type Chunk int

const (
	// ChunkNew: every seqno of the chunk is above the producer's last; it
	// is published whole, by reference.
	ChunkNew Chunk = iota
	// ChunkDuplicate: every seqno is at or below the last; nothing of it
	// is published.
	ChunkDuplicate
	// ChunkMixed: some are, some are not (or the summary cannot tell):
	// the chunk is decided message by message.
	ChunkMixed
)

// AdmitChunk decides a staged chunk whose seqnos lie in [lo, hi] (summary
// false: not known) and, for ChunkNew, takes hi as the last seqno.
func (p *Producer) AdmitChunk(summary bool, lo, hi int64) Chunk {
	switch {
	case !summary:
		return ChunkMixed
	case p.Fresh || lo > p.MaxSeqNo:
		p.Fresh, p.MaxSeqNo = false, hi
		return ChunkNew
	case hi <= p.MaxSeqNo:
		return ChunkDuplicate
	}
	return ChunkMixed
}

// Expired reports whether a producer that last wrote at last is
// forgotten at now: its binding and dedup state lapse after expiry (0:
// never).
func Expired(last, now time.Time, expiry time.Duration) bool {
	return expiry > 0 && now.Sub(last) > expiry
}

// Live is where a write naming partition p of a topic laid out as l goes:
// p while it is active, else the active descendant continuing it for key
// (the one owning key's hash in a keyed topic, or the first).
func Live(l *topicstore.Layout, p int32, key string) int32 {
	if int(p) >= len(l.Parts) || !l.Parts[p].Inactive {
		return p
	}
	var h uint64
	if key != "" {
		h = topicstore.KeyHash(key)
	}
	return l.Descendant(p, h, l.Keyed && key != "")
}

// Inactive reports whether partition p of l was split.
func Inactive(l *topicstore.Layout, p int32) bool {
	return int(p) < len(l.Parts) && l.Parts[p].Inactive
}

// Bind chooses the partition of a producer that has none (new, expired,
// or bound to a partition that split): the one its message names,
// continued past a split; else the one owning its id in a keyed topic;
// else next (round robin).
func Bind(l *topicstore.Layout, id string, named int32, next func() int32) int32 {
	switch {
	case named >= 0:
		return Live(l, named, id)
	case l.Keyed:
		return l.Owner(topicstore.KeyHash(id))
	}
	return next()
}

// Route chooses the partition of a message without a producer: the one
// it names, continued past a split; else, in a keyed topic, the one
// owning its message_group_id. ok false: the message is unbound, and goes
// to the group's partition for such messages of the topic (one per topic
// per group, the next round-robin one: Kafka's sticky partitioner), which
// the store keeps.
func Route(l *topicstore.Layout, named int32, group string) (part int32, ok bool) {
	switch {
	case named >= 0:
		return Live(l, named, group), true
	case group != "" && l.Keyed:
		return l.Owner(topicstore.KeyHash(group)), true
	}
	return -1, false
}

// Bindings checks, for one write, that the partitions its messages name
// agree with their producers' bindings: a producer stays in its
// partition, so a message naming another is refused, never written
// elsewhere. The zero value is ready; use one per write.
type Bindings struct {
	named map[string]int32
}

// Check checks one message of producer id naming partition named (< 0:
// none); bound returns the producer's binding as the store has it, ok
// false when it has none that holds (new, expired, fresh, or its
// partition split). A producer this write binds is bound by the first
// partition it names.
func (b *Bindings) Check(id string, named int32, bound func() (int32, bool)) error {
	if id == "" || named < 0 {
		return nil
	}
	part, ok := b.named[id]
	if !ok {
		part, ok = bound()
	}
	if ok && part != named {
		return &topicstore.ProducerPartitionError{Producer: id, Bound: part, Named: named}
	}
	if b.named == nil {
		b.named = map[string]int32{}
	}
	b.named[id] = named
	return nil
}

// Position is a position update as a commit checks it.
type Position struct {
	Topic, Consumer string
	Partition       int32
	// Offset is where the update moves the position; Expect, where the
	// committer read it (< 0: no expectation).
	Offset, Expect int64
	// Exact: an explicit position (SetPosition), which must lie in
	// [Start, End]; a commit may name an offset retention passed (it
	// reads as the start).
	Exact bool
	// Forget: the update forgets the stored position (PositionUpdate's
	// Forget); its Offset is not checked, and the partition reads from
	// its start after it.
	Forget bool
}

// CheckPosition checks update u of a partition holding [start, end),
// whose committed position is cur (as earlier updates of the same
// request left it).
func CheckPosition(u Position, cur, start, end int64) error {
	if u.Expect >= 0 && cur != u.Expect {
		return fmt.Errorf("%w: topic %q consumer %q partition %d: committed offset is %d, expected %d",
			topicstore.ErrPositionConflict, u.Topic, u.Consumer, u.Partition, cur, u.Expect)
	}
	if u.Forget {
		return nil
	}
	lo := int64(0)
	if u.Exact {
		lo = start
	}
	if u.Offset < lo || u.Offset > end {
		return fmt.Errorf("%w: topic %q consumer %q partition %d: offset %d is outside [%d, %d]",
			topicstore.ErrOffsetOutOfRange, u.Topic, u.Consumer, u.Partition, u.Offset, start, end)
	}
	return nil
}

// CheckFence checks a commit's fence on a producer of topic whose state
// is p (nil: unknown or expired, which passes): its last accepted seqno
// must be below below.
func CheckFence(topic, producer string, p *Producer, below int64) error {
	if p == nil || p.Fresh || p.MaxSeqNo < below {
		return nil
	}
	return fmt.Errorf("%w: topic %q producer %q: last seqno %d, the commit needs one below %d",
		topicstore.ErrFenced, topic, producer, p.MaxSeqNo, below)
}

// Moved is where a checked update leaves the position for the request's
// later updates: never below the partition's start (the start itself
// after a Forget).
func Moved(u Position, start int64) int64 {
	if u.Forget {
		return start
	}
	return max(u.Offset, start)
}

// TopicGone is the refusal of a commit naming a topic that no longer
// exists.
func TopicGone(topic string) error {
	return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
}

// ConsumerGone is the refusal of a position update of a consumer the
// topic no longer has.
func ConsumerGone(topic, consumer string) error {
	return fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
}

// PartitionGone is the refusal of a position update of a partition the
// topic does not have.
func PartitionGone(topic string, part int32) error {
	return fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, topic, part)
}
