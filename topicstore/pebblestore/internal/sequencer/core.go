package sequencer

import (
	"encoding/binary"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// The group commit (see doc.go): Apply turns a group of requests into the
// Pebble writes, the results and the partitions' new ends.

// ProducerState is a producer's dedup state and partition binding (Fresh:
// created in this group and no seqno accepted yet) and its last write.
type ProducerState struct {
	decide.Producer
	LastWrite time.Time
}

// Partition is a partition's sequencer state.
type Partition struct {
	Start  int64 // first retained offset (moved by retention)
	End    int64 // next offset to assign
	EndCum int64 // cumulative payload bytes up to End
	// Refs lists the staged data this partition references, by ascending
	// end offset (see core_staged.go).
	Refs []PartRef
}

// Topic is a topic's sequencer state.
type Topic struct {
	ID        uint64
	Parts     []Partition
	Producers map[string]*ProducerState
	RR        uint32 // round-robin cursor for new bindings and unbound writes
	// Consumers holds each consumer's committed offset per partition;
	// NoPosition means none stored (reads clamp up to the partition's
	// Start). A stored 0 is a position: Kafka's OffsetFetch tells it
	// from none.
	Consumers map[string][]int64
	// Layout is the partitions' place in the key space (topicstore/layout.go);
	// ActiveIDs lists the active ones (nil: all are, as in a flat layout).
	Layout    topicstore.Layout
	ActiveIDs []int32
	// Throttle is set while the topic has a write-speed limit (throttle.go).
	Throttle *Throttle
	// Expiry is the topic's producer_inactivity_period (0: the store's).
	Expiry time.Duration
}

// ExpiryOf is how long t's producers live without writes.
func (s *State) ExpiryOf(t *Topic) time.Duration {
	if t.Expiry > 0 {
		return t.Expiry
	}
	return s.Expiry
}

// SetLayout installs l and the active-partition list it implies.
func (t *Topic) SetLayout(l topicstore.Layout) {
	t.Layout = l
	t.ActiveIDs = nil
	if l.Active() == len(l.Parts) {
		return
	}
	for i, p := range l.Parts {
		if !p.Inactive {
			t.ActiveIDs = append(t.ActiveIDs, int32(i))
		}
	}
}

// Inactive reports whether partition p no longer takes writes.
func (t *Topic) Inactive(p int32) bool { return decide.Inactive(&t.Layout, p) }

// live returns where a write naming partition p goes (decide.Live).
func (t *Topic) live(p int32, key string) int32 { return decide.Live(&t.Layout, p, key) }

// State is everything the committer owns.
type State struct {
	Topics map[uint64]*Topic
	Expiry time.Duration // producer binding expiry
	// Refs: per committed staging ID, the partitions still referencing
	// its staged data (mirrors the r/ records).
	Refs map[uint64][]RefEntry
	// Load reads a staged batch's payload (the dedup fallback copies it).
	Load func(sid, seq uint64) ([]byte, error)
	// thr tallies the current request's bytes to throttled partitions.
	thr throttleTally
}

// Msg is a validated, encoded message waiting for the committer.
type Msg struct {
	Partition  int32 // < 0: chosen by the store
	ProducerID string
	Group      string // message_group_id: the key of a message without producer
	SeqNo      int64
	HasSeqNo   bool
	Tail       []byte // appendTail output
}

// Write is one TopicWrite, validated against topic TopicID.
type Write struct {
	TopicID uint64
	Msgs    []Msg
	Staged  []Staged // applied before Msgs
}

// KV is one Pebble write of a group: a nil Value deletes Key.
type KV struct{ Key, Value []byte }

// Published is a partition's new end, to make visible after the sync.
type Published struct {
	TopicID   uint64
	Partition int32
	End       int64
	EndCum    int64
	WrittenAt time.Time
}

// Outcome is one request's result.
type Outcome struct {
	Result topicstore.CommitResult
	Err    error
}

// Output is what apply returns for a group.
type Output struct {
	Sets     []KV
	Outcomes []Outcome // one per request, in order
	Publish  []Published
	Messages int      // messages appended
	Dels     [][]byte // keys to delete (staged batches copied by the dedup fallback)
	Err      error    // fatal: a staged batch could not be read
}

// BatchTargetBytes splits what a group appends to one partition into
// batches of about this size, so that reading at an offset inside a batch
// (SeekLT clones the value; earlier messages are skipped) stays cheap.
const BatchTargetBytes = 32 << 10

// PartKey names a partition of a topic.
type PartKey struct {
	Topic uint64
	Part  int32
}

type partBuf struct {
	key   PartKey
	base  int64
	count int
	buf   []byte  // header space + payload
	ref   *Staged // set: a reference record to this staged batch
}

// Request is one commit request: its writes and position updates.
type Request struct {
	Writes    []Write
	Positions []PosUpdate
	Fences    []Fence
}

// Apply processes reqs in order at time now. A request whose checks fail
// (topic or partition gone, position conflict or out of range) changes
// nothing and writes nothing.
func (s *State) Apply(reqs []Request, now time.Time) Output {
	g := &groupApply{s: s, now: now, out: Output{Outcomes: make([]Outcome, len(reqs))},
		bufs: map[PartKey]*partBuf{}, touched: map[prodKey]*ProducerState{}, sticky: map[uint64]int32{}}
	// Size new batch buffers for the whole group (bounded by the batch
	// target) so appends rarely grow them.
	for _, r := range reqs {
		for _, w := range r.Writes {
			for _, m := range w.Msgs {
				g.groupBytes += len(m.Tail) + 16
			}
		}
	}
	for i, r := range reqs {
		if err := s.check(r.Writes, now); err != nil {
			g.out.Outcomes[i].Err = err
			continue
		}
		// Positions are checked against the state before this request's
		// own writes, and applied before them (they never count them).
		if err := s.checkPositions(r.Positions); err != nil {
			g.out.Outcomes[i].Err = err
			continue
		}
		if err := s.checkFences(r.Fences, now); err != nil {
			g.out.Outcomes[i].Err = err
			continue
		}
		g.out.Sets = s.applyPositions(g.out.Sets, r.Positions)
		res := make([]topicstore.WriteResult, len(r.Writes))
		g.placed = nil
		for j, w := range r.Writes {
			g.wi = j
			if err := g.write(w, &res[j]); err != nil {
				g.out.Err = err
				return g.out
			}
		}
		g.out.Outcomes[i].Result = topicstore.CommitResult{Writes: res, Throttle: s.thr.settle(now), Placed: g.placed}
	}
	g.finish()
	return g.out
}

type prodKey struct {
	topic uint64
	id    string
}

// groupApply is apply's work on one group: the batches it appends, the
// producers it changes, the staged data it references.
type groupApply struct {
	s          *State
	now        time.Time
	out        Output
	groupBytes int // the group's message bytes, to size batch buffers
	bufs       map[PartKey]*partBuf
	order      []*partBuf
	touched    map[prodKey]*ProducerState
	prodOrder  []prodKey
	refs       []refAdd
	// sticky is, per topic, the partition of the group's messages that
	// have no producer and name none (decide.Route).
	sticky map[uint64]int32
	// The previous message's producer (runs of one producer are common).
	lastT  *Topic
	lastID string
	lastPS *ProducerState
	// wi is the index of the write being applied in its request, placed
	// where the request's messages went (CommitResult.Placed).
	wi     int
	placed []topicstore.Placement
}

// touch records that the group changed producer id's state.
func (g *groupApply) touch(t *Topic, id string, ps *ProducerState) {
	pk := prodKey{t.ID, id}
	if g.touched[pk] != ps {
		if g.touched[pk] == nil {
			g.prodOrder = append(g.prodOrder, pk)
		}
		g.touched[pk] = ps
	}
}

// add appends one message to partition part's open batch.
func (g *groupApply) add(t *Topic, part int32, hasSeq bool, seq int64, tail []byte) {
	k := PartKey{t.ID, part}
	b := g.bufs[k]
	if b == nil || len(b.buf)-topicstore.BatchHeaderLen >= BatchTargetBytes {
		size := max(len(tail)+16, min(g.groupBytes, BatchTargetBytes+len(tail)+16))
		b = &partBuf{key: k, base: t.Parts[part].End, buf: make([]byte, topicstore.BatchHeaderLen, topicstore.BatchHeaderLen+size)}
		g.bufs[k] = b
		g.order = append(g.order, b)
	}
	b.buf = topicstore.AppendMessage(b.buf, hasSeq, seq, tail)
	b.count++
	g.placed = topicstore.AddPlacement(g.placed, g.wi, part, t.Parts[part].End, 1)
	if t.Throttle != nil {
		g.s.thr.note(t.Throttle, part, len(tail))
	}
	t.Parts[part].End++
}

// nextRR is t's next round-robin partition.
func (t *Topic) nextRR() int32 {
	var p int32
	if t.ActiveIDs != nil {
		p = t.ActiveIDs[t.RR%uint32(len(t.ActiveIDs))]
	} else {
		p = int32(t.RR % uint32(len(t.Parts)))
	}
	t.RR++
	return p
}

// bind chooses a new producer's partition (decide.Bind).
func (t *Topic) bind(id string, explicit int32) int32 {
	return decide.Bind(&t.Layout, id, explicit, t.nextRR)
}

// unbound is the group's partition of t's messages that name none and
// have no producer or key.
func (g *groupApply) unbound(t *Topic) int32 {
	p, ok := g.sticky[t.ID]
	if !ok {
		p = t.nextRR()
		g.sticky[t.ID] = p
	}
	return p
}

// ref places a staged batch at the partition's end by reference; the
// partition's open batch is closed so later messages follow it.
func (g *groupApply) ref(t *Topic, part int32, c *Staged) {
	k := PartKey{t.ID, part}
	delete(g.bufs, k)
	g.order = append(g.order, &partBuf{key: k, base: t.Parts[part].End, count: c.Count, ref: c})
	g.placed = topicstore.AddPlacement(g.placed, g.wi, part, t.Parts[part].End, c.Count)
	t.Parts[part].End += int64(c.Count)
	g.refs = append(g.refs, refAdd{c.SID, k, t.Parts[part].End})
	if t.Throttle != nil {
		g.s.thr.note(t.Throttle, part, int(c.Bytes))
	}
}

// write applies one checked write: its staged chunks, then its messages.
func (g *groupApply) write(w Write, r *topicstore.WriteResult) error {
	s, t := g.s, g.s.Topics[w.TopicID]
	for k := range w.Staged {
		c := &w.Staged[k]
		if c.ProducerID == "" {
			part := c.Partition
			if part >= 0 {
				part = t.live(part, "")
			} else {
				part = g.unbound(t)
			}
			g.ref(t, part, c)
			r.Written += c.Count
			continue
		}
		g.lastT = nil // the producer cache may go stale below
		ps := s.LiveProducer(t, c.ProducerID, g.now)
		fresh := ps == nil
		if fresh {
			ps = &ProducerState{Producer: decide.Producer{Fresh: true}}
		}
		if ps.AdmitChunk(c.SeqOK, c.SeqMin, c.SeqMax) == decide.ChunkNew {
			if fresh {
				ps = s.newProducer(t, c.ProducerID, t.bind(c.ProducerID, c.Partition))
				ps.Fresh, ps.MaxSeqNo = false, c.SeqMax
			} else if t.Inactive(ps.Part) {
				ps.Part = t.bind(c.ProducerID, c.Partition)
			}
			ps.LastWrite = g.now
			g.ref(t, ps.Part, c)
			r.Written += c.Count
			g.touch(t, c.ProducerID, ps)
			continue
		}
		// Rare: duplicates (or seqnos the summary cannot decide): copy
		// the batch message by message, with dedup.
		msgs, err := s.loadStaged(c)
		if err != nil {
			return err
		}
		g.admit(t, msgs, r)
		g.out.Dels = append(g.out.Dels, keys.Staged(c.SID, c.Seq))
	}
	g.admit(t, w.Msgs, r)
	return nil
}

// admit appends one write's messages: dedup, then partition choice.
func (g *groupApply) admit(t *Topic, msgs []Msg, r *topicstore.WriteResult) {
	for _, m := range msgs {
		if m.ProducerID == "" {
			part, ok := decide.Route(&t.Layout, m.Partition, m.Group)
			if !ok {
				part = g.unbound(t)
			}
			g.add(t, part, m.HasSeqNo, m.SeqNo, m.Tail)
			r.Written++
			continue
		}
		if t == g.lastT && m.ProducerID == g.lastID && !t.Inactive(g.lastPS.Part) {
			// Same producer as the previous message: skip the lookups.
			seq, ok := g.lastPS.Admit(m.HasSeqNo, m.SeqNo)
			if !ok {
				r.Duplicates++
				continue
			}
			g.add(t, g.lastPS.Part, true, seq, m.Tail)
			r.Written++
			continue
		}
		ps := g.s.LiveProducer(t, m.ProducerID, g.now)
		if ps == nil {
			ps = g.s.newProducer(t, m.ProducerID, t.bind(m.ProducerID, m.Partition))
		} else if t.Inactive(ps.Part) {
			// Its partition split: the producer follows its key into the
			// child (or the partition it names), keeping its seqnos, since
			// dedup is per topic.
			ps.Part = t.bind(m.ProducerID, m.Partition)
		}
		seq, ok := ps.Admit(m.HasSeqNo, m.SeqNo)
		if !ok {
			r.Duplicates++
			continue
		}
		ps.LastWrite = g.now
		g.add(t, ps.Part, true, seq, m.Tail) // an explicit partition is the binding (check)
		r.Written++
		g.touch(t, m.ProducerID, ps)
		g.lastT, g.lastID, g.lastPS = t, m.ProducerID, ps
	}
}

// finish turns the group's batches, producers and references into the
// Pebble writes and the partitions' new ends.
func (g *groupApply) finish() {
	s, out := g.s, &g.out
	wa := g.now.UnixMicro()
	for _, b := range g.order {
		p := &s.Topics[b.key.Topic].Parts[b.key.Part]
		if c := b.ref; c != nil {
			out.Sets = append(out.Sets, KV{keys.Batch(b.key.Topic, b.key.Part, b.base), topicstore.PutRefRecord(topicstore.BatchHeader{
				Base: b.base, Count: c.Count, WrittenAt: wa, CumBefore: p.EndCum, CRC: c.CRC,
				Bytes: c.Bytes, SID: c.SID, Seq: c.Seq})})
			p.EndCum += c.Bytes
			out.Publish = append(out.Publish, Published{b.key.Topic, b.key.Part, b.base + int64(b.count), p.EndCum, g.now})
			out.Messages += b.count
			continue
		}
		payload := b.buf[topicstore.BatchHeaderLen:]
		topicstore.PutBatchHeader(b.buf, topicstore.BatchHeader{
			Base: b.base, Count: b.count, WrittenAt: wa, CumBefore: p.EndCum,
			CRC: topicstore.Checksum(payload),
		})
		p.EndCum += int64(len(payload))
		out.Sets = append(out.Sets, KV{keys.Batch(b.key.Topic, b.key.Part, b.base), b.buf})
		out.Publish = append(out.Publish, Published{b.key.Topic, b.key.Part, b.base + int64(b.count), p.EndCum, g.now})
		out.Messages += b.count
	}
	for _, pk := range g.prodOrder {
		out.Sets = append(out.Sets, KV{keys.Producer(pk.topic, pk.id), encodeProducer(g.touched[pk])})
	}
	out.Sets = s.addRefs(out.Sets, g.refs)
}

// check rejects a request whose topics were dropped (or partitions do not
// exist) since the caller validated it; nothing of it is applied.
func (s *State) check(writes []Write, now time.Time) error {
	for _, w := range writes {
		t := s.Topics[w.TopicID]
		if t == nil || len(t.Parts) == 0 {
			return topicstore.ErrTopicNotFound
		}
		// A producer stays in its partition: an explicit partition must
		// be the one the producer is bound to, or, for a producer this
		// write binds, the one its first explicit message named.
		var b decide.Bindings
		binding := func(id string, part int32) error {
			return b.Check(id, part, func() (int32, bool) {
				if ps := s.LiveProducer(t, id, now); ps != nil && !ps.Fresh && !t.Inactive(ps.Part) {
					return ps.Part, true // a split partition's binding is void
				}
				return 0, false
			})
		}
		for _, m := range w.Msgs {
			if int(m.Partition) >= len(t.Parts) {
				return topicstore.ErrPartitionNotFound
			}
			if err := binding(m.ProducerID, m.Partition); err != nil {
				return err
			}
		}
		for _, c := range w.Staged {
			if int(c.Partition) >= len(t.Parts) {
				return topicstore.ErrPartitionNotFound
			}
			if err := binding(c.ProducerID, c.Partition); err != nil {
				return err
			}
		}
	}
	return nil
}

// Producer record: uvarint partition | varint max seqno | varint last write
// (unix micros).
func encodeProducer(ps *ProducerState) []byte {
	b := make([]byte, 0, 24)
	b = binary.AppendUvarint(b, uint64(ps.Part))
	b = binary.AppendVarint(b, ps.MaxSeqNo)
	return binary.AppendVarint(b, ps.LastWrite.UnixMicro())
}

func DecodeProducer(v []byte) (*ProducerState, error) {
	r := topicstore.ByteReader{B: v}
	ps := &ProducerState{Producer: decide.Producer{Part: int32(r.Uvarint()), MaxSeqNo: r.Varint()}}
	ps.LastWrite = time.UnixMicro(r.Varint()).UTC()
	if r.Err {
		return nil, topicstore.ErrCorrupt
	}
	return ps, nil
}
