package jetstream

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

// The simulation's clients: what they ask the gateways, what they were
// answered, and the invariants checked against the stream at the end.

type simOutcome uint8

const (
	simAcked simOutcome = iota + 1
	simUnknown
	simFailed
)

// simReq is one client request: a commit, maybe after staging.
type simReq struct {
	kind   string
	req    *topicstore.CommitRequest
	stage  []simStaged // batches staged before the commit
	txn    uint64
	bodies []string  // unique bodies it writes: stored all or none
	seqs   []simSeqs // seqnos of the retried producers it writes
	pos    []simPosMove
	cr     *plan.Request
	// answered: its client heard an answer (crashed: the gateway died
	// first, so the outcome is unknown to it).
	answered, crashed bool
	outcome           simOutcome
	// A worker's request on the shared consumer (sim_shared_test.go).
	session uint32
	max     int
	refs    []topicstore.MsgRef
	action  topicstore.SharedAction
}

type simStaged struct {
	topic string
	msgs  []topicstore.Message
}

type simSeqs struct {
	p    *simProducer
	seqs []int64
}

type simPosMove struct {
	topic string
	part  int32
	off   int64
}

// simProducer is a producer whose unacknowledged seqnos are sent again.
type simProducer struct {
	id, topic string
	next      int64
	pending   []int64 // sent, not acknowledged
	best      map[int64]simOutcome
}

type simPosKey struct {
	topic string
	part  int32
}

// simWorld is the clients' side.
type simWorld struct {
	n                                          map[simOutcome]int
	prods                                      []*simProducer
	bodies                                     map[string]simOutcome
	groups                                     [][]string // bodies of a request not acknowledged: stored all or none
	posAcked                                   map[simPosKey]int64
	nextID                                     int
	wides, widesAcked, stagedTxns, stagedAcked int
	crashedReqs                                int
	sh                                         simLedger
}

func (w *simWorld) init() {
	w.n = map[simOutcome]int{}
	w.bodies = map[string]simOutcome{}
	w.posAcked = map[simPosKey]int64{}
	w.sh.init()
	for i := range 6 {
		tp := simTopics[i%len(simTopics)].name
		w.prods = append(w.prods, &simProducer{id: fmt.Sprintf("p%d", i), topic: tp, next: 1, best: map[int64]simOutcome{}})
	}
}

func (w *simWorld) body() string {
	w.nextID++
	return fmt.Sprintf("b%d", w.nextID)
}

// startJob gives idle gateway g a job: one to three requests run as one
// group, or a maintenance run.
func (m *sim) startJob(g *simGW) {
	var job func()
	var reqs []*simReq
	if m.rng.IntN(10) == 0 {
		snap := m.rng.IntN(3) == 0
		job = func() {
			if snap {
				g.s.mu.Lock()
				m.snaps = append(m.snaps, simSnap{g.name, g.s.applied, g.s.fold.EncodeSnapshot(g.s.opts.Stream, time.Time{}, g.s.applied, 0)})
				g.s.mu.Unlock()
			}
			ctx := context.Background()
			g.s.chain.Settle(ctx, true)
			g.s.wide.Settle(ctx)
			g.s.chain.Purge(ctx)
			g.s.wide.AbortDead()
			if _, err := g.s.maint.Sweep(ctx); err != nil {
				m.logf("%s: sweep: %v", g.name, err)
			}
			// Every producer counts as idle: compaction races the
			// writes, rollups and wide intents on their subjects.
			if _, err := g.s.compactProducers(ctx, g.s.io.now().Add(producerIdle)); err != nil {
				m.logf("%s: compacting producers: %v", g.name, err)
			}
			// Every decision is old enough: retirement races the
			// writes, aborts and compactions on the intents' subjects.
			if _, err := g.s.retire.Run(ctx, g.s.io.now().Add(g.s.opts.DecisionHold)); err != nil {
				m.logf("%s: retiring decisions: %v", g.name, err)
			}
		}
		m.logf("%s: maintenance", g.name)
	} else {
		n := 1
		if m.rng.IntN(4) == 0 {
			n += 1 + m.rng.IntN(2)
		}
		for range n {
			reqs = append(reqs, m.request(g))
		}
		job = func() { m.execute(g, reqs) }
	}
	g.busy, g.job = true, reqs
	g.jobs <- job
	m.wait()
}

// request draws one request.
func (m *sim) request(g *simGW) *simReq {
	w := &m.w
	if m.rng.IntN(10) < 3 {
		return m.sharedRequest(g)
	}
	r := &simReq{req: &topicstore.CommitRequest{}}
	switch k := m.rng.IntN(100); {
	case k < 35:
		r.kind = "dedup"
		p := w.prods[m.rng.IntN(len(w.prods))]
		seqs := append([]int64(nil), p.pending...)
		for len(seqs) < 1+m.rng.IntN(3) {
			seqs = append(seqs, p.next)
			p.pending = append(p.pending, p.next)
			p.next++
		}
		var msgs []topicstore.Message
		for _, sq := range seqs {
			msgs = append(msgs, topicstore.Message{Partition: -1, ProducerID: p.id, SeqNo: sq, HasSeqNo: true, Body: []byte(fmt.Sprintf("%s-%d", p.id, sq))})
		}
		r.seqs = []simSeqs{{p, seqs}}
		r.req.Writes = []topicstore.TopicWrite{{Topic: p.topic, Messages: msgs}}
	case k < 50:
		r.kind = "plain"
		tp := simTopics[m.rng.IntN(len(simTopics))]
		var msgs []topicstore.Message
		for range 1 + m.rng.IntN(3) {
			b := w.body()
			part := int32(-1)
			if m.rng.IntN(2) == 0 {
				part = int32(m.rng.IntN(tp.parts))
			}
			msgs = append(msgs, topicstore.Message{Partition: part, Body: []byte(b)})
			r.bodies = append(r.bodies, b)
		}
		r.req.Writes = []topicstore.TopicWrite{{Topic: tp.name, Messages: msgs}}
	case k < 65:
		r.kind = "positions"
		m.positions(g, r, 1+m.rng.IntN(3))
	case k < 80:
		r.kind = "wide"
		w.wides++
		tp := simTopics[m.rng.IntN(len(simTopics))]
		var msgs []topicstore.Message
		id := w.body()
		for i := range 3 + m.rng.IntN(7) {
			b := fmt.Sprintf("%s.%d", id, i)
			msgs = append(msgs, topicstore.Message{Partition: -1, ProducerID: "w" + b, SeqNo: 1, HasSeqNo: true, Body: []byte(b)})
			r.bodies = append(r.bodies, b)
		}
		r.req.Writes = []topicstore.TopicWrite{{Topic: tp.name, Messages: msgs}}
		if m.rng.IntN(2) == 0 {
			m.positions(g, r, 1+m.rng.IntN(3))
		}
	default:
		r.kind = "staged"
		w.stagedTxns++
		tp := simTopics[m.rng.IntN(len(simTopics))]
		if m.rng.IntN(3) == 0 {
			tp.name, tp.parts = simQuiet, 4
		}
		w.nextID++
		r.txn = uint64(w.nextID)
		producer := ""
		if m.rng.IntN(2) == 0 {
			producer = fmt.Sprintf("s%d", r.txn)
		}
		seq := int64(1)
		for range 1 + m.rng.IntN(2) {
			var msgs []topicstore.Message
			for range 2 + m.rng.IntN(5) {
				b := w.body()
				msg := topicstore.Message{Partition: -1, Body: []byte(b)}
				if producer != "" {
					msg.ProducerID, msg.SeqNo, msg.HasSeqNo = producer, seq, true
					seq++
				}
				msgs = append(msgs, msg)
				r.bodies = append(r.bodies, b)
			}
			r.stage = append(r.stage, simStaged{topic: tp.name, msgs: msgs})
		}
		r.req.Writes = []topicstore.TopicWrite{{Topic: tp.name}}
		if m.rng.IntN(2) == 0 {
			b := w.body()
			r.req.Writes[0].Messages = []topicstore.Message{{Partition: -1, Body: []byte(b)}}
			r.bodies = append(r.bodies, b)
		}
		if m.rng.IntN(2) == 0 {
			m.positions(g, r, 1+m.rng.IntN(2))
		}
	}
	return r
}

// positions adds moves of consumer c's positions to r, from where g's
// fold has them.
func (m *sim) positions(g *simGW, r *simReq, n int) {
	tp := simTopics[m.rng.IntN(len(simTopics))]
	g.s.mu.Lock()
	defer g.s.mu.Unlock()
	t := g.s.fold.ByName[tp.name]
	if t == nil {
		return
	}
	for _, p := range m.rng.Perm(tp.parts)[:min(n, tp.parts)] {
		cur := t.Position("c", int32(p))
		end := t.Parts[p].End
		if end <= cur {
			continue
		}
		off := cur + 1 + m.rng.Int64N(end-cur)
		r.req.Positions = append(r.req.Positions, topicstore.PositionUpdate{Topic: tp.name, Consumer: "c", Partition: int32(p), Offset: off, Expect: cur})
		r.pos = append(r.pos, simPosMove{tp.name, int32(p), off})
	}
}

// execute runs a job's requests on g's goroutine, as the committer would:
// staging first, then one group, what is put off again, until each is
// answered.
func (m *sim) execute(g *simGW, reqs []*simReq) {
	ctx := context.Background()
	s := g.s
	var group []*plan.Request
	var workers []*simReq
	for _, r := range reqs {
		if r.kind == "acquire" || r.kind == "ack" || r.kind == "release" {
			workers = append(workers, r)
			continue
		}
		ok := true
		for _, st := range r.stage {
			sb, err := s.StageBatch(ctx, r.txn, st.topic, st.msgs)
			if err != nil {
				m.w.settle(r, err, topicstore.CommitResult{})
				_ = s.DiscardStaged(r.txn)
				ok = false
				break
			}
			r.req.Writes[0].Staged = append(r.req.Writes[0].Staged, sb)
		}
		if !ok {
			continue
		}
		cr, err := s.prepare(ctx, r.req, false)
		if err != nil || cr == nil {
			s.settleStaged(r.req, err)
			m.w.settle(r, err, topicstore.CommitResult{})
			continue
		}
		r.cr = cr
		group = append(group, cr)
	}
	// A worker's step runs with the group, the first one does, as the
	// committer would group them.
	s.inline = func(cr *plan.Request) {
		m.runAll(s, append(group, cr))
		group = nil
	}
	for _, r := range workers {
		m.sharedCall(g, r)
	}
	s.inline = nil
	m.runAll(s, group)
	for _, r := range reqs {
		if r.cr == nil {
			continue
		}
		o := <-r.cr.Out
		if o.Err == plan.ErrExpand {
			if err := s.expandAll(ctx, r.cr); err != nil {
				o.Err = err
			} else {
				m.runAll(s, []*plan.Request{r.cr})
				o = <-r.cr.Out
			}
		}
		s.settleStaged(r.req, o.Err)
		m.w.settle(r, o.Err, o.Res)
		m.settleShared(g, r)
		if o.Err != nil && r.txn != 0 {
			// The transaction rolls back. txn does not discard a staging
			// whose commit is in doubt, but the store must not delete it
			// if asked: it is checked here by asking.
			_ = s.DiscardStaged(r.txn)
		}
	}
}

// errSimGaveUp answers a request still waiting for a wide transaction's
// topics after many rounds: it was never in a batch.
var errSimGaveUp = fmt.Errorf("%w: sim: still waiting for a wide transaction", topicstore.ErrUnavailable)

// runAll is the committer's loop over one set of requests.
func (m *sim) runAll(s *Store, group []*plan.Request) {
	ctx := context.Background()
	for round := 0; len(group) > 0; round++ {
		later, locked := s.runGroup(group)
		s.chain.Settle(ctx, true)
		if s.wide.Answered() {
			s.wide.Settle(ctx)
		}
		group = append(later, locked...)
		if len(later) == 0 && len(locked) > 0 {
			if round > 200 {
				for _, cr := range locked {
					cr.Out <- plan.Outcome{Err: errSimGaveUp}
				}
				return
			}
			s.wide.AbortOrphans(locked)
			s.mu.Lock()
			from := s.applied
			s.mu.Unlock()
			s.io.waitAdvance(from, lockPoll)
		}
	}
}

// settle records what r's client was answered.
func (w *simWorld) settle(r *simReq, err error, res topicstore.CommitResult) {
	r.answered = true
	switch {
	case err == nil:
		r.outcome = simAcked
	case errors.Is(err, topicstore.ErrOutcomeUnknown):
		r.outcome = simUnknown
	default:
		r.outcome = simFailed
	}
	w.n[r.outcome]++
	if r.outcome == simAcked {
		switch r.kind {
		case "wide":
			w.widesAcked++
		case "staged":
			w.stagedAcked++
		}
	}
	for _, b := range r.bodies {
		w.bodies[b] = r.outcome // a body is sent once
	}
	if r.outcome != simAcked && len(r.bodies) > 1 {
		w.groups = append(w.groups, r.bodies)
	}
	for _, ss := range r.seqs {
		p := ss.p
		for _, sq := range ss.seqs {
			switch {
			case r.outcome == simAcked:
				p.best[sq] = simAcked
				p.pending = removeSeq(p.pending, sq)
			case p.best[sq] == simAcked:
			case r.outcome == simUnknown || p.best[sq] == simUnknown:
				p.best[sq] = simUnknown
			default:
				p.best[sq] = simFailed
			}
		}
	}
	if r.outcome == simAcked {
		for _, mv := range r.pos {
			k := simPosKey{mv.topic, mv.part}
			w.posAcked[k] = max(w.posAcked[k], mv.off)
		}
	}
}

func removeSeq(s []int64, v int64) []int64 {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// aftermath checks that the cluster works once the faults stopped: on
// every live gateway, a write to every partition, every producer's
// outstanding seqnos and a move of every position to its end are
// acknowledged (a subject left with a stale last sequence, a topic held
// by an undecided wide transaction would refuse them).
func (m *sim) aftermath() {
	for _, g := range m.live() {
		var reqs []*simReq
		for _, tp := range allSimTopics() {
			for p := range tp.parts {
				b := m.w.body()
				reqs = append(reqs, &simReq{kind: "after", bodies: []string{b}, req: &topicstore.CommitRequest{
					Writes: []topicstore.TopicWrite{{Topic: tp.name, Messages: []topicstore.Message{{Partition: int32(p), Body: []byte(b)}}}}}})
			}
		}
		for _, p := range m.w.prods {
			seqs := append(append([]int64(nil), p.pending...), p.next)
			p.pending = append(p.pending, p.next)
			p.next++
			var msgs []topicstore.Message
			for _, sq := range seqs {
				msgs = append(msgs, topicstore.Message{Partition: -1, ProducerID: p.id, SeqNo: sq, HasSeqNo: true, Body: []byte(fmt.Sprintf("%s-%d", p.id, sq))})
			}
			reqs = append(reqs, &simReq{kind: "after", seqs: []simSeqs{{p, seqs}}, req: &topicstore.CommitRequest{
				Writes: []topicstore.TopicWrite{{Topic: p.topic, Messages: msgs}}}})
		}
		for _, r := range reqs {
			m.runJob(g, func() { m.execute(g, []*simReq{r}) })
			if r.outcome != simAcked {
				m.fail(fmt.Errorf("after the faults, gateway %s: a %v request was not acknowledged (%v)", g.name, r.req.Writes[0].Topic, r.outcome))
				return
			}
		}
		for _, tp := range simTopics {
			r := &simReq{kind: "after", req: &topicstore.CommitRequest{}}
			g.s.mu.Lock()
			t := g.s.fold.ByName[tp.name]
			for p := range tp.parts {
				cur, end := t.Position("c", int32(p)), t.Parts[p].End
				if end > cur {
					r.req.Positions = append(r.req.Positions, topicstore.PositionUpdate{Topic: tp.name, Consumer: "c", Partition: int32(p), Offset: end, Expect: cur})
					r.pos = append(r.pos, simPosMove{tp.name, int32(p), end})
				}
			}
			g.s.mu.Unlock()
			m.runJob(g, func() { m.execute(g, []*simReq{r}) })
			if len(r.pos) > 0 && r.outcome != simAcked {
				m.fail(fmt.Errorf("after the faults, gateway %s: moving the positions of %s was not acknowledged", g.name, tp.name))
				return
			}
		}
	}
}

// verifyDigests checks that every gateway, live or crashed, held the
// same state at each stream sequence its fold recorded a digest at: the
// fold is a function of the stream's prefix, whatever else the gateway
// did (repairs, its own batches applied from what it published), which
// the snapshots' digest check relies on.
func (m *sim) verifyDigests() {
	first := map[uint64]string{}
	seqs := map[uint64]string{}
	for _, g := range m.gws {
		g.s.mu.Lock()
		for seq, d := range g.digests {
			if prev, ok := seqs[seq]; ok && prev != d {
				m.fail(fmt.Errorf("gateways %s and %s held different states at sequence %d (digests %s, %s)", first[seq], g.name, seq, prev, d))
			}
			seqs[seq], first[seq] = d, g.name
		}
		g.s.mu.Unlock()
	}
}

// verifySnapshots starts a fold from each snapshot taken, as a gateway
// does (jetstream/snapshot: every message up to the snapshot's sequence but
// record batches, the snapshot, the rest of the stream), and checks it
// holds what a fold of the whole stream does (want).
func (m *sim) verifySnapshots(want string) {
	var retired uint64
	for _, g := range m.gws {
		retired = max(retired, g.s.retire.UpTo())
	}
	for _, sn := range m.snaps {
		if sn.seq < retired {
			// A decision after it was retired: no gateway starts from it
			// any more (jetstream/wide: snapshotsPast), and a transaction open at its
			// point may have left no trace in the stream.
			continue
		}
		dec, err := fold.DecodeSnapshot(sn.data)
		if err != nil {
			m.fail(fmt.Errorf("the snapshot of gateway %s at %d does not decode: %w", sn.gw, sn.seq, err))
			return
		}
		w := newStore(m.opts(), 0xfffe)
		w.fold.Wide.Filtered = true
		for seq := uint64(1); seq <= sn.seq; seq++ {
			if msg := m.st.get(seq); msg != nil && !w.subj.IsKind(msg.subject, fold.KindData) {
				w.foldAt(seq, msg.subject, msg.h, msg.ts, false)
			}
		}
		if err := w.fold.Install(dec); err != nil {
			m.fail(fmt.Errorf("the snapshot of gateway %s at %d: %w", sn.gw, sn.seq, err))
			return
		}
		w.applied = dec.Meta.Seq
		for seq := sn.seq + 1; seq <= m.st.lastSeq(); seq++ {
			if msg := m.st.get(seq); msg != nil {
				w.foldAt(seq, msg.subject, msg.h, msg.ts, false)
			}
		}
		if w.foldErr != nil {
			m.fail(fmt.Errorf("started from the snapshot of gateway %s at %d, the fold failed: %w", sn.gw, sn.seq, w.foldErr))
			return
		}
		if d := foldDigest(m.t, w); d != want {
			m.fail(fmt.Errorf("started from the snapshot of gateway %s at %d, a fold holds:\n%s\nthan a fresh one:\n%s", sn.gw, sn.seq, d, want))
			return
		}
	}
}

// verify checks the invariants against a fresh gateway's fold of the
// whole stream.
func (m *sim) verify() {
	v := newStore(m.opts(), 0xffff)
	for seq := uint64(1); seq <= m.st.lastSeq(); seq++ {
		if msg := m.st.get(seq); msg != nil {
			v.foldAt(seq, msg.subject, msg.h, msg.ts, false)
		}
	}
	if v.foldErr != nil {
		m.fail(fmt.Errorf("the stream does not fold: %w", v.foldErr))
		return
	}
	if len(v.fold.Wide.Open) > 0 || len(v.fold.Wide.Locked) > 0 {
		m.fail(fmt.Errorf("wide transactions left undecided: %d (topics held: %v)", len(v.fold.Wide.Open), v.fold.Wide.Locked))
	}
	m.verifyShared(v)
	m.verifyDigests()
	want := foldDigest(m.t, v)
	m.verifySnapshots(want)
	for _, g := range m.live() {
		if g.s.foldErr != nil {
			m.fail(fmt.Errorf("gateway %s: its fold failed: %w", g.name, g.s.foldErr))
		}
		if d := foldDigest(m.t, g.s); d != want {
			m.fail(fmt.Errorf("gateway %s folded another state:\n%s\nthan a fresh one:\n%s", g.name, d, want))
		}
		if n := len(g.s.chain.Doubts); n > 0 {
			m.fail(fmt.Errorf("gateway %s: %d batches left in doubt (first: %+v)", g.name, n, *g.s.chain.Doubts[0]))
		}
		if n := g.s.wide.Unsettled(); n > 0 {
			m.fail(fmt.Errorf("gateway %s: %d wide transactions of its own not settled", g.name, n))
		}
		for txn, st := range g.s.stage.open {
			if st.state == stagingDoubt || st.state == stagingCommitting {
				m.fail(fmt.Errorf("gateway %s: staging %d left %v", g.name, txn, st.state))
			}
		}
	}
	// Read every partition from the stream.
	type found struct {
		topic string
		part  int32
		off   int64
	}
	seen := map[string][]found{}
	prodPart := map[string]found{}
	lastSeq := map[string]int64{}
	referenced := map[uint64]bool{}
	for _, tp := range allSimTopics() {
		t := v.fold.ByName[tp.name]
		if t == nil {
			m.fail(fmt.Errorf("topic %s is gone", tp.name))
			return
		}
		for p, ps := range t.Parts {
			next := ps.Start
			for _, r := range ps.Recs {
				if r.Base+r.Count() <= ps.Start {
					continue
				}
				if r.Base > next {
					m.fail(fmt.Errorf("%s/%d: offsets %d..%d missing", tp.name, p, next, r.Base-1))
				}
				next = r.Base + r.Count()
				msgs, err := m.readRecord(r)
				if err != nil {
					m.fail(fmt.Errorf("%s/%d offset %d (sequence %d): %w", tp.name, p, r.Base, r.Seq, err))
					continue
				}
				if ref := ps.Refs[r.Seq]; ref != 0 {
					referenced[ref] = true
				}
				for i, msg := range msgs {
					f := found{tp.name, int32(p), r.Base + int64(i)}
					b := string(msg.Body)
					seen[b] = append(seen[b], f)
					if msg.ProducerID != "" {
						if q, ok := prodPart[msg.ProducerID]; ok && (q.topic != f.topic || q.part != f.part) {
							m.fail(fmt.Errorf("producer %s in %s/%d and %s/%d", msg.ProducerID, q.topic, q.part, f.topic, f.part))
						}
						prodPart[msg.ProducerID] = f
						if msg.HasSeqNo {
							if msg.SeqNo <= lastSeq[msg.ProducerID] {
								m.fail(fmt.Errorf("producer %s: seqno %d at %s/%d offset %d after seqno %d", msg.ProducerID, msg.SeqNo, f.topic, f.part, f.off, lastSeq[msg.ProducerID]))
							}
							lastSeq[msg.ProducerID] = msg.SeqNo
						}
					}
				}
			}
			if next < ps.End {
				m.fail(fmt.Errorf("%s/%d: offsets %d..%d missing", tp.name, p, next, ps.End-1))
			}
			if pos, k := t.Position("c", int32(p)), (simPosKey{tp.name, int32(p)}); pos < m.w.posAcked[k] || pos > ps.End {
				m.fail(fmt.Errorf("%s/%d: consumer c is at %d, acknowledged at %d, end %d", tp.name, p, pos, m.w.posAcked[k], ps.End))
			}
		}
	}
	for b, fs := range seen {
		if len(fs) > 1 {
			m.fail(fmt.Errorf("%s stored %d times: %v", b, len(fs), fs))
		}
	}
	for b, o := range m.w.bodies {
		n := len(seen[b])
		switch {
		case o == simAcked && n != 1:
			m.fail(fmt.Errorf("%s was acknowledged and is stored %d times", b, n))
		case o == simFailed && n != 0:
			m.fail(fmt.Errorf("%s was refused and is stored", b))
		}
	}
	for _, grp := range m.w.groups {
		n := 0
		for _, b := range grp {
			if len(seen[b]) > 0 {
				n++
			}
		}
		if n != 0 && n != len(grp) {
			m.fail(fmt.Errorf("a request stored in part: %d of %v", n, grp))
		}
	}
	for _, p := range m.w.prods {
		for sq, o := range p.best {
			n := len(seen[fmt.Sprintf("%s-%d", p.id, sq)])
			switch {
			case o == simAcked && n != 1:
				m.fail(fmt.Errorf("%s seqno %d was acknowledged and is stored %d times", p.id, sq, n))
			case o == simFailed && n != 0:
				m.fail(fmt.Errorf("%s seqno %d was refused and is stored", p.id, sq))
			}
		}
	}
	// A dead gateway's chunks that no record references are swept.
	for seq := uint64(1); seq <= m.st.lastSeq(); seq++ {
		msg := m.st.get(seq)
		if msg == nil || !strings.HasPrefix(msg.subject, "tg.t.") || referenced[seq] || msg.h.Get(fold.HGone) != "" {
			continue // a "gone" marker its publisher did not delete expires (jetstream/maintain's goneTTL)
		}
		gw := strings.Split(msg.subject, ".")[2]
		for _, g := range m.gws {
			if g.name == gw && g.dead {
				m.fail(fmt.Errorf("chunk %d of dead gateway %s (%s) was not swept", seq, gw, msg.subject))
			}
		}
	}
}

// readRecord reads a record batch from the stream: its messages.
func (m *sim) readRecord(r fold.Rec) ([]*topicstore.Message, error) {
	msg := m.st.get(r.Seq)
	if msg == nil {
		return nil, fmt.Errorf("record batch message %d is gone", r.Seq)
	}
	h, payload, err := topicstore.DecodeBatchHeader(msg.data)
	if err != nil {
		return nil, err
	}
	if h.Ref {
		c := m.st.get(h.Seq)
		if c == nil {
			return nil, fmt.Errorf("staged chunk %d, which the record references, is gone", h.Seq)
		}
		payload = c.data
	}
	if err := topicstore.CheckCRC(h, payload); err != nil {
		return nil, err
	}
	var dec topicstore.MsgDecoder
	var out []*topicstore.Message
	for len(payload) > 0 {
		entry, rest, err := topicstore.NextEntry(payload)
		if err != nil {
			return nil, err
		}
		payload = rest
		msg, err := dec.Decode(entry)
		if err != nil {
			return nil, err
		}
		c := *msg
		c.Body = append([]byte(nil), msg.Body...)
		out = append(out, &c)
	}
	if int64(len(out)) != r.Count() {
		return nil, fmt.Errorf("record batch of %d messages holds %d", r.Count(), len(out))
	}
	return out, nil
}

// TestSimStoppedGatewaySwept is the sweep's race, scripted: gateway A
// stages a transaction on a partition nobody else writes and sends its
// commit, and stops (SIGSTOP) before the batch reaches the stream; B,
// seeing A's heartbeat expired a TTL ago, fences A and sweeps its staged
// chunks; A wakes up and its batch reaches the stream. The batch must be
// refused: no record may reference a swept chunk.
func TestSimStoppedGatewaySwept(t *testing.T) {
	m := newSim(t, 1)
	m.faults = false
	defer m.stop()
	a, b := m.gws[0], m.gws[1]
	r := &simReq{kind: "staged", txn: 999, req: &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: simQuiet}}},
		stage:  []simStaged{{topic: simQuiet, msgs: []topicstore.Message{{Partition: 0, Body: []byte("x1")}, {Partition: 0, Body: []byte("x2")}}}},
		bodies: []string{"x1", "x2"}}
	a.busy, a.job = true, []*simReq{r}
	a.jobs <- func() { m.execute(a, []*simReq{r}) }
	m.wait()
	for a.call != nil && a.call.kind != callBatch {
		m.answer(a)
	}
	require.NotNil(t, a.call, "A sends its commit")
	a.pausedUntil = m.now.Add(time.Hour)
	// A is stopped: the others beat, fold and, once A's heartbeat expired a
	// TTL ago, sweep.
	for range 3 * int(simTTL/time.Second) {
		m.now = m.now.Add(time.Second)
		for _, g := range m.live() {
			if g != a {
				m.heartbeat(g)
			}
		}
	}
	m.runJob(b, func() {
		b.s.wide.AbortDead()
		_, err := b.s.maint.Sweep(context.Background())
		require.NoError(t, err)
	})
	// A wakes up; its batch reaches the stream.
	a.pausedUntil = time.Time{}
	for a.call != nil {
		m.answer(a)
	}
	m.quiesce()
	m.verify()
	if m.err != nil || r.outcome != simFailed {
		for _, l := range m.trace {
			t.Log(l)
		}
	}
	require.NoError(t, m.err)
	require.Equal(t, simFailed, r.outcome, "A's commit was refused")
}
