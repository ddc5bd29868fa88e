package pebblestore

import (
	"slices"
	"time"

	"topicgate/topicstore"
)

// Shared consumers: the deterministic core. Everything here is a pure
// function of the in-memory state and the time it is given; the I/O (window
// fills from the log, persistence of finished states, dead-letter moves)
// lives in shared.go and shared_ops.go. See shared.go for the model.
//
// Besides the effects a step returns, the core records in freed that a
// step may have made a message available to a waiting reader (a lock
// released or expired, a message handed back or disposed back to the
// queue, a keep_messages_order group finished with, the window moved on
// while full); the I/O layer wakes the consumer's waiters then. nextReady
// tells a waiter when a message becomes available without any event.

// Per-message states.
const (
	shAvail    uint8 = iota // may be handed out (once ready)
	shAcquired              // locked by session until deadline
	shPending               // held for a commit (acks in a transaction) or a dead-letter move
	shAcked                 // finished: acknowledged
	shArchived              // finished: rejected or out of attempts
)

// DefaultSharedWindow is the default per-partition acquisition window: at
// most this many offsets from the first unfinished one are considered.
const DefaultSharedWindow = 1000

// shEntry is one message of a partition's window.
type shEntry struct {
	state      uint8
	expired    bool   // expSession's lock expired (reported as OutcomeExpired)
	stored     bool   // a record (finished, or the delivery count) exists on disk: delete it when the start passes it
	deliveries int32  // times handed out, durable (a delivery-count record is synced before a delivery is shown)
	session    uint32 // holder while acquired/pending
	expSession uint32
	deadline   int64 // lock deadline, unix ns
	written    int64 // written_at, unix ns
	delay      int64 // the message's own delay, ns
	group      string
}

func (e *shEntry) finished() bool { return e.state >= shAcked }

// shPart is one partition's window: ents[i] is offset start+i. Every offset
// below start is finished (or deleted by retention).
type shPart struct {
	start     int64
	ents      []shEntry
	done      map[int64]shDisk // records read at load beyond the loaded window
	persisted int64            // start as stored on disk
	stale     []int64          // finished records on disk below start: to delete
}

// shDisk is a per-message record as read from disk: a finished state
// (shAcked, shArchived) or, with state shAvail, a delivery count.
type shDisk struct {
	state uint8
	deliv int32
}

func (p *shPart) at(off int64) *shEntry {
	if off < p.start || off >= p.start+int64(len(p.ents)) {
		return nil
	}
	return &p.ents[off-p.start]
}

// loadedEnd is the first offset not in the window yet.
func (p *shPart) loadedEnd() int64 { return p.start + int64(len(p.ents)) }

// advance drops finished entries from the window's front.
func (p *shPart) advance() {
	i := 0
	for i < len(p.ents) && p.ents[i].finished() {
		if p.ents[i].stored {
			p.stale = append(p.stale, p.start+int64(i))
		}
		i++
	}
	if i > 0 {
		p.ents = p.ents[i:]
		p.start += int64(i)
	}
}

// dropBelow forgets offsets below off (retention deleted them).
func (p *shPart) dropBelow(off int64) {
	if off <= p.start {
		return
	}
	n := min(off-p.start, int64(len(p.ents)))
	for i := range p.ents[:n] {
		if p.ents[i].stored {
			p.stale = append(p.stale, p.start+int64(i))
		}
	}
	p.ents = p.ents[n:]
	p.start = off
	for o := range p.done {
		if o < off {
			p.stale = append(p.stale, o)
			delete(p.done, o)
		}
	}
}

// shConfig is the part of a consumer's config the core uses.
type shConfig struct {
	timeout     time.Duration
	recvDelay   int64
	maxAttempts int32
	policy      string // "", "none", "delete", "move"
	keepOrder   bool
}

func newShConfig(c *topicstore.ConsumerConfig) shConfig {
	to := c.ProcessingTimeout
	if to <= 0 {
		to = topicstore.DefaultProcessingTimeout
	}
	return shConfig{timeout: to, recvDelay: int64(c.ReceiveMessageDelay), maxAttempts: int32(c.MaxProcessingAttempts),
		policy: c.DeadLetterPolicy, keepOrder: c.KeepMessagesOrder}
}

// shRef is a message the core wants the I/O layer to act on.
type shRef struct {
	part  int32
	off   int64
	state uint8 // shAcked / shArchived: persist it; shPending: move it to the DLQ; shAvail: a delivery count
	deliv int32
}

// shEffects collects the I/O a core step implies.
type shEffects struct {
	finished []shRef // persist (synced) before answering
	counts   []shRef // delivery counts to persist (synced before the deliveries are shown)
	moves    []shRef // dead-letter moves to perform (entries are shPending)
}

// shCore is one (topic, shared consumer)'s state.
type shCore struct {
	cfg         shConfig
	window      int
	parts       []*shPart
	rr          int    // partition the next Acquire starts with
	minDeadline int64  // earliest lock deadline, 0 = no locks (may be stale-early: expire recomputes it)
	freed       bool   // a step may have made a message available: wake the waiters (see the top of this file)
	tree        shTree // the split tree, for keep_messages_order (shared_order.go)
}

func (c *shCore) ready(e *shEntry) int64 { return e.written + max(e.delay, c.cfg.recvDelay) }

// fail applies a failed attempt (release, lock expiry) to an entry: back to
// the queue, or, once MaxProcessingAttempts deliveries failed, the
// dead-letter policy.
func (c *shCore) fail(part int32, off int64, e *shEntry, eff *shEffects) {
	e.session, e.deadline = 0, 0
	if c.cfg.maxAttempts <= 0 || e.deliveries < c.cfg.maxAttempts {
		e.state = shAvail
		c.freed = true
		return
	}
	c.dispose(part, off, e, eff)
}

// dispose archives e, or starts its move to the dead-letter queue, or (policy
// none) returns it to the queue.
func (c *shCore) dispose(part int32, off int64, e *shEntry, eff *shEffects) {
	switch c.cfg.policy {
	case "delete":
		e.state = shArchived
		c.finishedGroup(e)
		eff.finished = append(eff.finished, shRef{part: part, off: off, state: shArchived})
	case "move":
		e.state = shPending
		eff.moves = append(eff.moves, shRef{part: part, off: off, state: shPending, deliv: e.deliveries})
	default:
		e.state = shAvail
		c.freed = true
	}
}

// expire returns every lock whose deadline passed to the queue (or applies
// the dead-letter policy).
func (c *shCore) expire(now int64, eff *shEffects) {
	if c.minDeadline == 0 || now < c.minDeadline {
		return
	}
	var next int64
	for pi, p := range c.parts {
		for i := range p.ents {
			e := &p.ents[i]
			if e.state != shAcquired {
				continue
			}
			if e.deadline > now {
				if next == 0 || e.deadline < next {
					next = e.deadline
				}
				continue
			}
			e.expired, e.expSession = true, e.session
			c.fail(int32(pi), p.start+int64(i), e, eff)
		}
	}
	c.minDeadline = next
}

// nextReady is the earliest time after now at which a message of the
// window becomes available without any event: a lock deadline or the end
// of a delay (0 if none). A waiting reader sleeps until then at most.
func (c *shCore) nextReady(now int64) int64 {
	var next int64
	note := func(t int64) {
		if t > now && (next == 0 || t < next) {
			next = t
		}
	}
	for _, p := range c.parts {
		for i := range p.ents {
			switch e := &p.ents[i]; e.state {
			case shAcquired:
				note(e.deadline)
			case shAvail:
				note(c.ready(e))
			}
		}
	}
	return next
}

// loaded applies what a restart did to a message loaded with a durable
// delivery count: its lock was released, a failed attempt, so once
// MaxProcessingAttempts deliveries are used up the dead-letter policy
// applies now (a message delivered max times is never handed out again
// because the server restarted meanwhile).
func (c *shCore) loaded(part int32, off int64, e *shEntry, eff *shEffects) {
	if e.state == shAvail && c.cfg.maxAttempts > 0 && e.deliveries >= c.cfg.maxAttempts {
		c.dispose(part, off, e, eff)
	}
}

func (c *shCore) noteDeadline(d int64) {
	if c.minDeadline == 0 || d < c.minDeadline {
		c.minDeadline = d
	}
}

// candidates returns the offsets of p that may be handed out now, in the
// order they should be: with keep_messages_order the first unfinished
// message of each group not held elsewhere (a delayed or held message holds
// its group back; so does an unfinished message of the group in a parent
// partition, see shared_order.go, and with allHeld every group is held);
// otherwise every ready message, round robin over groups.
func (c *shCore) candidates(p *shPart, now int64, held map[string]bool, allHeld bool, limit int) []int64 {
	var out []int64
	var seen map[string]int // keep order: groups met; else: messages per group so far
	var rank map[int64]int
	first := 0 // candidates of rank 0 (first of their group, or ungrouped)
	for i := range p.ents {
		if first >= limit {
			break // the sorted prefix can only hold rank-0 candidates met so far
		}
		e := &p.ents[i]
		if e.finished() {
			continue
		}
		if c.cfg.keepOrder && e.group != "" {
			if allHeld || held[e.group] || seen[e.group] > 0 {
				continue
			}
			if seen == nil {
				seen = map[string]int{}
			}
			seen[e.group] = 1
		}
		if e.state != shAvail || c.ready(e) > now {
			continue
		}
		off := p.start + int64(i)
		out = append(out, off)
		if c.cfg.keepOrder || e.group == "" {
			first++
			continue
		}
		// Fair across groups: the first message of each group, then the
		// second of each, ... (ungrouped messages count as their own group).
		if seen == nil {
			seen, rank = map[string]int{}, map[int64]int{}
		}
		if rank[off] = seen[e.group]; rank[off] == 0 {
			first++
		}
		seen[e.group]++
	}
	if rank != nil {
		slices.SortStableFunc(out, func(a, b int64) int { return rank[a] - rank[b] })
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// pick hands out up to max available messages to session, locked until
// deadline, fair across partitions (round robin, one message per partition
// per round, starting with a rotating partition). It returns them in pick
// order.
func (c *shCore) pick(now int64, max int, session uint32, deadline int64) []topicstore.MsgRef {
	n := len(c.parts)
	if n == 0 || max <= 0 {
		return nil
	}
	var held map[string]bool
	if c.cfg.keepOrder {
		held = map[string]bool{}
		for _, p := range c.parts {
			for i := range p.ents {
				if e := &p.ents[i]; (e.state == shAcquired || e.state == shPending) && e.group != "" {
					held[e.group] = true
				}
			}
		}
	}
	cands := make([][]int64, n)
	for k := 0; k < n; k++ {
		pi := (c.rr + k) % n
		ph, all := c.orderHeld(pi, held)
		cands[pi] = c.candidates(c.parts[pi], now, ph, all, max)
	}
	var out []topicstore.MsgRef
	for len(out) < max {
		progress := false
		for k := 0; k < n && len(out) < max; k++ {
			pi := (c.rr + k) % n
			p := c.parts[pi]
			for len(cands[pi]) > 0 {
				off := cands[pi][0]
				cands[pi] = cands[pi][1:]
				e := p.at(off)
				if c.cfg.keepOrder && e.group != "" {
					if held[e.group] {
						continue // taken from another partition this round
					}
					held[e.group] = true
				}
				e.state, e.session, e.deadline = shAcquired, session, deadline
				if e.expSession == session {
					e.expired = false
				}
				e.deliveries++
				out = append(out, topicstore.MsgRef{Partition: int32(pi), Offset: off})
				progress = true
				break
			}
		}
		if !progress {
			break
		}
	}
	if len(out) > 0 {
		c.noteDeadline(deadline)
	}
	c.rr = (c.rr + 1) % n
	return out
}

// unpick undoes pick for one message (not returned after all).
func (c *shCore) unpick(r topicstore.MsgRef) {
	if e := c.parts[r.Partition].at(r.Offset); e != nil && e.state == shAcquired {
		e.state, e.session, e.deadline = shAvail, 0, 0
		e.deliveries--
		c.freed = true
	}
}

// unacquire hands back a message session acquired and never delivered: it
// is available again and the delivery is not counted. It reports whether
// it did (the lowered count is then to be persisted).
func (c *shCore) unacquire(session uint32, r topicstore.MsgRef) bool {
	if r.Partition < 0 || int(r.Partition) >= len(c.parts) {
		return false
	}
	if e := c.parts[r.Partition].at(r.Offset); e != nil && e.state == shAcquired && e.session == session {
		c.unpick(r)
		return true
	}
	return false
}

// act applies a session's action to one message (ref already checked to
// lie in the partition). Finished or dead-lettered messages land in eff.
func (c *shCore) act(now int64, session uint32, a topicstore.SharedAction, r topicstore.MsgRef, until time.Time, eff *shEffects) topicstore.SharedOutcome {
	p := c.parts[r.Partition]
	if r.Offset < p.start {
		return topicstore.OutcomeFinished
	}
	e := p.at(r.Offset)
	if e == nil {
		return topicstore.OutcomeNotHeld // never loaded into the window: never handed out
	}
	if e.finished() {
		return topicstore.OutcomeFinished
	}
	if e.state != shAcquired || e.session != session {
		if e.expired && e.expSession == session {
			return topicstore.OutcomeExpired
		}
		return topicstore.OutcomeNotHeld
	}
	if e.deadline <= now { // expire() ran first, so this is not reached; kept for safety
		return topicstore.OutcomeExpired
	}
	switch a {
	case topicstore.ActionAck:
		e.state, e.session, e.deadline = shAcked, 0, 0
		c.finishedGroup(e)
		eff.finished = append(eff.finished, shRef{part: r.Partition, off: r.Offset, state: shAcked})
	case topicstore.ActionRelease:
		c.fail(r.Partition, r.Offset, e, eff)
	case topicstore.ActionReject:
		e.session, e.deadline = 0, 0
		if c.cfg.policy == "move" {
			c.dispose(r.Partition, r.Offset, e, eff)
		} else {
			e.state = shArchived
			c.finishedGroup(e)
			eff.finished = append(eff.finished, shRef{part: r.Partition, off: r.Offset, state: shArchived})
		}
	case topicstore.ActionExtend:
		if until.UnixNano() < e.deadline {
			c.freed = true // an earlier deadline: waiters re-arm their timers
		}
		e.deadline = until.UnixNano()
		c.noteDeadline(e.deadline)
	default:
		return topicstore.OutcomeUnknown
	}
	return topicstore.OutcomeDone
}

// finishedGroup notes that finishing e may let its keep_messages_order
// group move on.
func (c *shCore) finishedGroup(e *shEntry) {
	if c.cfg.keepOrder && e.group != "" {
		c.freed = true
	}
}

// releaseSession releases session's locks (all, or those of refs) as
// failed attempts.
func (c *shCore) releaseSession(session uint32, refs []topicstore.MsgRef, eff *shEffects) {
	one := func(pi int32, off int64, e *shEntry) {
		if e != nil && e.state == shAcquired && e.session == session {
			c.fail(pi, off, e, eff)
		}
	}
	if refs != nil {
		for _, r := range refs {
			if r.Partition >= 0 && int(r.Partition) < len(c.parts) {
				one(r.Partition, r.Offset, c.parts[r.Partition].at(r.Offset))
			}
		}
		return
	}
	for pi, p := range c.parts {
		for i := range p.ents {
			one(int32(pi), p.start+int64(i), &p.ents[i])
		}
	}
}

// stats summarizes partition pi's window (after expire).
func (c *shCore) stats(pi int, now int64) topicstore.SharedPartitionStats {
	p := c.parts[pi]
	st := topicstore.SharedPartitionStats{Partition: int32(pi), StartOffset: p.start}
	for i := range p.ents {
		e := &p.ents[i]
		switch {
		case e.state == shArchived:
			st.Archived++
		case e.state == shAcquired || e.state == shPending:
			st.Acquired++
		case e.state == shAvail && c.ready(e) > now:
			st.Delayed++
		case e.state == shAvail:
			st.Available++
		}
		if !e.finished() && st.OldestUnacked.IsZero() {
			st.OldestUnacked = time.Unix(0, e.written).UTC()
		}
	}
	return st
}
