package consume

import (
	"maps"
	"slices"
	"time"

	"topicgate/topicstore"
)

// Read sessions across gateways. When several gateways share one store (a
// store that is a topicstore.GroupCoordinator: the JetStream cluster), a
// streaming consumer's partitions are divided in two steps:
//
//  1. among the gateways that have read sessions of the consumer (the
//     group's live members, kept in the store): splitGroup, a pure function
//     of the partitions and the members' (gateway id, session count), so
//     every gateway computes the same split from the same member list and
//     the split does not change while the members do not;
//  2. within this gateway, its share over its own sessions, by the same
//     balance, affinity, pins and handoff grace as on one gateway
//     (groups.go, handoff.go).
//
// A gateway announces, per group, its session count, the partitions its
// sessions hold and the membership epoch its assignment was computed
// from (Saw); it reannounces when any of them changes. A partition moves
// between gateways in two halves, each decided by one gateway from what
// the store shows it:
//
//   - the old holder lets it go as soon as its split says so and its local
//     pins allow (an autocommit read in flight, an open transaction that
//     read it: handoff.go; after the grace it goes anyway), and announces
//     that it no longer holds it;
//   - the new holder takes it only once no other live member announces
//     holding it, and only when every other live member's assignment was
//     computed from the current membership (its Saw is at least the
//     group's Epoch): a gateway that has not seen a join yet may still
//     count on its old share, and must not find a partition of that share
//     taken under it. A member that has not acknowledged the membership
//     within clusterAckWait (a live gateway does within milliseconds) is
//     taken to be dead or cut off, and no longer holds the others back
//     (what it announces holding stays untouched until it expires):
//     otherwise a gateway killed without leaving would stop every move of
//     the consumer for a whole TTL as soon as any gateway joined.
//
// So in steady operation a partition is read by one gateway at a time and
// a rebalance delivers nothing twice. This costs the joining side a round
// trip or two through the store before it reads (a non-WAIT read waits up
// to clusterSettle for its share), which the simpler rule ("read your
// share as soon as you see the split") would not, but that rule delivers
// the messages in flight at every rebalance twice. What the store cannot
// make exact is expiry: a member whose gateway stops renewing drops out
// after the store's TTL as seen by each gateway's clock, and a gateway
// that was only cut off (not dead) may still have reads in flight then.
// Positions are conditional (a commit moves a position only from where
// its read found it), so the worst case is a message delivered twice,
// never a position moved backwards or skipped.
//
// On a store that is not a GroupCoordinator (the embedded store: one
// process) none of this runs: Group.cl is nil and the group balances
// over its sessions alone.

// clusterSettle bounds how long a read that holds nothing to read waits,
// without WAIT, for its gateway's share of the consumer to arrive (its own
// announcement stored, the other gateways letting the share go).
const clusterSettle = time.Second

// clusterSettleMax bounds how long a read waits for its share while the
// store cannot say what the other gateways hold (no stream leader: an
// election takes 4-8 s here).
const clusterSettleMax = 30 * time.Second

// clusterRecheck is how often a read waiting for its share brings this
// gateway's view of the group up to the stream's (read.go).
const clusterRecheck = 100 * time.Millisecond

// clusterAckWait is how long a membership change waits for another
// gateway's acknowledgement before it goes on without it.
const clusterAckWait = 2 * time.Second

// elsewhere marks, in an assignment being computed, a partition that
// belongs to another gateway (no session has process id 0): holdBack keeps
// it with a local holder that pins it, like any move, and reassign drops
// it after.
const elsewhere uint32 = 0

// clusterGroup is a Group's side of the cross-gateway division. Its
// fields are guarded by the Group's mu.
type clusterGroup struct {
	co              topicstore.GroupCoordinator
	topic, consumer string
	// seen is closed at the next change of the group's members as of the
	// last reassign (nil: the store could not say).
	seen <-chan struct{}
	// pending: this gateway's split share has partitions it may not take
	// yet (another gateway holds them, or has not seen the current
	// membership), or its own announcement is not stored yet.
	pending bool
	// epoch is the membership epoch of the last reassign and when this
	// gateway first saw it (by the group's clock); recheck, when not zero,
	// is when a member that has not acknowledged it stops holding the
	// others back (the watcher reassigns then).
	epoch   uint64
	epochAt time.Time
	recheck time.Time
	// last is the announcement made last (announced: one was made).
	last      topicstore.Announcement
	announced bool
	stop      chan struct{} // closes the watcher; nil: none runs
}

// splitGroup divides partitions (sorted) among members (sorted by gateway,
// as GroupCoordinator.Members returns them) in proportion to their session
// counts: member i gets floor or ceil of P*s_i/S partitions (largest
// remainders first, ties to the earlier gateway), as one contiguous run
// in gateway order. Since every session then balances floor or ceil of
// its gateway's share over its gateway's sessions, every session of the
// consumer ends with floor(P/S) or ceil(P/S) partitions, as on one
// gateway. It is pure: every gateway computes the same split from the
// same members, and members without sessions get nothing.
func splitGroup(partitions []int32, members []topicstore.GroupMember) map[string][]int32 {
	out := make(map[string][]int32, len(members))
	total := 0
	for _, m := range members {
		total += max(m.Sessions, 0)
	}
	if total == 0 {
		return out
	}
	p := len(partitions)
	share := make([]int, len(members))
	rem := make([]int, len(members))
	left := p
	for i, m := range members {
		s := max(m.Sessions, 0)
		share[i], rem[i] = p*s/total, p*s%total
		left -= share[i]
	}
	for ; left > 0; left-- {
		best := -1
		for i, m := range members {
			if m.Sessions > 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		share[best]++
		rem[best] = -1 // at most one extra each
	}
	next := 0
	for i, m := range members {
		if share[i] > 0 {
			out[m.Gateway] = append(out[m.Gateway], partitions[next:next+share[i]]...)
			next += share[i]
		}
	}
	return out
}

// share returns which of partitions (sorted) this gateway's sessions may
// hold now: its split share, less what another live member holds, less
// (until every other member has seen the current membership) what it does
// not hold already. away are the others. It notes the channel of the next
// change and whether something of the share is still to come (pending).
// Called by reassign with the group's mu held; Members only reads the
// store's state in memory.
func (c *clusterGroup) share(partitions []int32, sessions int, owner map[int32]uint32, now time.Time) (mine, away []int32, saw uint64) {
	view, ch, err := c.co.Members(c.topic, c.consumer)
	c.seen = ch
	c.recheck = time.Time{}
	if err != nil {
		c.pending = sessions > 0
		return nil, partitions, 0
	}
	if view.Epoch != c.epoch {
		c.epoch, c.epochAt = view.Epoch, now
	}
	self := c.co.GatewayID()
	taken := map[int32]bool{}
	settled, member := true, false
	for _, m := range view.Members {
		if m.Gateway == self {
			member = true
			continue
		}
		if m.Saw < view.Epoch {
			if giveUp := c.epochAt.Add(clusterAckWait); now.Before(giveUp) {
				settled, c.recheck = false, giveUp
			}
		}
		for _, p := range m.Held {
			taken[p] = true
		}
	}
	members := view.Members
	if !member && sessions > 0 && len(taken) == 0 && len(members) == 0 {
		// Nobody else reads the consumer as far as the store shows, and
		// this gateway's own announcement is not stored yet (the stream
		// may have no leader for seconds: an election): its sessions take
		// the whole split now rather than read nothing meanwhile. A
		// gateway joining at the same moment may read the same messages;
		// positions are conditional, so at most one read of them commits.
		members = []topicstore.GroupMember{{Gateway: self, Announcement: topicstore.Announcement{Sessions: sessions}}}
		member = true
	}
	split := splitGroup(partitions, members)
	ours := map[int32]bool{}
	c.pending = sessions > 0 && !member
	for _, p := range split[self] {
		_, have := owner[p]
		if taken[p] || (!settled && !have) {
			c.pending = true
			continue
		}
		ours[p] = true
		mine = append(mine, p)
	}
	for _, p := range partitions {
		if !ours[p] {
			away = append(away, p)
		}
	}
	return mine, away, view.Epoch
}

// announce tells the store what this gateway's sessions of the group hold
// now, if that changed since the last announcement.
func (c *clusterGroup) announce(sessions int, owner map[int32]uint32, saw uint64) {
	held := slices.Sorted(maps.Keys(owner))
	a := topicstore.Announcement{Sessions: sessions, Held: held, Saw: saw}
	if c.announced && a.Sessions == c.last.Sessions && a.Saw == c.last.Saw && slices.Equal(a.Held, c.last.Held) {
		return
	}
	if sessions == 0 && !c.announced {
		return // never a member: nothing to take back
	}
	if err := c.co.Announce(c.topic, c.consumer, a); err != nil {
		return // the topic is gone or the store closed: nothing to share
	}
	c.last, c.announced = a, true
}

// stale reports whether the group's members changed since the last
// reassign (or the store could not say then), or a member that has not
// acknowledged the membership stopped holding the others back.
func (c *clusterGroup) stale(now time.Time) bool {
	if c.seen == nil || (!c.recheck.IsZero() && !now.Before(c.recheck)) {
		return true
	}
	select {
	case <-c.seen:
		return true
	default:
		return false
	}
}

// watch runs while this gateway has sessions in g: at every change of the
// group's members it reassigns, so that a partition another gateway wants
// is let go (and one this gateway may now take is taken) although no
// session of this gateway is reading.
func (g *Group) watch(stop <-chan struct{}) {
	for {
		g.mu.Lock()
		ch, recheck := g.cl.seen, g.cl.recheck
		now := g.clock()
		g.mu.Unlock()
		wait := time.Duration(0) // 0: until the next change
		switch {
		case !recheck.IsZero():
			// A member that has not acknowledged the membership holds the
			// others back until recheck (or the next change).
			wait = max(recheck.Sub(now), time.Millisecond)
		case ch == nil:
			// The store could not say (the topic is being dropped, or
			// re-created): look again in a moment rather than never.
			wait = clusterSettle
		}
		var wake <-chan time.Time
		var t *time.Timer
		if wait > 0 {
			t = time.NewTimer(wait)
			wake = t.C
		}
		select {
		case <-stop:
		case <-ch:
		case <-wake:
		}
		if t != nil {
			t.Stop()
		}
		g.mu.Lock()
		select {
		case <-stop: // the gateway's last session left
			g.mu.Unlock()
			return
		default:
		}
		// Sessions that idled out leave now, as another session's join
		// would have them leave on one gateway.
		g.expireIdle(g.clock(), 0)
		g.reassign(g.parts)
		g.mu.Unlock()
	}
}

// clusterAfter ends a reassign on a shared store: it announces the new
// assignment and starts the watcher while the gateway has sessions in the
// group (stopping it once it has none). Called with g.mu held.
func (g *Group) clusterAfter(saw uint64) {
	c := g.cl
	c.announce(len(g.sessions), g.owner, saw)
	switch {
	case len(g.sessions) > 0 && c.stop == nil:
		c.stop = make(chan struct{})
		go g.watch(c.stop)
	case len(g.sessions) == 0 && c.stop != nil:
		close(c.stop)
		c.stop = nil
	}
}

// clusterPending reports whether this gateway's share of the group is
// still on its way (see clusterGroup.pending); false on one gateway.
func (g *Group) clusterPending() bool {
	if g.cl == nil { // set when the group is made, never changed
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cl.pending
}

// clusterSeen returns the channel closed at the next change of the
// group's members (nil on one gateway: never).
func (g *Group) clusterSeen() <-chan struct{} {
	if g.cl == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cl.seen
}
