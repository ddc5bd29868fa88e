package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/jetstream/jsext"
)

// groupPlan is one batch and what each request of it gets.
type groupPlan struct {
	msgs []*nats.Msg // the batch: its marker (doubt) first
	reqs []*commitReq
	res  []topicstore.CommitResult
	errs []error // a request refused at planning: not in the batch
	// wrote lists each request's partitions, for its write-speed delay.
	wrote [][]partKey
	// doubt is the batch's marker on the chain (chain.go); nil for an
	// empty batch and a wide one (wide.go marks each of its batches).
	doubt *doubt
	// later: requests put off because the batch was full or a wide
	// request goes alone; locked: requests touching a topic a wide
	// transaction holds (wide.go). Neither is in reqs.
	later, locked []*commitReq
	// wide: the one request of reqs is too wide for one batch; guards are
	// then its catalog guards, which go in its decision batch.
	wide   bool
	guards []*nats.Msg
	// started is when the plan was made, by the committer's clock.
	started time.Time
	// fresh lists the producers the plan took as new or expired: their
	// subjects' expectations are the ones an expiry can make wrong
	// (repairProducers).
	fresh []prodKey
}

// settle answers every request: its own refusal, else the batch's outcome.
func (p *groupPlan) settle(batchErr error) {
	for i, r := range p.reqs {
		switch {
		case p.errs[i] != nil:
			r.out <- commitOut{err: p.errs[i]}
		case batchErr != nil:
			r.out <- commitOut{err: batchErr}
		default:
			r.out <- commitOut{res: p.res[i]}
		}
	}
}

// deadline is the earliest deadline of the requests in the batch: how long
// an outcome in doubt is resolved before it is answered unknown.
func (p *groupPlan) deadline() time.Time {
	var d time.Time
	for i, r := range p.reqs {
		if p.errs[i] == nil && (d.IsZero() || r.deadline.Before(d)) {
			d = r.deadline
		}
	}
	return d
}

// planned counts the requests in the batch.
func (p *groupPlan) planned() int {
	n := 0
	for _, err := range p.errs {
		if err == nil {
			n++
		}
	}
	return n
}

// simPart is a partition's end as the group sees it while planning.
type simPart struct {
	topic  *fold.Topic
	id     int32
	end    int64
	expect uint64 // the subject's last sequence before the batch
	// written is the partition's payload bytes ever written, up to what
	// the group appended so far (Tg-Cum).
	written int64
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
}

// msgs estimates how many stream messages the partition's part takes.
func (sp *simPart) msgs() int {
	n := 0
	for _, g := range sp.segs {
		n += 1 + len(g.buf)/maxRecordBytes
	}
	return n
}

type partKey struct {
	topic uint64
	part  int32
}

type prodKey struct {
	topic    uint64
	producer string
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

// plan validates each request against the fold and the requests before it
// in the group, and builds the batch. A group whose batch would be too
// large for the server is cut to its first request, which, alone and
// still too large, is a wide transaction (wide.go).
func (s *Store) plan(group []*commitReq) *groupPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.planLocked(group)
	if len(p.msgs)+1 <= s.batchLimit() {
		if len(p.msgs) > 0 {
			s.markBatch(p)
		}
		return p
	}
	if p.planned() > 1 {
		// Too large for one batch: the first request goes alone (the
		// others wait for the next group), and, alone and too large, wide.
		first := -1
		var rest []*commitReq
		for i, r := range p.reqs {
			switch {
			case p.errs[i] != nil:
				r.out <- commitOut{err: p.errs[i]}
			case first < 0:
				first = i
			default:
				rest = append(rest, r)
			}
		}
		later, locked := p.later, p.locked
		p = s.planLocked([]*commitReq{p.reqs[first]})
		p.later, p.locked = append(append(p.later, later...), rest...), append(p.locked, locked...)
		if len(p.msgs)+1 <= s.batchLimit() {
			s.markBatch(p)
			return p
		}
	}
	p.wide = true
	return p
}

// markBatch registers the batch's doubt (chain.go) with its witness: its
// first record batch or, without one, its first shared-consumer state, or,
// without either (or when it joins staged chunks), a marker put first. It
// runs under s.mu.
func (s *Store) markBatch(p *groupPlan) {
	staged := false
	for i, r := range p.reqs {
		staged = staged || p.errs[i] == nil && r.staged
	}
	// A batch joining staged chunks carries a link of the chain whatever
	// else it holds: the sweep fences the chain before it deletes chunks
	// (sweep.go), so the link is what refuses a batch planned before the
	// fence.
	if i, prev, ok := p.witnessIndex(); ok && !staged {
		p.doubt = s.witness(p.msgs, i, prev, p.stagings())
		return
	}
	var m *nats.Msg
	m, p.doubt = s.marker(len(p.msgs)+1, p.stagings())
	p.msgs = append([]*nats.Msg{m}, p.msgs...)
}

// witnessIndex finds the batch's witness among its messages, a first
// record batch or else a shared-consumer state expecting its own subject,
// and the sequence it expects that subject at.
func (p *groupPlan) witnessIndex() (int, uint64, bool) {
	for _, key := range []string{fold.HRec, fold.HShared} {
		for i, m := range p.msgs {
			if m.Header.Get(key) == "" || m.Header.Get(natsjs.ExpectedLastSubjSeqSubjHeader) != "" {
				continue
			}
			v := m.Header.Get(natsjs.ExpectedLastSubjSeqHeader)
			if v == "" {
				continue
			}
			prev, err := strconv.ParseUint(v, 10, 64)
			return i, prev, err == nil
		}
	}
	return 0, 0, false
}

// stagings lists the stagings the batch's requests join.
func (p *groupPlan) stagings() []uint64 {
	var out []uint64
	for i, r := range p.reqs {
		if p.errs[i] == nil {
			out = append(out, r.stagings...)
		}
	}
	return out
}

// batchLimit is the most messages one atomic batch may hold.
func (s *Store) batchLimit() int {
	if s.maxBatch > 0 {
		return s.maxBatch
	}
	return jsext.MaxBatchMsgs
}

// planLocked is plan under s.mu, without the marker.
func (s *Store) planLocked(group []*commitReq) *groupPlan {
	now := s.opts.Clock()
	p := &groupPlan{reqs: group, res: make([]topicstore.CommitResult, len(group)), errs: make([]error, len(group)),
		wrote: make([][]partKey, len(group)), started: s.io.now()}
	b := &groupBuild{s: s, p: p, now: now, parts: map[partKey]*simPart{}, prods: map[prodKey]*simProd{},
		poss: map[posKey]*simPos{}, guarded: map[uint64]bool{}, msgCount: 1 /* the marker */, sticky: map[uint64]int32{}}
	sh := s.newSharedPlan(group) // shared-consumer steps (shared_plan.go)
	for i, r := range group {
		if i > 0 && b.msgCount+sh.msgs >= s.groupLimit() {
			// The batch is full: the rest waits for the next group.
			p.errs[i] = errRequeue
			continue
		}
		// Validate first, against the group's simulation; only then apply.
		if err := s.checkRequest(r, now, b.prods, b.poss); err != nil {
			p.errs[i] = err
			continue
		}
		if r.staged {
			if err := s.fold.Swept.Check(s.stage.gw, r.openedAt); err != nil {
				p.errs[i] = err
				continue
			}
		}
		writes, err := sh.step(r, now) // r's shared-consumer steps; dead-letter copies join its writes
		if err != nil {
			p.errs[i] = err
			continue
		}
		b.positions(r)
		res := topicstore.CommitResult{Writes: make([]topicstore.WriteResult, len(writes))}
		for wi := range writes {
			b.write(i, &writes[wi], &res.Writes[wi])
		}
		res.Writes = res.Writes[:len(r.writes)]
		p.res[i] = res
	}
	b.messages(sh)
	p.putOff()
	return p
}

// groupBuild is planLocked's work on one group: the group's view of the
// partitions, producers and positions it changes, and the guards it
// needs, from which it builds the batch.
type groupBuild struct {
	s   *Store
	p   *groupPlan
	now time.Time
	// parts, prods and poss are the group's view, in the order first
	// touched (partOrder, prodOrder, posOrder).
	parts     map[partKey]*simPart
	partOrder []*simPart
	prods     map[prodKey]*simProd
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
	k := prodKey{t.Rec.ID, id}
	sp := b.prods[k]
	if sp == nil {
		sp = b.s.simProducer(t, id, b.now)
		b.prods[k] = sp
		if sp.fresh {
			b.p.fresh = append(b.p.fresh, k)
		}
	}
	if sp.d.Fresh || inactive(t, sp.d.Part) {
		sp.d.Part = b.s.bind(t, id, named)
	}
	return sp
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
	k := partKey{t.Rec.ID, part}
	sp := b.parts[k]
	if sp == nil {
		ps := t.Parts[part]
		sp = &simPart{topic: t, id: part, end: ps.End, expect: ps.LastSeq, written: ps.Bytes}
		b.parts[k] = sp
		b.partOrder = append(b.partOrder, sp)
	}
	if !slices.Contains(b.p.wrote[i], k) {
		b.p.wrote[i] = append(b.p.wrote[i], k)
	}
	return sp
}

// unbound is the group's partition of t's writes that name none and have
// no producer or key (sticky).
func (b *groupBuild) unbound(t *fold.Topic) int32 {
	p, ok := b.sticky[t.Rec.ID]
	if !ok {
		p = b.s.roundRobin(t)
		b.sticky[t.Rec.ID] = p
	}
	return p
}

// positions takes r's position updates into the group.
func (b *groupBuild) positions(r *commitReq) {
	for _, u := range r.pos {
		t := b.s.fold.ByName[u.Topic]
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
		b.guard(t)
	}
}

// write takes one checked write of request i into the group: its staged
// chunks, by reference, then its messages.
func (b *groupBuild) write(i int, w *pendingWrite, res *topicstore.WriteResult) {
	t := b.s.fold.ByName[w.topic]
	unbound := int32(-1)
	for _, c := range w.staged {
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
		sp.segs = append(sp.segs, segment{ref: &stagedRef{seq: c.Seq, count: int64(c.Count), bytes: c.Bytes, crc: c.CRC}})
		b.msgCount++
		res.Written += c.Count
	}
	for _, m := range w.msgs {
		part := m.partition
		seq, hasSeq := m.seqNo, m.hasSeqNo
		if m.producer != "" {
			sp := b.producer(t, m.producer, m.partition)
			var ok bool
			if seq, ok = sp.d.Admit(hasSeq, seq); !ok {
				res.Duplicates++
				continue
			}
			hasSeq = true
			sp.st.At = b.now
			b.touch(sp)
			part = sp.d.Part
		} else if p, ok := decide.Route(&t.Rec.Layout, part, m.group); ok {
			part = p
		} else {
			if unbound < 0 {
				unbound = b.unbound(t)
			}
			part = unbound
		}
		sp := b.partFor(i, t, part)
		before := sp.msgs()
		sp.add(hasSeq, seq, m.tail)
		b.msgCount += sp.msgs() - before
		res.Written++
	}
}

// messages builds the batch's messages: guards, producers and positions
// first, record batches last (the ack names the batch's last sequence,
// which is then a record's whenever the group wrote one).
func (b *groupBuild) messages(sh *sharedPlan) {
	s, p := b.s, b.p
	for _, t := range b.guards {
		m := nats.NewMsg(s.subj.Guard(t.Rec.ID, s.stage.gw))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a guard is only ever its last message
		m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(t.CatSeq, 10))
		m.Header.Set(natsjs.ExpectedLastSubjSeqSubjHeader, s.subj.Catalog(t.Rec.Config.Name))
		p.msgs = append(p.msgs, m)
		p.guards = append(p.guards, m)
	}
	for _, sp := range b.prodOrder {
		m := nats.NewMsg(s.subj.Producer(sp.topic.Rec.ID, sp.producer))
		m.Header.Set(fold.HPart, strconv.Itoa(int(sp.d.Part)))
		m.Header.Set(fold.HSeqNo, strconv.FormatInt(sp.d.MaxSeqNo, 10))
		m.Header.Set(fold.HAt, strconv.FormatInt(sp.st.At.UnixMicro(), 10))
		if sp.st.Pending+1 >= producerRollupEvery || (sp.fresh && sp.expect != 0) {
			// A producer's state is its last message; the ones before
			// go every producerRollupEvery writes (producers.go).
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		}
		expect(m, sp.expect)
		p.msgs = append(p.msgs, m)
	}
	for _, sp := range b.posOrder {
		m := nats.NewMsg(s.subj.Position(sp.key.topic, sp.key.consumer, sp.key.partition))
		m.Header.Set(fold.HOff, strconv.FormatInt(sp.off, 10))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a position is its last message
		expect(m, sp.expect)
		p.msgs = append(p.msgs, m)
	}
	p.msgs = append(p.msgs, sh.messages(b.poss)...) // shared-consumer states (shared_plan.go)
	at := b.now.UnixMicro()
	for _, sp := range b.partOrder {
		p.msgs = append(p.msgs, s.records(sp, at)...)
	}
}

// putOff takes out of the plan the requests put off (the batch was full,
// or a wide transaction holds a topic it touches); the committer sends
// them again.
func (p *groupPlan) putOff() {
	keep := p.reqs[:0:0]
	var keepRes []topicstore.CommitResult
	var keepErrs []error
	var keepWrote [][]partKey
	for i, r := range p.reqs {
		switch p.errs[i] {
		case errRequeue:
			p.later = append(p.later, r)
			continue
		case errLocked:
			p.locked = append(p.locked, r)
			continue
		}
		keep, keepRes, keepErrs = append(keep, r), append(keepRes, p.res[i]), append(keepErrs, p.errs[i])
		keepWrote = append(keepWrote, p.wrote[i])
	}
	p.reqs, p.res, p.errs, p.wrote = keep, keepRes, keepErrs, keepWrote
}

// groupLimit is how many messages a group's batch is filled to.
func (s *Store) groupLimit() int {
	return min(maxGroupMsgs, s.batchLimit()-s.batchLimit()/10)
}

// errRequeue: the batch is full, the request waits for the next group;
// errExpand: a staged chunk is partly duplicates, so the request goes
// back to its caller to join it as messages.
var (
	errRequeue = errors.New("requeue")
	errExpand  = errors.New("expand staged chunks")
	errLocked  = errors.New("a topic is held by a wide transaction")
)
