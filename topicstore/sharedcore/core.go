package sharedcore

import (
	"slices"
	"time"

	"topicgate/topicstore"
)

// Besides the effects a step returns, the core records in Freed that a
// step may have made a message available to a waiting reader (a lock
// released or expired, a message handed back or disposed back to the
// queue, a keep_messages_order group finished with); the backend wakes the
// consumer's waiters then. NextReady tells a waiter when a message becomes
// available without any event.

// State is a message's state in a window.
type State uint8

// Per-message states. The values are persisted by backends: never
// renumber them.
const (
	Avail    State = iota // may be handed out (once ready)
	Acquired              // locked by a holder until a deadline
	Pending               // held for a commit (acks in a transaction) or a dead-letter move
	Acked                 // finished: acknowledged
	Archived              // finished: rejected or out of attempts
)

// DefaultWindow is the default per-partition acquisition window: at most
// this many offsets from the first unfinished one are considered.
const DefaultWindow = 1000

// Holder names a lock holder: a session (a connection's process id) of
// one gateway. Backends with one process leave Gateway zero; a cluster
// backend sets it to an id unique among its gateways, so that sessions of
// two gateways with the same number never share locks. The zero Holder
// holds nothing.
type Holder struct {
	Gateway uint64
	Session uint32
}

// Entry is one message of a partition's window.
type Entry struct {
	State      State
	Expired    bool   // ExpHolder's lock expired (reported as OutcomeExpired)
	Stored     bool   // the backend's own mark: a per-message record of the entry is persisted
	Deliveries int32  // times handed out (a backend makes the count durable before a delivery is shown)
	Holder     Holder // holder while acquired/pending
	ExpHolder  Holder
	Deadline   int64 // lock deadline, unix ns
	Written    int64 // written_at, unix ns
	Delay      int64 // the message's own delay, ns
	Group      string
}

// Finished reports whether e is acknowledged or archived.
func (e *Entry) Finished() bool { return e.State >= Acked }

// Part is one partition's window: Ents[i] is offset Start+i. Every offset
// below Start is finished (or deleted by retention).
type Part struct {
	Start int64
	Ents  []Entry
	// The backend's bookkeeping of persisted per-message records (unused
	// by a backend that persists whole windows): Done holds records read
	// at load beyond the loaded window, Persisted the start as stored,
	// Stale the offsets of stored records below Start, to delete, and
	// Cleaned the offset below which the backend deleted every record.
	Done      map[int64]Disk
	Persisted int64
	Stale     []int64
	Cleaned   int64
	// base is the array Ents was last placed in by Append, from its first
	// element: Advance only reslices Ents from the front, so Append finds
	// the room Advance freed there and moves the window back into it
	// instead of growing a new array.
	base []Entry
}

// Disk is a per-message record as a backend read it: a finished state
// (Acked, Archived) or, with state Avail, a delivery count.
type Disk struct {
	State State
	Deliv int32
}

// At returns the entry of offset off, nil if off is not in the window.
func (p *Part) At(off int64) *Entry {
	if off < p.Start || off >= p.Start+int64(len(p.Ents)) {
		return nil
	}
	return &p.Ents[off-p.Start]
}

// Append adds e at the window's end (offset LoadedEnd). A window slides
// along its partition without allocating: once Ents reaches the end of
// its array while at most half of the array is in use, its entries move
// back to the array's front (each move paid for by an entry Advance
// dropped since), and only a window that outgrew half its array grows a
// new one.
func (p *Part) Append(e Entry) {
	if len(p.Ents) == cap(p.Ents) && len(p.Ents) <= cap(p.base)/2 && p.inBase() {
		arr := p.base[:cap(p.base)]
		n := copy(arr, p.Ents)
		clear(arr[n:]) // the moved and dropped entries' strings
		p.Ents = arr[:n]
	}
	p.Ents = append(p.Ents, e)
	if cap(p.Ents) > cap(p.base) {
		p.base = p.Ents[:0] // a new array
	}
}

// inBase reports whether Ents lies in base (an embedder may have set Ents
// to an array of its own): an empty Ents trivially does, as it holds
// nothing to move.
func (p *Part) inBase() bool {
	if cap(p.Ents) == 0 {
		return true
	}
	return &p.Ents[:cap(p.Ents)][cap(p.Ents)-1] == &p.base[:cap(p.base)][cap(p.base)-1]
}

// LoadedEnd is the first offset not in the window yet.
func (p *Part) LoadedEnd() int64 { return p.Start + int64(len(p.Ents)) }

// Advance drops finished entries from the window's front.
func (p *Part) Advance() {
	i := 0
	for i < len(p.Ents) && p.Ents[i].Finished() {
		if p.Ents[i].Stored {
			p.Stale = append(p.Stale, p.Start+int64(i))
		}
		i++
	}
	if i > 0 {
		p.Ents = p.Ents[i:]
		p.Start += int64(i)
	}
}

// DropBelow forgets offsets below off (retention deleted them).
func (p *Part) DropBelow(off int64) {
	if off <= p.Start {
		return
	}
	n := min(off-p.Start, int64(len(p.Ents)))
	for i := range p.Ents[:n] {
		if p.Ents[i].Stored {
			p.Stale = append(p.Stale, p.Start+int64(i))
		}
	}
	p.Ents = p.Ents[n:]
	p.Start = off
	for o := range p.Done {
		if o < off {
			p.Stale = append(p.Stale, o)
			delete(p.Done, o)
		}
	}
}

// Config is the part of a consumer's config the core uses.
type Config struct {
	Timeout     time.Duration
	RecvDelay   int64
	MaxAttempts int32
	Policy      string // "", "none", "delete", "move"
	KeepOrder   bool
}

// NewConfig takes the core's config from a consumer's.
func NewConfig(c *topicstore.ConsumerConfig) Config {
	to := c.ProcessingTimeout
	if to <= 0 {
		to = topicstore.DefaultProcessingTimeout
	}
	return Config{Timeout: to, RecvDelay: int64(c.ReceiveMessageDelay), MaxAttempts: int32(c.MaxProcessingAttempts),
		Policy: c.DeadLetterPolicy, KeepOrder: c.KeepMessagesOrder}
}

// Ref is a message the core wants the backend to act on.
type Ref struct {
	Part  int32
	Off   int64
	State State // Acked / Archived: persist it; Pending: move it to the DLQ; Avail: a delivery count
	Deliv int32
}

// Effects collects the I/O a core step implies.
type Effects struct {
	Finished []Ref // persist before answering
	Counts   []Ref // delivery counts to persist (before the deliveries are shown)
	Moves    []Ref // dead-letter moves to perform (entries are Pending)
}

// Core is one (topic, shared consumer)'s state.
type Core struct {
	Cfg         Config
	Window      int
	Parts       []*Part
	RR          int   // partition the next Pick starts with
	MinDeadline int64 // earliest lock deadline, 0 = no locks (may be stale-early: Expire recomputes it)
	Freed       bool  // a step may have made a message available: wake the waiters
	Tree        Tree  // the split tree, for keep_messages_order (order.go)

	// Pick's scratch, kept between steps so that a step allocates only
	// what it returns: the candidates of all partitions, and each
	// partition's slice of them.
	scratch []int64
	cands   [][]int64
}

// Ready is when e may be handed out: its written_at plus the longer of its
// own delay and the consumer's receive delay.
func (c *Core) Ready(e *Entry) int64 { return e.Written + max(e.Delay, c.Cfg.RecvDelay) }

// Fail applies a failed attempt (release, lock expiry) to an entry: back to
// the queue, or, once MaxAttempts deliveries failed, the dead-letter
// policy.
func (c *Core) Fail(part int32, off int64, e *Entry, eff *Effects) {
	e.Holder, e.Deadline = Holder{}, 0
	if c.Cfg.MaxAttempts <= 0 || e.Deliveries < c.Cfg.MaxAttempts {
		e.State = Avail
		c.Freed = true
		return
	}
	c.Dispose(part, off, e, eff)
}

// Dispose archives e, or starts its move to the dead-letter queue, or
// (policy none) returns it to the queue.
func (c *Core) Dispose(part int32, off int64, e *Entry, eff *Effects) {
	switch c.Cfg.Policy {
	case "delete":
		e.State = Archived
		c.FinishedGroup(e)
		eff.Finished = append(eff.Finished, Ref{Part: part, Off: off, State: Archived})
	case "move":
		e.State = Pending
		eff.Moves = append(eff.Moves, Ref{Part: part, Off: off, State: Pending, Deliv: e.Deliveries})
	default:
		e.State = Avail
		c.Freed = true
	}
}

// Expire returns every lock whose deadline passed to the queue (or applies
// the dead-letter policy).
func (c *Core) Expire(now int64, eff *Effects) {
	if c.MinDeadline == 0 || now < c.MinDeadline {
		return
	}
	var next int64
	for pi, p := range c.Parts {
		for i := range p.Ents {
			e := &p.Ents[i]
			if e.State != Acquired {
				continue
			}
			if e.Deadline > now {
				if next == 0 || e.Deadline < next {
					next = e.Deadline
				}
				continue
			}
			e.Expired, e.ExpHolder = true, e.Holder
			c.Fail(int32(pi), p.Start+int64(i), e, eff)
		}
	}
	c.MinDeadline = next
}

// NextReady is the earliest time after now at which a message of the
// window becomes available without any event: a lock deadline or the end
// of a delay (0 if none). A waiting reader sleeps until then at most.
func (c *Core) NextReady(now int64) int64 {
	var next int64
	note := func(t int64) {
		if t > now && (next == 0 || t < next) {
			next = t
		}
	}
	for _, p := range c.Parts {
		for i := range p.Ents {
			switch e := &p.Ents[i]; e.State {
			case Acquired:
				note(e.Deadline)
			case Avail:
				note(c.Ready(e))
			}
		}
	}
	return next
}

// Loaded applies what a restart did to a message loaded with a durable
// delivery count: its lock was released, a failed attempt, so once
// MaxAttempts deliveries are used up the dead-letter policy applies now (a
// message delivered max times is never handed out again because the
// server restarted meanwhile).
func (c *Core) Loaded(part int32, off int64, e *Entry, eff *Effects) {
	if e.State == Avail && c.Cfg.MaxAttempts > 0 && e.Deliveries >= c.Cfg.MaxAttempts {
		c.Dispose(part, off, e, eff)
	}
}

// NoteDeadline records a lock deadline for Expire.
func (c *Core) NoteDeadline(d int64) {
	if c.MinDeadline == 0 || d < c.MinDeadline {
		c.MinDeadline = d
	}
}

// candidates returns the offsets of p that may be handed out now, in the
// order they should be: with keep_messages_order the first unfinished
// message of each group not held elsewhere (a delayed or held message holds
// its group back; so does an unfinished message of the group in a parent
// partition, see order.go, and with allHeld every group is held);
// otherwise every ready message, round robin over groups.
//
// The candidates are appended to buf; it returns buf with them and the
// candidates alone (buf's tail).
func (c *Core) candidates(buf []int64, p *Part, now int64, held map[string]bool, allHeld bool, limit int) (_, cands []int64) {
	from := len(buf)
	out := buf
	var seen map[string]int // keep order: groups met; else: messages per group so far
	var rank map[int64]int
	first := 0 // candidates of rank 0 (first of their group, or ungrouped)
	for i := range p.Ents {
		if first >= limit {
			break // the sorted prefix can only hold rank-0 candidates met so far
		}
		e := &p.Ents[i]
		if e.Finished() {
			continue
		}
		if c.Cfg.KeepOrder && e.Group != "" {
			if allHeld || held[e.Group] || seen[e.Group] > 0 {
				continue
			}
			if seen == nil {
				seen = map[string]int{}
			}
			seen[e.Group] = 1
		}
		if e.State != Avail || c.Ready(e) > now {
			continue
		}
		off := p.Start + int64(i)
		out = append(out, off)
		if c.Cfg.KeepOrder || e.Group == "" {
			first++
			continue
		}
		// Fair across groups: the first message of each group, then the
		// second of each, ... (ungrouped messages count as their own group).
		if seen == nil {
			seen, rank = map[string]int{}, map[int64]int{}
		}
		if rank[off] = seen[e.Group]; rank[off] == 0 {
			first++
		}
		seen[e.Group]++
	}
	if rank != nil {
		slices.SortStableFunc(out[from:], func(a, b int64) int { return rank[a] - rank[b] })
	}
	if len(out)-from > limit {
		out = out[:from+limit]
	}
	return out, out[from:]
}

// Pick hands out up to max available messages to h, locked until
// deadline, fair across partitions (round robin, one message per partition
// per round, starting with a rotating partition). It returns them in pick
// order.
func (c *Core) Pick(now int64, max int, h Holder, deadline int64) []topicstore.MsgRef {
	n := len(c.Parts)
	if n == 0 || max <= 0 {
		return nil
	}
	var held map[string]bool
	if c.Cfg.KeepOrder {
		held = map[string]bool{}
		for _, p := range c.Parts {
			for i := range p.Ents {
				if e := &p.Ents[i]; (e.State == Acquired || e.State == Pending) && e.Group != "" {
					held[e.Group] = true
				}
			}
		}
	}
	if cap(c.cands) < n {
		c.cands = make([][]int64, n)
	}
	cands, buf := c.cands[:n], c.scratch[:0]
	for k := 0; k < n; k++ {
		pi := (c.RR + k) % n
		ph, all := c.orderHeld(pi, held)
		buf, cands[pi] = c.candidates(buf, c.Parts[pi], now, ph, all, max)
	}
	c.scratch = buf[:0]
	var out []topicstore.MsgRef
	if len(buf) > 0 {
		out = make([]topicstore.MsgRef, 0, min(max, len(buf)))
	}
	for len(out) < max {
		progress := false
		for k := 0; k < n && len(out) < max; k++ {
			pi := (c.RR + k) % n
			p := c.Parts[pi]
			for len(cands[pi]) > 0 {
				off := cands[pi][0]
				cands[pi] = cands[pi][1:]
				e := p.At(off)
				if c.Cfg.KeepOrder && e.Group != "" {
					if held[e.Group] {
						continue // taken from another partition this round
					}
					held[e.Group] = true
				}
				e.State, e.Holder, e.Deadline = Acquired, h, deadline
				if e.ExpHolder == h {
					e.Expired = false
				}
				e.Deliveries++
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
		c.NoteDeadline(deadline)
	}
	c.RR = (c.RR + 1) % n
	return out
}

// Unpick undoes Pick for one message (not returned after all).
func (c *Core) Unpick(r topicstore.MsgRef) {
	if e := c.Parts[r.Partition].At(r.Offset); e != nil && e.State == Acquired {
		e.State, e.Holder, e.Deadline = Avail, Holder{}, 0
		e.Deliveries--
		c.Freed = true
	}
}

// Unacquire hands back a message h acquired and never delivered: it is
// available again and the delivery is not counted. It reports whether it
// did (the lowered count is then to be persisted).
func (c *Core) Unacquire(h Holder, r topicstore.MsgRef) bool {
	if r.Partition < 0 || int(r.Partition) >= len(c.Parts) {
		return false
	}
	if e := c.Parts[r.Partition].At(r.Offset); e != nil && e.State == Acquired && e.Holder == h {
		c.Unpick(r)
		return true
	}
	return false
}

// Act applies a holder's action to one message (ref already checked to lie
// in the partition). Finished or dead-lettered messages land in eff.
func (c *Core) Act(now int64, h Holder, a topicstore.SharedAction, r topicstore.MsgRef, until time.Time, eff *Effects) topicstore.SharedOutcome {
	p := c.Parts[r.Partition]
	if r.Offset < p.Start {
		return topicstore.OutcomeFinished
	}
	e := p.At(r.Offset)
	if e == nil {
		return topicstore.OutcomeNotHeld // never loaded into the window: never handed out
	}
	if e.Finished() {
		return topicstore.OutcomeFinished
	}
	if e.State != Acquired || e.Holder != h {
		if e.Expired && e.ExpHolder == h {
			return topicstore.OutcomeExpired
		}
		return topicstore.OutcomeNotHeld
	}
	if e.Deadline <= now { // Expire ran first, so this is not reached; kept for safety
		return topicstore.OutcomeExpired
	}
	switch a {
	case topicstore.ActionAck:
		e.State, e.Holder, e.Deadline = Acked, Holder{}, 0
		c.FinishedGroup(e)
		eff.Finished = append(eff.Finished, Ref{Part: r.Partition, Off: r.Offset, State: Acked})
	case topicstore.ActionRelease:
		c.Fail(r.Partition, r.Offset, e, eff)
	case topicstore.ActionReject:
		e.Holder, e.Deadline = Holder{}, 0
		if c.Cfg.Policy == "move" {
			c.Dispose(r.Partition, r.Offset, e, eff)
		} else {
			e.State = Archived
			c.FinishedGroup(e)
			eff.Finished = append(eff.Finished, Ref{Part: r.Partition, Off: r.Offset, State: Archived})
		}
	case topicstore.ActionExtend:
		if until.UnixNano() < e.Deadline {
			c.Freed = true // an earlier deadline: waiters re-arm their timers
		}
		e.Deadline = until.UnixNano()
		c.NoteDeadline(e.Deadline)
	default:
		return topicstore.OutcomeUnknown
	}
	return topicstore.OutcomeDone
}

// Held reports whether h holds r under a lock unexpired at now (what an
// acknowledgement in a commit requires).
func (c *Core) Held(now int64, h Holder, r topicstore.MsgRef) bool {
	if r.Partition < 0 || int(r.Partition) >= len(c.Parts) {
		return false
	}
	e := c.Parts[r.Partition].At(r.Offset)
	return e != nil && e.State == Acquired && e.Holder == h && e.Deadline > now
}

// FinishedGroup notes that finishing e may let its keep_messages_order
// group move on.
func (c *Core) FinishedGroup(e *Entry) {
	if c.Cfg.KeepOrder && e.Group != "" {
		c.Freed = true
	}
}

// ReleaseSession releases h's locks (all, or those of refs) as failed
// attempts.
func (c *Core) ReleaseSession(h Holder, refs []topicstore.MsgRef, eff *Effects) {
	one := func(pi int32, off int64, e *Entry) {
		if e != nil && e.State == Acquired && e.Holder == h {
			c.Fail(pi, off, e, eff)
		}
	}
	if refs != nil {
		for _, r := range refs {
			if r.Partition >= 0 && int(r.Partition) < len(c.Parts) {
				one(r.Partition, r.Offset, c.Parts[r.Partition].At(r.Offset))
			}
		}
		return
	}
	for pi, p := range c.Parts {
		for i := range p.Ents {
			one(int32(pi), p.Start+int64(i), &p.Ents[i])
		}
	}
}

// Stats summarizes partition pi's window (after Expire).
func (c *Core) Stats(pi int, now int64) topicstore.SharedPartitionStats {
	p := c.Parts[pi]
	st := topicstore.SharedPartitionStats{Partition: int32(pi), StartOffset: p.Start}
	for i := range p.Ents {
		e := &p.Ents[i]
		switch {
		case e.State == Archived:
			st.Archived++
		case e.State == Acquired || e.State == Pending:
			st.Acquired++
		case e.State == Avail && c.Ready(e) > now:
			st.Delayed++
		case e.State == Avail:
			st.Available++
		}
		if e.Finished() {
			continue
		}
		if st.OldestUnacked.IsZero() {
			st.OldestUnacked = time.Unix(0, e.Written).UTC()
		}
		if st.Deliveries == nil {
			st.Deliveries = map[int32]int64{}
		}
		st.Deliveries[e.Deliveries]++
	}
	return st
}

// Clone returns a deep copy of c's windows (Done and Stale are not
// copied: they are a backend's bookkeeping), for a backend that tries a
// step and may have to take it back.
func (c *Core) Clone() *Core {
	out := *c
	out.scratch, out.cands = nil, nil // Pick's, not to be shared
	out.Parts = make([]*Part, len(c.Parts))
	for i, p := range c.Parts {
		out.Parts[i] = &Part{Start: p.Start, Ents: slices.Clone(p.Ents), Persisted: p.Persisted}
	}
	return &out
}
