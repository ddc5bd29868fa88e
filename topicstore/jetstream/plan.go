package jetstream

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
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
	topic  *topicState
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
	topic    *topicState
	producer string
	st       prodState // the state before the group; d decides from it
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
	topic  *topicState
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
	for _, key := range []string{hRec, hShared} {
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
	return MaxBatchMsgs
}

// planLocked is plan under s.mu, without the marker.
func (s *Store) planLocked(group []*commitReq) *groupPlan {
	now := s.opts.Clock()
	p := &groupPlan{reqs: group, res: make([]topicstore.CommitResult, len(group)), errs: make([]error, len(group)),
		wrote: make([][]partKey, len(group)), started: s.io.now()}
	parts := map[partKey]*simPart{}
	var partOrder []*simPart
	prods := map[prodKey]*simProd{}
	var prodOrder []*simProd
	poss := map[posKey]*simPos{}
	var posOrder []*simPos
	// guards: one message per topic written or read, conditional on the
	// topic's catalog subject, so a drop, an alteration or a split since
	// the plan refuses the batch.
	guarded := map[uint64]bool{}
	var guards []*topicState
	msgCount := 1 // the marker
	guard := func(t *topicState) {
		if !guarded[t.rec.ID] && needsGuard(t) {
			guarded[t.rec.ID] = true
			guards = append(guards, t)
			msgCount++
		}
	}
	// producer is a producer's state as the group sees it, bound: a new
	// one where its message goes, one whose partition split follows its
	// key into the child (or the partition it names), keeping its seqnos,
	// since dedup is per topic.
	producer := func(t *topicState, id string, named int32) *simProd {
		k := prodKey{t.rec.ID, id}
		sp := prods[k]
		if sp == nil {
			sp = s.simProducer(t, id, now)
			prods[k] = sp
			if sp.fresh {
				p.fresh = append(p.fresh, k)
			}
		}
		if sp.d.Fresh || inactive(t, sp.d.Part) {
			sp.d.Part = s.bind(t, id, named)
		}
		return sp
	}
	// touch puts a producer whose state the group changed in the batch.
	touch := func(sp *simProd) {
		if !sp.touched {
			sp.touched = true
			prodOrder = append(prodOrder, sp)
			msgCount++
		}
	}
	// partFor is the group's part of partition part of t, which request i
	// writes; its messages are counted as its segments grow.
	partFor := func(i int, t *topicState, part int32) *simPart {
		guard(t)
		k := partKey{t.rec.ID, part}
		sp := parts[k]
		if sp == nil {
			ps := t.parts[part]
			sp = &simPart{topic: t, id: part, end: ps.end, expect: ps.lastSeq, written: ps.bytes}
			parts[k] = sp
			partOrder = append(partOrder, sp)
		}
		if !slices.Contains(p.wrote[i], k) {
			p.wrote[i] = append(p.wrote[i], k)
		}
		return sp
	}
	// sticky is the partition of the group's writes to a topic that name
	// none and have no producer or key: one per topic per group, the next
	// round-robin one (Kafka's sticky partitioner, KIP-480), so concurrent
	// single-row INSERTs coalesced into one batch append one record batch,
	// not one per partition.
	sticky := map[uint64]int32{}
	unboundPart := func(t *topicState) int32 {
		p, ok := sticky[t.rec.ID]
		if !ok {
			p = s.roundRobin(t)
			sticky[t.rec.ID] = p
		}
		return p
	}
	sh := s.newSharedPlan(group) // shared-consumer steps (shared_plan.go)
	for i, r := range group {
		if i > 0 && msgCount+sh.msgs >= s.groupLimit() {
			// The batch is full: the rest waits for the next group.
			p.errs[i] = errRequeue
			continue
		}
		// Validate first, against the group's simulation; only then apply.
		if err := s.checkRequest(r, now, prods, poss); err != nil {
			p.errs[i] = err
			continue
		}
		if r.staged {
			if err := s.swept.check(s.stage.gw, r.openedAt); err != nil {
				p.errs[i] = err
				continue
			}
		}
		writes, err := sh.step(r, now) // r's shared-consumer steps; dead-letter copies join its writes
		if err != nil {
			p.errs[i] = err
			continue
		}
		for _, u := range r.pos {
			t := s.byName[u.Topic]
			k := posKey{t.rec.ID, u.Consumer, u.Partition}
			sp := poss[k]
			if sp == nil {
				sp = &simPos{topic: t, key: k}
				if ps := t.pos[u.Consumer][u.Partition]; ps != nil {
					sp.expect = ps.seq
				}
				poss[k] = sp
				posOrder = append(posOrder, sp)
				msgCount++
			}
			sp.off = u.Offset
			guard(t)
		}
		res := topicstore.CommitResult{Writes: make([]topicstore.WriteResult, len(writes))}
		for wi, w := range writes {
			t := s.byName[w.topic]
			unbound := int32(-1)
			for _, c := range w.staged {
				part := c.Partition
				if c.ProducerID != "" {
					sp := producer(t, c.ProducerID, c.Partition)
					switch sp.d.AdmitChunk(true, c.SeqMin, c.SeqMax) {
					case decide.ChunkDuplicate:
						res.Writes[wi].Duplicates += c.Count
						continue
					case decide.ChunkMixed:
						// checkRequest sends these back (errExpand); a
						// chunk it let through is taken whole, as its
						// seqnos name it.
						sp.d.Fresh, sp.d.MaxSeqNo = false, c.SeqMax
					}
					sp.st.at = now
					touch(sp)
					part = sp.d.Part
				} else if part >= 0 {
					part = live(t, part, "")
				} else {
					if unbound < 0 {
						unbound = unboundPart(t)
					}
					part = unbound
				}
				sp := partFor(i, t, part)
				sp.segs = append(sp.segs, segment{ref: &stagedRef{seq: c.Seq, count: int64(c.Count), bytes: c.Bytes, crc: c.CRC}})
				msgCount++
				res.Writes[wi].Written += c.Count
			}
			for _, m := range w.msgs {
				part := m.partition
				seq, hasSeq := m.seqNo, m.hasSeqNo
				if m.producer != "" {
					sp := producer(t, m.producer, m.partition)
					var ok bool
					if seq, ok = sp.d.Admit(hasSeq, seq); !ok {
						res.Writes[wi].Duplicates++
						continue
					}
					hasSeq = true
					sp.st.at = now
					touch(sp)
					part = sp.d.Part
				} else if p, ok := decide.Route(&t.rec.Layout, part, m.group); ok {
					part = p
				} else {
					if unbound < 0 {
						unbound = unboundPart(t)
					}
					part = unbound
				}
				sp := partFor(i, t, part)
				before := sp.msgs()
				sp.add(hasSeq, seq, m.tail)
				msgCount += sp.msgs() - before
				res.Writes[wi].Written++
			}
		}
		res.Writes = res.Writes[:len(r.writes)]
		p.res[i] = res
	}
	for _, t := range guards {
		m := nats.NewMsg(s.guardSubject(t.rec.ID))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a guard is only ever its last message
		m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(t.catSeq, 10))
		m.Header.Set(natsjs.ExpectedLastSubjSeqSubjHeader, s.catalogSubject(t.rec.Config.Name))
		p.msgs = append(p.msgs, m)
		p.guards = append(p.guards, m)
	}
	// Producers and positions first, record batches last: the ack names
	// the batch's last sequence, which is then a record's whenever the
	// group wrote one.
	for _, sp := range prodOrder {
		m := nats.NewMsg(s.producerSubject(sp.topic.rec.ID, sp.producer))
		m.Header.Set(hPart, strconv.Itoa(int(sp.d.Part)))
		m.Header.Set(hSeqNo, strconv.FormatInt(sp.d.MaxSeqNo, 10))
		m.Header.Set(hAt, strconv.FormatInt(sp.st.at.UnixMicro(), 10))
		if sp.st.pending+1 >= producerRollupEvery || (sp.fresh && sp.expect != 0) {
			// A producer's state is its last message; the ones before
			// go every producerRollupEvery writes (producers.go).
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		}
		expect(m, sp.expect)
		p.msgs = append(p.msgs, m)
	}
	for _, sp := range posOrder {
		m := nats.NewMsg(s.positionSubject(sp.key.topic, sp.key.consumer, sp.key.partition))
		m.Header.Set(hOff, strconv.FormatInt(sp.off, 10))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a position is its last message
		expect(m, sp.expect)
		p.msgs = append(p.msgs, m)
	}
	p.msgs = append(p.msgs, sh.messages(poss)...) // shared-consumer states (shared_plan.go)
	at := now.UnixMicro()
	for _, sp := range partOrder {
		p.msgs = append(p.msgs, s.records(sp, at)...)
	}
	// A request put off (the batch was full, or a wide transaction holds
	// a topic it touches) leaves the plan; the committer sends it again.
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
	return p
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

// records encodes a partition's part of the group as record batch
// messages of at most maxRecordBytes each; the first carries the
// expectation that keeps the partition's offsets contiguous.
func (s *Store) records(sp *simPart, at int64) []*nats.Msg {
	var out []*nats.Msg
	base := sp.end
	for _, g := range sp.segs {
		if g.ref != nil {
			h := topicstore.BatchHeader{Base: base, Count: int(g.ref.count), WrittenAt: at, CRC: g.ref.crc,
				Bytes: g.ref.bytes, Ref: true, Seq: g.ref.seq}
			m := nats.NewMsg(s.dataSubject(sp.topic.rec.ID, sp.id))
			m.Data = topicstore.PutRefRecord(h)
			sp.written += g.ref.bytes
			s.recordHeaders(m, base, g.ref.count, at, g.ref.bytes, sp.written, g.ref.seq)
			if len(out) == 0 {
				expect(m, sp.expect)
			}
			out = append(out, m)
			base += g.ref.count
			continue
		}
		out, base = s.inlineRecords(out, sp, g.buf, base, at)
	}
	return out
}

// inlineRecords appends buf's entries as record batch messages.
func (s *Store) inlineRecords(out []*nats.Msg, sp *simPart, rest []byte, base, at int64) ([]*nats.Msg, int64) {
	for len(rest) > 0 {
		n, size := int64(0), 0
		for size < len(rest) && (n == 0 || size < maxRecordBytes) {
			_, tail, err := topicstore.NextEntry(rest[size:])
			if err != nil {
				break
			}
			size = len(rest) - len(tail)
			n++
		}
		if size == 0 {
			break // cannot happen: the group encoded these entries
		}
		payload := rest[:size]
		rest = rest[size:]
		rec := make([]byte, topicstore.BatchHeaderLen+len(payload))
		topicstore.PutBatchHeader(rec, topicstore.BatchHeader{Base: base, Count: int(n), WrittenAt: at, CRC: topicstore.Checksum(payload)})
		copy(rec[topicstore.BatchHeaderLen:], payload)
		m := nats.NewMsg(s.dataSubject(sp.topic.rec.ID, sp.id))
		m.Data = rec
		sp.written += int64(len(payload))
		s.recordHeaders(m, base, n, at, int64(len(payload)), sp.written, 0)
		if len(out) == 0 {
			expect(m, sp.expect)
		}
		out = append(out, m)
		base += n
	}
	return out, base
}

// recordHeaders sets what the fold reads of a record batch, in one
// header (hRec: fewer header lines make the fold cheaper, and every
// gateway folds every message); cum is the partition's payload bytes ever
// written, this batch's included; ref, if not 0, the staged message a
// reference record joins.
func (s *Store) recordHeaders(m *nats.Msg, base, count, at, bytes, cum int64, ref uint64) {
	b := make([]byte, 0, 96)
	for _, v := range []int64{base, count, at, bytes, cum} {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ' ')
	}
	b = append(b, s.stage.gw...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, ref, 10)
	m.Header.Set(hRec, string(b))
}

// expect makes m conditional on its subject's last sequence.
func expect(m *nats.Msg, seq uint64) {
	m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(seq, 10))
}

// checkRequest refuses a request that cannot commit: a topic gone, a
// partition it lacks, a producer named in another partition than its
// binding, a position that moved.
func (s *Store) checkRequest(r *commitReq, now time.Time, prods map[prodKey]*simProd, poss map[posKey]*simPos) error {
	if s.requestLocked(r) {
		return errLocked // a wide transaction holds a topic it touches (wide.go)
	}
	for _, w := range r.writes {
		t := s.byName[w.topic]
		if t == nil {
			return topicstore.ErrTopicNotFound
		}
		var bound decide.Bindings
		// A staged chunk of a producer is decided whole from its summary:
		// all new or all duplicates; one that is partly duplicates goes
		// back to be joined as messages (errExpand).
		maxNo := map[string]int64{}
		for _, c := range w.staged {
			if c.ProducerID == "" {
				continue
			}
			sp := prods[prodKey{t.rec.ID, c.ProducerID}]
			if sp == nil {
				sp = s.simProducer(t, c.ProducerID, now)
			}
			if c.Partition >= 0 && !sp.d.Fresh && !inactive(t, sp.d.Part) && sp.d.Part != c.Partition {
				return &topicstore.ProducerPartitionError{Producer: c.ProducerID, Bound: sp.d.Part, Named: c.Partition}
			}
			cur, seen := maxNo[c.ProducerID]
			if !seen && !sp.d.Fresh {
				cur, seen = sp.d.MaxSeqNo, true
			}
			if seen && c.SeqMin <= cur && c.SeqMax > cur {
				return errExpand
			}
			if !seen || c.SeqMax > cur {
				maxNo[c.ProducerID] = c.SeqMax
			}
		}
		for _, m := range w.msgs {
			if int(m.partition) >= len(t.parts) {
				return topicstore.ErrPartitionNotFound
			}
			err := bound.Check(m.producer, m.partition, func() (int32, bool) {
				sp := prods[prodKey{t.rec.ID, m.producer}]
				if sp == nil {
					sp = s.simProducer(t, m.producer, now)
				}
				if !sp.d.Fresh && !inactive(t, sp.d.Part) {
					return sp.d.Part, true // a split partition's binding is void
				}
				return 0, false
			})
			if err != nil {
				return err
			}
		}
	}
	moved := map[posKey]int64{} // this request's earlier updates
	for _, u := range r.pos {
		t := s.byName[u.Topic]
		if t == nil {
			return decide.TopicGone(u.Topic)
		}
		if !hasConsumer(t, u.Consumer) {
			return decide.ConsumerGone(u.Topic, u.Consumer)
		}
		if int(u.Partition) >= len(t.parts) || u.Partition < 0 {
			return decide.PartitionGone(u.Topic, u.Partition)
		}
		ps := t.parts[u.Partition]
		k := posKey{t.rec.ID, u.Consumer, u.Partition}
		cur := s.position(t, u.Consumer, u.Partition)
		if sp := poss[k]; sp != nil {
			cur = max(sp.off, ps.start)
		}
		if off, ok := moved[k]; ok {
			cur = off
		}
		d := decide.Position{Topic: u.Topic, Consumer: u.Consumer, Partition: u.Partition,
			Offset: u.Offset, Expect: u.Expect, Exact: r.exact}
		if err := decide.CheckPosition(d, cur, ps.start, ps.end); err != nil {
			return err
		}
		moved[k] = decide.Moved(d, ps.start)
	}
	return nil
}

// needsGuard reports whether a commit touching t carries a guard on its
// catalog subject: only a keyed (auto-partitioned) topic's layout can
// change under a commit (a split) in a way that would make it write where
// it must not, an inactive parent. A flat topic only gains partitions; a
// write racing its DROP lands under the dropped topic's ID, which no fold
// reads. The guard is not free: the server refuses an expectation on a
// subject another in-flight batch also checks (10164), so every gateway
// writing the topic serializes on it; flat topics, the common case, do
// without.
func needsGuard(t *topicState) bool { return t.rec.Layout.Keyed }

// inactive reports whether partition p of t was split.
func inactive(t *topicState, p int32) bool { return decide.Inactive(&t.rec.Layout, p) }

// live is where a write naming partition p goes (decide.Live).
func live(t *topicState, p int32, key string) int32 { return decide.Live(&t.rec.Layout, p, key) }

// simProducer is a producer's state as the fold has it; a producer
// unknown, expired or bound to a partition that no longer exists is fresh.
func (s *Store) simProducer(t *topicState, producer string, now time.Time) *simProd {
	sp := &simProd{topic: t, producer: producer, fresh: true}
	if ps := t.prods[producer]; ps != nil {
		sp.expect = ps.seq
		if !decide.Expired(ps.at, now, s.expiry(t)) && int(ps.part) < len(t.parts) {
			sp.st, sp.fresh = *ps, false
		}
	}
	sp.d = decide.Producer{Part: sp.st.part, MaxSeqNo: sp.st.maxNo, Fresh: sp.fresh}
	return sp
}

// bind chooses a new producer's partition (decide.Bind).
func (s *Store) bind(t *topicState, producer string, explicit int32) int32 {
	return decide.Bind(&t.rec.Layout, producer, explicit, func() int32 { return s.roundRobin(t) })
}

// roundRobin picks the next active partition for an unbound write (and a
// new producer's binding). The cursor is the gateway's own: nothing but
// balance depends on it. It skips the partitions another gateway wrote
// last within contendedFor, as long as some partition is left: every
// gateway's batch expects its partitions' last sequences, so two gateways
// appending to one partition refuse each other's batches, and spreading
// unbound writes over disjoint partitions is what lets two gateways carry
// more than one.
func (s *Store) roundRobin(t *topicState) int32 {
	var active []int32
	for i, lp := range t.rec.Layout.Parts {
		if !lp.Inactive {
			active = append(active, int32(i))
		}
	}
	if len(active) == 0 {
		return 0
	}
	if mine := s.share(t, active); len(mine) > 0 {
		active = mine
	}
	p := active[int(t.rr)%len(active)]
	t.rr++
	return p
}

// share is this gateway's part of active when other gateways write the
// topic too: the gateways that wrote it within contendedFor, sorted by id,
// take every n-th partition each. Every gateway computes the same split
// from the same fold, so their unbound writes land in disjoint partitions.
func (s *Store) share(t *topicState, active []int32) []int32 {
	now := s.opts.Clock()
	gws := []string{s.stage.gw}
	for gw, at := range t.writers {
		if gw != s.stage.gw && now.Sub(at) <= contendedFor {
			gws = append(gws, gw)
		}
	}
	if len(gws) == 1 || len(active) < len(gws) {
		return nil
	}
	slices.Sort(gws)
	k := slices.Index(gws, s.stage.gw)
	var out []int32
	for i, p := range active {
		if i%len(gws) == k {
			out = append(out, p)
		}
	}
	return out
}

// contendedFor is how long a gateway counts as writing a topic after its
// last batch there.
const contendedFor = 5 * time.Second
