package plan

import (
	"slices"
	"strconv"
	"time"
	"topicgate/topicstore"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// simPart is a partition's end as the group sees it while planning.
type simPart struct {
	topic  *fold.Topic
	id     int32
	end    int64
	expect uint64 // the subject's last sequence before the batch
	// written is the partition's payload bytes ever written, up to what
	// the group appended so far (Tg-Cum).
	written int64
	// added counts the messages the group appended so far: the next one
	// gets offset end+added.
	added int64
	// segs are what the group appends, in order: runs of message entries
	// and staged chunks joined by reference.
	segs []segment
}

// segment is a run of encoded message entries, or one staged chunk.
type segment struct {
	buf   []byte
	count int64
	ref   *stagedRef
}

// stagedRef is a staged chunk placed in a partition.
type stagedRef struct {
	seq   uint64 // the staged message's stream sequence
	count int64
	bytes int64
	crc   uint32
}

// add appends one message entry.
func (sp *simPart) add(hasSeq bool, seq int64, tail []byte) {
	if n := len(sp.segs); n == 0 || sp.segs[n-1].ref != nil {
		sp.segs = append(sp.segs, segment{})
	}
	g := &sp.segs[len(sp.segs)-1]
	g.buf = topicstore.AppendMessage(g.buf, hasSeq, seq, tail)
	g.count++
	sp.added++
}

// msgs estimates how many stream messages the partition's part takes.
func (sp *simPart) msgs() int {
	n := 0
	for _, g := range sp.segs {
		n += 1 + len(g.buf)/maxRecordBytes
	}
	return n
}

// PartKey names a partition the plan wrote.
type PartKey struct {
	Topic uint64
	Part  int32
}

// ProdKey names a producer of a topic.
type ProdKey struct {
	Topic    uint64
	Producer string
}

type simProd struct {
	topic    *fold.Topic
	producer string
	st       fold.Producer // the state before the group; d decides from it
	d        decide.Producer
	expect   uint64
	fresh    bool // no live state before the group
	touched  bool
}

type posKey struct {
	topic     uint64
	consumer  string
	partition int32
}

type simPos struct {
	topic  *fold.Topic
	key    posKey
	off    int64
	expect uint64
}

// groupBuild is plan's work on one group: the group's view of the
// partitions, producers and positions it changes, and the guards it
// needs, from which it builds the batch.
type groupBuild struct {
	pl  *Planner
	p   *Batch
	now time.Time
	// parts, prods and poss are the group's view, in the order first
	// touched (partOrder, prodOrder, posOrder).
	parts     map[PartKey]*simPart
	partOrder []*simPart
	prods     map[ProdKey]*simProd
	prodOrder []*simProd
	poss      map[posKey]*simPos
	posOrder  []*simPos
	// guards: one message per topic written or read, conditional on the
	// topic's catalog subject, so a drop, an alteration or a split since
	// the plan refuses the batch.
	guarded  map[uint64]bool
	guards   []*fold.Topic
	msgCount int // messages in the batch so far
	// sticky is the partition of the group's writes to a topic that name
	// none and have no producer or key: one per topic per group, the next
	// round-robin one (Kafka's sticky partitioner, KIP-480), so concurrent
	// single-row INSERTs coalesced into one batch append one record batch,
	// not one per partition.
	sticky map[uint64]int32
	// wi is the index of the write being planned in its request, placed
	// where its messages go (CommitResult.Placed).
	wi     int
	placed []topicstore.Placement
}

// guard puts t's guard in the batch, once, when t needs one.
func (b *groupBuild) guard(t *fold.Topic) {
	if !b.guarded[t.Rec.ID] && needsGuard(t) {
		b.guarded[t.Rec.ID] = true
		b.guards = append(b.guards, t)
		b.msgCount++
	}
}

// producer is a producer's state as the group sees it, bound: a new one
// where its message goes, one whose partition split follows its key into
// the child (or the partition it names), keeping its seqnos, since dedup
// is per topic.
func (b *groupBuild) producer(t *fold.Topic, id string, named int32) *simProd {
	k := ProdKey{t.Rec.ID, id}
	sp := b.prods[k]
	if sp == nil {
		sp = b.pl.simProducer(t, id, b.now)
		b.prods[k] = sp
		if sp.fresh {
			b.p.Fresh = append(b.p.Fresh, k)
		}
	}
	if sp.d.Fresh || inactive(t, sp.d.Part) {
		sp.d.Part = b.pl.bind(t, id, named)
	}
	return sp
}

// fences takes r's checked producer fences into the group: a producer
// the store knows is rewritten as it is, expecting its subject's last
// sequence, so a write to it by another gateway before the batch lands
// fails the batch (and the retry's check refuses the fence). A fence on
// a producer the store does not know carries no expectation: the
// subject cannot be expected empty and then written.
func (b *groupBuild) fences(r *Request) {
	for _, f := range r.Fences {
		t := b.pl.Fold.ByName[f.Topic]
		k := ProdKey{t.Rec.ID, f.Producer}
		sp := b.prods[k]
		if sp == nil {
			sp = b.pl.simProducer(t, f.Producer, b.now)
			if sp.fresh {
				continue
			}
			b.prods[k] = sp
		}
		if !sp.d.Fresh {
			b.touch(sp)
		}
	}
}

// touch puts a producer whose state the group changed in the batch.
func (b *groupBuild) touch(sp *simProd) {
	if !sp.touched {
		sp.touched = true
		b.prodOrder = append(b.prodOrder, sp)
		b.msgCount++
	}
}

// partFor is the group's part of partition part of t, which request i
// writes; its messages are counted as its segments grow.
func (b *groupBuild) partFor(i int, t *fold.Topic, part int32) *simPart {
	b.guard(t)
	k := PartKey{t.Rec.ID, part}
	sp := b.parts[k]
	if sp == nil {
		ps := t.Parts[part]
		sp = &simPart{topic: t, id: part, end: ps.End, expect: ps.LastSeq, written: ps.Bytes}
		b.parts[k] = sp
		b.partOrder = append(b.partOrder, sp)
	}
	if !slices.Contains(b.p.Wrote[i], k) {
		b.p.Wrote[i] = append(b.p.Wrote[i], k)
	}
	return sp
}

// unbound is the group's partition of t's writes that name none and have
// no producer or key (sticky).
func (b *groupBuild) unbound(t *fold.Topic) int32 {
	p, ok := b.sticky[t.Rec.ID]
	if !ok {
		p = b.pl.roundRobin(t)
		b.sticky[t.Rec.ID] = p
	}
	return p
}

// positions takes r's position updates into the group.
func (b *groupBuild) positions(r *Request) {
	for _, u := range r.Pos {
		t := b.pl.Fold.ByName[u.Topic]
		k := posKey{t.Rec.ID, u.Consumer, u.Partition}
		sp := b.poss[k]
		if sp == nil {
			sp = &simPos{topic: t, key: k}
			if ps := t.Pos[u.Consumer][u.Partition]; ps != nil {
				sp.expect = ps.Seq
			}
			b.poss[k] = sp
			b.posOrder = append(b.posOrder, sp)
			b.msgCount++
		}
		sp.off = u.Offset
		if u.Forget {
			sp.off = fold.NoOffset
		}
		b.guard(t)
	}
}

// write takes one checked write of request i into the group: its staged
// chunks, by reference, then its messages.
func (b *groupBuild) write(i int, w *Write, res *topicstore.WriteResult) {
	t := b.pl.Fold.ByName[w.Topic]
	unbound := int32(-1)
	for _, c := range w.Staged {
		part := c.Partition
		if c.ProducerID != "" {
			sp := b.producer(t, c.ProducerID, c.Partition)
			switch sp.d.AdmitChunk(true, c.SeqMin, c.SeqMax) {
			case decide.ChunkDuplicate:
				res.Duplicates += c.Count
				continue
			case decide.ChunkMixed:
				// checkRequest sends these back (errExpand); a chunk it
				// let through is taken whole, as its seqnos name it.
				sp.d.Fresh, sp.d.MaxSeqNo = false, c.SeqMax
			}
			sp.st.At = b.now
			b.touch(sp)
			part = sp.d.Part
		} else if part >= 0 {
			part = live(t, part, "")
		} else {
			if unbound < 0 {
				unbound = b.unbound(t)
			}
			part = unbound
		}
		sp := b.partFor(i, t, part)
		b.placed = topicstore.AddPlacement(b.placed, b.wi, part, sp.end+sp.added, c.Count)
		sp.segs = append(sp.segs, segment{ref: &stagedRef{seq: c.Seq, count: int64(c.Count), bytes: c.Bytes, crc: c.CRC}})
		sp.added += int64(c.Count)
		b.msgCount++
		res.Written += c.Count
	}
	for _, m := range w.Msgs {
		part := m.Partition
		seq, hasSeq := m.SeqNo, m.HasSeqNo
		if m.Producer != "" {
			sp := b.producer(t, m.Producer, m.Partition)
			var ok bool
			if seq, ok = sp.d.Admit(hasSeq, seq); !ok {
				res.Duplicates++
				continue
			}
			hasSeq = true
			sp.st.At = b.now
			b.touch(sp)
			part = sp.d.Part
		} else if p, ok := decide.Route(&t.Rec.Layout, part, m.Group); ok {
			part = p
		} else {
			if unbound < 0 {
				unbound = b.unbound(t)
			}
			part = unbound
		}
		sp := b.partFor(i, t, part)
		b.placed = topicstore.AddPlacement(b.placed, b.wi, part, sp.end+sp.added, 1)
		before := sp.msgs()
		sp.add(hasSeq, seq, m.Tail)
		b.msgCount += sp.msgs() - before
		res.Written++
	}
}

// messages builds the batch's messages: guards, producers and positions
// first, record batches last (the ack names the batch's last sequence,
// which is then a record's whenever the group wrote one).
func (b *groupBuild) messages(sh *sharedPlan) {
	pl, p := b.pl, b.p
	for _, t := range b.guards {
		m := nats.NewMsg(pl.Subj.Guard(t.Rec.ID, pl.Gw))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a guard is only ever its last message
		m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(t.CatSeq, 10))
		m.Header.Set(natsjs.ExpectedLastSubjSeqSubjHeader, pl.Subj.Catalog(t.Rec.Config.Name))
		p.Msgs = append(p.Msgs, m)
		p.Guards = append(p.Guards, m)
	}
	for _, sp := range b.prodOrder {
		m := nats.NewMsg(pl.Subj.Producer(sp.topic.Rec.ID, sp.producer))
		m.Header.Set(fold.HPart, strconv.Itoa(int(sp.d.Part)))
		m.Header.Set(fold.HSeqNo, strconv.FormatInt(sp.d.MaxSeqNo, 10))
		m.Header.Set(fold.HAt, strconv.FormatInt(sp.st.At.UnixMicro(), 10))
		if sp.st.Pending+1 >= ProducerRollupEvery || (sp.fresh && sp.expect != 0) {
			// A producer's state is its last message; the ones before
			// go every ProducerRollupEvery writes (jetstream/producers.go).
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		}
		jsext.Expect(m, sp.expect)
		p.Msgs = append(p.Msgs, m)
	}
	for _, sp := range b.posOrder {
		m := nats.NewMsg(pl.Subj.Position(sp.key.topic, sp.key.consumer, sp.key.partition))
		m.Header.Set(fold.HOff, strconv.FormatInt(sp.off, 10))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a position is its last message
		jsext.Expect(m, sp.expect)
		p.Msgs = append(p.Msgs, m)
	}
	p.Msgs = append(p.Msgs, sh.messages(b.poss)...) // shared-consumer states (shared.go)
	at := b.now.UnixMicro()
	for _, sp := range b.partOrder {
		p.Msgs = append(p.Msgs, pl.records(sp, at)...)
	}
}
