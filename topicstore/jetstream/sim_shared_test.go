package jetstream

import (
	"context"
	"fmt"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/sharedcore"
)

// Shared consumers in the simulation: workers acquire messages of the
// shared consumer simShared on topic "t" through the real AcquireAsync,
// acknowledge them in commits (with writes, grouped with other requests)
// and through SharedAction, and release them; their locks expire under
// outages and stopped gateways. What every worker was answered is kept in
// a ledger, and each hand-out is checked against it as it is answered:
//
//   - a message is never handed out while another confirmed lock on it
//     stands (locks are [plan, locked_until), the plan being locked_until
//     less the processing timeout), unless its holder asked to release it
//     before the later lock was planned;
//   - a message is never handed out after an acknowledgement of it was
//     confirmed;
//   - each confirmed hand-out of a message counts a higher delivery than
//     every confirmed hand-out planned before it;
//   - an ack or release by the session a message was last handed to,
//     answered before that lock's deadline, acts on it (unless another
//     action on it was in flight, or one failed: it may have acted).
//
// At the end, every confirmed acknowledgement is finished in the fold of
// the whole stream.

const (
	simShared        = "sq"
	simSharedTimeout = 500 * time.Millisecond
)

// simHand is one confirmed hand-out of a message.
type simHand struct {
	gw          string
	session     uint32
	plan, until time.Time
	deliv       int
	answered    time.Time
}

// simHeld is a message a worker holds, as it was answered.
type simHeld struct {
	gw      string
	session uint32
	ref     topicstore.MsgRef
}

// simLedger is what the workers were answered.
type simLedger struct {
	session uint32
	handed  map[topicstore.MsgRef][]simHand
	acked   map[topicstore.MsgRef]time.Time // confirmed acknowledgements, when answered
	release map[simHoldKey]time.Time        // release asked (whatever the answer), when asked
	held    []simHeld
	// uncertain: actions whose answer was an error (they may be stored)
	uncertain map[simHoldKey]bool
	pending   map[simHoldKey]int
	// counters for the summary
	acquires, hands, acks, releases int
}

type simHoldKey struct {
	gw      string
	session uint32
	ref     topicstore.MsgRef
}

func (l *simLedger) init() {
	l.handed = map[topicstore.MsgRef][]simHand{}
	l.acked = map[topicstore.MsgRef]time.Time{}
	l.release = map[simHoldKey]time.Time{}
	l.uncertain = map[simHoldKey]bool{}
	l.pending = map[simHoldKey]int{}
}

// simConsumers are the consumers of a simulated topic: "c" everywhere,
// and the shared one on "t".
func simConsumers(topic string) []topicstore.ConsumerConfig {
	cs := []topicstore.ConsumerConfig{{Name: "c"}}
	if topic == "t" {
		cs = append(cs, topicstore.ConsumerConfig{Name: simShared, Shared: true, ProcessingTimeout: simSharedTimeout})
	}
	return cs
}

// sharedRequest draws a worker's request on gateway g: an acquire, an
// acknowledgement in a commit (with a write), or a SharedAction (ack or
// release) of what a worker on g holds.
func (m *sim) sharedRequest(g *simGW) *simReq {
	l := &m.w.sh
	var mine []int
	for i, h := range l.held {
		if h.gw == g.name {
			mine = append(mine, i)
		}
	}
	k := m.rng.IntN(10)
	if len(mine) == 0 || k < 4 {
		l.session++
		return &simReq{kind: "acquire", req: &topicstore.CommitRequest{}, session: l.session, max: 1 + m.rng.IntN(3)}
	}
	h := l.held[mine[m.rng.IntN(len(mine))]]
	refs := []topicstore.MsgRef{h.ref}
	for _, i := range mine {
		if o := l.held[i]; o.session == h.session && o.ref != h.ref && m.rng.IntN(2) == 0 {
			refs = append(refs, o.ref)
		}
	}
	r := &simReq{req: &topicstore.CommitRequest{}, session: h.session, refs: refs}
	for _, ref := range refs {
		k := simHoldKey{g.name, h.session, ref}
		if l.pending[k] > 0 {
			l.uncertain[k] = true // two actions on it at once: the second may find it finished
		}
		l.pending[k]++
	}
	switch {
	case k < 7:
		r.kind = "ack-commit"
		r.req.Acks = []topicstore.SharedAck{{Topic: "t", Consumer: simShared, Session: h.session, Refs: refs}}
		if m.rng.IntN(2) == 0 {
			b := m.w.body()
			r.req.Writes = []topicstore.TopicWrite{{Topic: "u", Messages: []topicstore.Message{{Partition: -1, Body: []byte(b)}}}}
			r.bodies = []string{b}
		}
	case k < 9:
		r.kind, r.action = "ack", topicstore.ActionAck
	default:
		r.kind, r.action = "release", topicstore.ActionRelease
	}
	return r
}

// sharedCall runs a worker's acquire or SharedAction on g's goroutine and
// checks what it was answered.
func (m *sim) sharedCall(g *simGW, r *simReq) {
	l := &m.w.sh
	ctx := context.Background()
	r.answered = true
	if r.kind == "acquire" {
		l.acquires++
		res, err := g.s.AcquireAsync(ctx, topicstore.AcquireRequest{Topic: "t", Consumer: simShared, Session: r.session, Max: r.max})
		if err == nil {
			err = res.Wait()
		}
		if err != nil {
			m.logf("%s: acquire for session %d: %v", g.name, r.session, err)
			return
		}
		for _, a := range res.Messages {
			m.handOut(g, r.session, a)
		}
		return
	}
	l.releases += len(r.refs)
	if r.action == topicstore.ActionRelease {
		for _, ref := range r.refs {
			k := simHoldKey{g.name, r.session, ref}
			if _, ok := l.release[k]; !ok {
				l.release[k] = m.now
			}
		}
	}
	outs, err := g.s.SharedAction(ctx, topicstore.SharedActionRequest{Topic: "t", Consumer: simShared, Session: r.session, Action: r.action, Refs: r.refs})
	for _, ref := range r.refs {
		l.pending[simHoldKey{g.name, r.session, ref}]--
	}
	m.logf("%s: %s %v for session %d: %v %v", g.name, r.kind, r.refs, r.session, outs, err)
	if err != nil {
		for _, ref := range r.refs {
			l.uncertain[simHoldKey{g.name, r.session, ref}] = true
		}
		return
	}
	for i, ref := range r.refs {
		if hs := l.handed[ref]; outs[i] != topicstore.OutcomeDone && len(hs) > 0 && !l.uncertain[simHoldKey{g.name, r.session, ref}] {
			if h := hs[len(hs)-1]; h.gw == g.name && h.session == r.session && m.now.Before(h.until) {
				m.fail(fmt.Errorf("shared consumer: %s of %d/%d by %s session %d, held until %s, answered %v at %s",
					r.kind, ref.Partition, ref.Offset, g.name, r.session, h.until.Format("15:04:05.000"), outs[i], m.now.Format("15:04:05.000")))
			}
		}
		if outs[i] == topicstore.OutcomeDone && r.action == topicstore.ActionAck {
			m.ackConfirmed(ref)
		}
		m.w.sh.drop(g.name, r.session, ref)
	}
}

// handOut checks a confirmed hand-out against the ledger and records it.
func (m *sim) handOut(g *simGW, session uint32, a topicstore.Acquired) {
	l := &m.w.sh
	ref := topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset}
	h := simHand{gw: g.name, session: session, plan: a.LockedUntil.Add(-simSharedTimeout), until: a.LockedUntil, deliv: a.DeliveryCount, answered: m.now}
	l.hands++
	m.logf("%s: session %d got %d/%d (delivery %d) until %s", g.name, session, ref.Partition, ref.Offset, h.deliv, h.until.Format("15:04:05.000"))
	bad := func(format string, args ...any) {
		m.fail(fmt.Errorf("shared consumer: %d/%d handed to %s session %d (planned %s, delivery %d): %s", ref.Partition, ref.Offset,
			g.name, session, h.plan.Format("15:04:05.000"), h.deliv, fmt.Sprintf(format, args...)))
	}
	if at, ok := l.acked[ref]; ok && at.Before(h.plan) {
		bad("its acknowledgement was confirmed at %s", at.Format("15:04:05.000"))
	}
	for _, o := range l.handed[ref] {
		first, second := o, h
		if h.plan.Before(o.plan) {
			first, second = h, o
		}
		if second.plan.Before(first.until) {
			if rel, ok := l.release[simHoldKey{first.gw, first.session, ref}]; !ok || rel.After(second.plan) {
				bad("%s session %d held it from %s until %s", o.gw, o.session, o.plan.Format("15:04:05.000"), o.until.Format("15:04:05.000"))
			}
		}
		if o.plan.Before(h.plan) && h.deliv <= o.deliv {
			bad("delivery %d was handed to %s session %d planned at %s", o.deliv, o.gw, o.session, o.plan.Format("15:04:05.000"))
		}
	}
	l.handed[ref] = append(l.handed[ref], h)
	l.held = append(l.held, simHeld{gw: g.name, session: session, ref: ref})
}

// ackConfirmed records an acknowledgement a worker was answered.
func (m *sim) ackConfirmed(ref topicstore.MsgRef) {
	l := &m.w.sh
	l.acks++
	if _, ok := l.acked[ref]; !ok {
		l.acked[ref] = m.now
	}
}

// drop forgets that a worker holds ref.
func (l *simLedger) drop(gw string, session uint32, ref topicstore.MsgRef) {
	for i, h := range l.held {
		if h.gw == gw && h.session == session && h.ref == ref {
			l.held = append(l.held[:i], l.held[i+1:]...)
			return
		}
	}
}

// settleShared records the outcome of an acknowledgement in a commit.
func (m *sim) settleShared(g *simGW, r *simReq) {
	if r.kind != "ack-commit" {
		return
	}
	for _, ref := range r.refs {
		m.w.sh.pending[simHoldKey{g.name, r.session, ref}]--
		if r.outcome != simAcked {
			m.w.sh.uncertain[simHoldKey{g.name, r.session, ref}] = true
		}
		if r.outcome == simAcked {
			m.ackConfirmed(ref)
		}
		m.w.sh.drop(g.name, r.session, ref)
	}
}

// verifyShared checks that every confirmed acknowledgement is finished in
// the fold v of the whole stream.
func (m *sim) verifyShared(v *Store) {
	t, _, c, err := v.shc.Lookup(v.fold, "t", simShared)
	if err != nil {
		m.fail(fmt.Errorf("shared consumer: %w", err))
		return
	}
	for ref := range m.w.sh.acked {
		st, start := plan.SharedState(t, simShared, c, ref.Partition)
		if ref.Offset < start {
			continue
		}
		finished := false
		if st != nil {
			for _, d := range st.Ents {
				if d.Off == ref.Offset {
					finished = d.State == sharedcore.Acked || d.State == sharedcore.Archived
				}
			}
		}
		if !finished {
			m.fail(fmt.Errorf("shared consumer: %d/%d was acknowledged and is not finished (start %d)", ref.Partition, ref.Offset, start))
		}
	}
}
