package consume

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"topicgate/topicstore"
)

// DefaultReadSessionIdle is how long a read session keeps its partitions
// without reading before they are handed to the consumer's other sessions.
const DefaultReadSessionIdle = 60 * time.Second

// partPin is who pinned a partition and how many of its reads did.
type partPin struct {
	pid   uint32
	reads int
}

// groupKey names a consumer of a topic.
type groupKey struct{ topic, consumer string }

// Group is one consumer's read sessions and partition assignment. A
// session joins when it first reads as the consumer and leaves when its
// connection closes or it stays idle too long; every change rebalances
// (balance) at once, so a partition is held by one session at a time.
//
// The partitions balanced are the ones the consumer may read now
// (readable: a split's children only once their parent is finished, see
// order.go); a partition that becomes readable goes first to the session
// that held its parent (affinity). A partition its holder pins (an
// autocommit read in flight, or an open transaction that read it) does not
// move until the pin ends or the handoff grace passes (handoff.go).
type Group struct {
	mu       sync.Mutex
	sessions []uint32             // live sessions in join order
	lastRead map[uint32]time.Time // session -> last read
	owner    map[int32]uint32     // partition -> session
	changed  chan struct{}        // closed and replaced on every reassignment
	// pinned are the partitions whose owner has an autocommit read in
	// flight: its rows are on their way and its position commits after
	// them, so a rebalance leaves them where they are until unpin (else the
	// new owner would read the same messages from the old position).
	pinned map[int32]partPin
	// txHeld are the partitions read by their owner's open transaction:
	// they stay with it until the transaction ends (handoff.go).
	txHeld map[int32]txHold
	// waiting are the pinned partitions a rebalance wants to move: since
	// when (after the grace they move anyway) and to whom.
	waiting map[int32]heldMove
	// parents maps a split's child to its parent, for affinity.
	parents map[int32]int32
	// parts is the (sorted) partition list of the last reassignment, kept
	// for the reassignment unpin or a transaction's end runs when it held
	// a move back.
	parts    []int32
	heldBack bool
	clock    func() time.Time
	grace    time.Duration // how long a pin holds a move back (handoff.go)
	// cl divides the partitions among the gateways first when the store
	// is shared by several (cluster.go); nil on a store of one process.
	cl   *clusterGroup
	idle time.Duration // the last join's joinReq.idle
}

// Groups is the engine's registry of consumer groups, shared by its
// sessions' Readers.
type Groups struct {
	mu     sync.Mutex
	groups map[groupKey]*Group
	clock  func() time.Time
	grace  time.Duration // handoff grace (NewGroups, resolved)
	// co is the store as a GroupCoordinator (nil: the store is one
	// process's, and each group balances over its sessions alone).
	co topicstore.GroupCoordinator
}

// NewGroups returns the registry of the consumer groups reading st. clock
// is the engine's (nil: time.Now); grace is the handoff grace (0:
// DefaultHandoffGrace; negative: a pinned partition moves at once). On a
// store several gateways share (a topicstore.GroupCoordinator) each
// group's partitions are divided among the gateways first (cluster.go).
func NewGroups(st topicstore.Store, clock func() time.Time, grace time.Duration) *Groups {
	if clock == nil {
		clock = time.Now
	}
	if grace == 0 {
		grace = DefaultHandoffGrace
	}
	r := &Groups{clock: clock, grace: grace}
	r.co, _ = st.(topicstore.GroupCoordinator)
	return r
}

// Get returns the group of consumer of topic, made on first use.
func (r *Groups) Get(topic, consumer string) *Group {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		r.groups = map[groupKey]*Group{}
	}
	k := groupKey{topic, consumer}
	g, ok := r.groups[k]
	if !ok {
		g = &Group{lastRead: map[uint32]time.Time{}, owner: map[int32]uint32{}, changed: make(chan struct{}),
			clock: r.clock, grace: r.grace}
		if g.clock == nil {
			g.clock = time.Now
		}
		if r.co != nil {
			g.cl = &clusterGroup{co: r.co, topic: topic, consumer: consumer}
		}
		r.groups[k] = g
	}
	return g
}

// joinReq is one read's join: who reads, what it may read, and what it
// pins.
type joinReq struct {
	pid uint32
	// partitions are the readable ones, sorted (readable); parents maps
	// split children to their parents (nil: no splits).
	partitions []int32
	parents    map[int32]int32
	now        time.Time
	idle       time.Duration
	// pin: an autocommit read; the partitions returned stay with pid
	// across rebalances until unpin (the read settles) or the grace.
	pin bool
	// txID (nonzero): the read is in that open transaction of pid; the
	// partitions returned (those in only, when set) stay with pid until
	// releaseTx or the grace.
	txID uint64
	only map[int32]bool
}

// join registers r.pid as a reader (if it is not one yet), expires idle
// sessions, rebalances, and returns the partitions pid holds and a channel
// closed at the next reassignment.
func (g *Group) join(r joinReq) ([]int32, <-chan struct{}) {
	pid, partitions, now, idle := r.pid, r.partitions, r.now, r.idle
	g.mu.Lock()
	defer g.mu.Unlock()
	known := false
	for _, s := range g.sessions {
		known = known || s == pid
	}
	changed := !known
	if !known {
		g.sessions = append(g.sessions, pid)
	}
	g.lastRead[pid] = now
	g.idle = idle
	if g.expireIdle(now, pid) {
		changed = true
	}
	g.parents = r.parents
	if changed || !slices.Equal(g.parts, partitions) || g.graceOver(now) || (g.cl != nil && g.cl.stale(now)) {
		g.reassign(partitions)
	}
	var held []int32
	for p, s := range g.owner {
		if s == pid {
			held = append(held, p)
		}
	}
	sort.Slice(held, func(i, j int) bool { return held[i] < held[j] })
	if r.txID != 0 {
		if g.txHeld == nil {
			g.txHeld = map[int32]txHold{}
		}
		for _, p := range held {
			if r.only == nil || r.only[p] {
				g.txHeld[p] = txHold{pid: pid, txID: r.txID}
			}
		}
	}
	if r.pin {
		if g.pinned == nil {
			g.pinned = map[int32]partPin{}
		}
		for _, p := range held {
			g.pinned[p] = partPin{pid: pid, reads: g.pinned[p].reads + 1}
		}
	}
	return held, g.changed
}

// expireIdle drops the sessions but keep that have not read for g.idle
// (0: never) and reports whether it dropped any.
func (g *Group) expireIdle(now time.Time, keep uint32) bool {
	if g.idle <= 0 {
		return false
	}
	dropped := false
	live := g.sessions[:0]
	for _, s := range g.sessions {
		if s != keep && now.Sub(g.lastRead[s]) > g.idle {
			delete(g.lastRead, s)
			dropped = true
			continue
		}
		live = append(live, s)
	}
	g.sessions = live
	return dropped
}

// unpin ends one read of pid that pinned parts (join's held): once no read
// pins a partition it may move, and a rebalance that waited for it
// happens now.
func (g *Group) unpin(pid uint32, parts []int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	freed := false
	for _, p := range parts {
		pn, ok := g.pinned[p]
		if !ok || pn.pid != pid {
			continue
		}
		if pn.reads--; pn.reads > 0 {
			g.pinned[p] = pn
			continue
		}
		delete(g.pinned, p)
		freed = true
	}
	if freed && g.heldBack {
		g.reassign(g.parts)
	}
}

// leave removes pid and rebalances over the partitions of the last
// reassignment (the next join notices any change of the topic).
func (g *Group) leave(pid uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, pn := range g.pinned { // also of a session that idled out before
		if pn.pid == pid {
			delete(g.pinned, p)
		}
	}
	for p, h := range g.txHeld {
		if h.pid == pid {
			delete(g.txHeld, p)
		}
	}
	for i, s := range g.sessions {
		if s == pid {
			g.sessions = append(g.sessions[:i:i], g.sessions[i+1:]...)
			delete(g.lastRead, pid)
			g.reassign(g.parts)
			return
		}
	}
}

// holds reports whether pid holds partition p.
func (g *Group) holds(pid uint32, p int32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.owner[p] == pid && len(g.sessions) > 0
}

// Holder returns the session holding p (0 if none).
func (g *Group) Holder(p int32) uint32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.owner[p]
}

// Holding is what one session holds of one consumer (sys.sessions).
type Holding struct {
	PID             uint32
	Topic, Consumer string
	Partitions      []int32 // sorted
}

// Held lists what every session holds, per group (in no order).
func (r *Groups) Held() []Holding {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Holding
	for k, g := range r.groups {
		g.mu.Lock()
		by := map[uint32][]int32{}
		for p, pid := range g.owner {
			by[pid] = append(by[pid], p)
		}
		g.mu.Unlock()
		for pid, ps := range by {
			slices.Sort(ps)
			out = append(out, Holding{PID: pid, Topic: k.topic, Consumer: k.consumer, Partitions: ps})
		}
	}
	return out
}

// reassign rebalances over partitions (sorted). A pinned partition the
// balance would move stays with its holder until its pin ends or it has
// waited the handoff grace; a partition new to the assignment goes to the
// holder of its nearest ancestor if that session is live (affinity). On a
// shared store the balance is over this gateway's share (cluster.go), and
// a partition that leaves for another gateway is a move like any other.
func (g *Group) reassign(partitions []int32) {
	now := g.clock()
	avail, away, saw := partitions, []int32(nil), uint64(0)
	if g.cl != nil {
		avail, away, saw = g.cl.share(partitions, len(g.sessions), g.owner, now)
	}
	cur := g.owner
	if len(g.parents) > 0 {
		cur = maps.Clone(g.owner)
		for _, p := range avail {
			if _, ok := cur[p]; ok {
				continue
			}
			for a, ok := g.parents[p]; ok && a >= 0; a, ok = g.parents[a] {
				if s, held := g.owner[a]; held {
					cur[p] = s
					break
				}
			}
		}
	}
	next := balance(avail, g.sessions, cur, g.sticky)
	for _, p := range away {
		next[p] = elsewhere
	}
	g.parts, g.heldBack = partitions, false
	g.holdBack(next, now)
	for p, s := range next {
		if s == elsewhere {
			delete(next, p)
		}
	}
	moved := len(next) != len(g.owner)
	for p, s := range next {
		if g.owner[p] != s {
			moved = true
		}
	}
	g.owner = next
	if moved {
		close(g.changed)
		g.changed = make(chan struct{})
	}
	if g.cl != nil {
		g.clusterAfter(saw)
	}
}

// wouldHold returns the partitions (of partitions, sorted) pid would hold
// if it read now, changing nothing (EXPLAIN): those it holds when it is a
// member of an unchanged assignment, else its share of a fresh balance
// with it joined (an estimate on a shared store, whose gateways each
// balance their own share).
func (g *Group) wouldHold(pid uint32, partitions []int32) []int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	owner := g.owner
	if !slices.Contains(g.sessions, pid) || !slices.Equal(g.parts, partitions) {
		sessions := g.sessions
		if !slices.Contains(sessions, pid) {
			sessions = append(slices.Clone(sessions), pid)
		}
		owner = balance(partitions, sessions, g.owner, g.sticky)
	}
	var held []int32
	for p, s := range owner {
		if s == pid {
			held = append(held, p)
		}
	}
	slices.Sort(held)
	return held
}
