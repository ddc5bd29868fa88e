package executor

import (
	"sort"
	"sync"
	"time"
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

// readGroup is one consumer's read sessions and partition assignment. A
// session joins when it first reads as the consumer and leaves when its
// connection closes or it stays idle too long; every change rebalances
// (balance) at once, so a partition is held by one session at a time.
type readGroup struct {
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
	// parts is the partition list of the last reassignment, kept for the
	// one unpin runs when it held a move back.
	parts    []int32
	heldBack bool
}

// readGroups is the engine's registry of consumer groups.
type readGroups struct {
	mu     sync.Mutex
	groups map[groupKey]*readGroup
	idle   time.Duration
}

func (r *readGroups) get(topic, consumer string) *readGroup {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		r.groups = map[groupKey]*readGroup{}
	}
	k := groupKey{topic, consumer}
	g, ok := r.groups[k]
	if !ok {
		g = &readGroup{lastRead: map[uint32]time.Time{}, owner: map[int32]uint32{}, changed: make(chan struct{})}
		r.groups[k] = g
	}
	return g
}

// leaveAll removes a session from every group (connection closed).
func (r *readGroups) leaveAll(pid uint32, partitions func(topic string) []int32) {
	r.mu.Lock()
	var gs []struct {
		k groupKey
		g *readGroup
	}
	for k, g := range r.groups {
		gs = append(gs, struct {
			k groupKey
			g *readGroup
		}{k, g})
	}
	r.mu.Unlock()
	for _, e := range gs {
		e.g.leave(pid, partitions(e.k.topic))
	}
}

// join registers pid as a reader (if it is not one yet), expires idle
// sessions, rebalances, and returns the partitions pid holds and a channel
// closed at the next reassignment.
//
// With pin, the partitions returned stay with pid across rebalances until
// unpin (an autocommit read settles).
func (g *readGroup) join(pid uint32, partitions []int32, now time.Time, idle time.Duration, pin bool) ([]int32, <-chan struct{}) {
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
	if idle > 0 {
		live := g.sessions[:0]
		for _, s := range g.sessions {
			if s != pid && now.Sub(g.lastRead[s]) > idle {
				delete(g.lastRead, s)
				changed = true
				continue
			}
			live = append(live, s)
		}
		g.sessions = live
	}
	if changed || len(g.owner) != len(partitions) {
		g.reassign(partitions)
	}
	var held []int32
	for p, s := range g.owner {
		if s == pid {
			held = append(held, p)
		}
	}
	sort.Slice(held, func(i, j int) bool { return held[i] < held[j] })
	if pin {
		if g.pinned == nil {
			g.pinned = map[int32]partPin{}
		}
		for _, p := range held {
			g.pinned[p] = partPin{pid: pid, reads: g.pinned[p].reads + 1}
		}
	}
	return held, g.changed
}

// unpin ends one read of pid that pinned parts (join's held): once no read
// pins a partition it may move, and a rebalance that waited for it
// happens now.
func (g *readGroup) unpin(pid uint32, parts []int32) {
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

// leave removes pid and rebalances.
func (g *readGroup) leave(pid uint32, partitions []int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, pn := range g.pinned { // also of a session that idled out before
		if pn.pid == pid {
			delete(g.pinned, p)
		}
	}
	for i, s := range g.sessions {
		if s == pid {
			g.sessions = append(g.sessions[:i:i], g.sessions[i+1:]...)
			delete(g.lastRead, pid)
			g.reassign(partitions)
			return
		}
	}
}

// holds reports whether pid holds partition p.
func (g *readGroup) holds(pid uint32, p int32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.owner[p] == pid && len(g.sessions) > 0
}

// holder returns the session holding p (0 if none).
func (g *readGroup) holder(p int32) uint32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.owner[p]
}

func (g *readGroup) reassign(partitions []int32) {
	next := balance(partitions, g.sessions, g.owner)
	g.parts, g.heldBack = partitions, false
	for p, pn := range g.pinned {
		if next[p] != pn.pid {
			if _, ok := next[p]; ok { // still a partition: it waits for unpin
				next[p] = pn.pid
				g.heldBack = true
			}
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
}
