package consume

import (
	"time"
)

// Graceful partition handoff (YDB's graceful stop). When a rebalance
// (a read session joining, or leaving) wants to move a partition whose
// holder still has work on it in flight, the partition stays with the
// holder until that work ends, or until the handoff grace has passed since
// the move was first wanted, whichever comes first:
//
//   - an autocommit read's pin (Group.pinned): its rows are on their
//     way and its position commits after them (delivery.go);
//   - a transaction's hold (Group.txHeld): an open transaction (an
//     explicit block, an implicit one, INSERT ... SELECT) read the
//     partition, and its COMMIT checks that it still holds it (CheckHeld).
//     The hold ends when the transaction ends, committed or rolled back:
//     the transaction manager tells the session (txn.Listener.Ended),
//     which releases it (Reader.EndTx).
//
// So a joining reader never makes a short transaction fail: only a
// transaction still open after the grace loses its partition, and its
// COMMIT fails with 40001. Meanwhile the balance moves the partitions
// that are not pinned first (balance's sticky), so the joining session
// reads what it can at once. When a pin ends the rebalance it held back
// happens at once, and when the grace of a waiting partition passes a
// timer runs it, so a waiting reader (WAIT) is woken by either (the
// group's changed channel). The elapsed grace is measured with the
// engine's clock; the timer only makes sure somebody looks.
//
// A read without WAIT that finds nothing returns at once, except while a
// partition of its share is held back only by another session's
// autocommit read: that read ends within milliseconds, so the new reader
// waits for it (at most pinHandoffWait) instead of returning empty and
// leaving the partition unread until its client polls again, as a Kafka
// consumer's poll waits out a rebalance. At a consumer group's start the
// first session takes every partition and the others join during its
// first read: the bench's consume workload lost 10-12 ms of three of its
// four partitions to that, a fifth of a 400k-message drain. A hold by an
// open transaction, which may last until the grace, is not waited for.

// pinHandoffWait bounds how long a read without WAIT that found nothing
// waits for a partition of its share still pinned by another session's
// autocommit read (a slow client can hold such a read while its rows are
// sent).
const pinHandoffWait = 100 * time.Millisecond

// DefaultHandoffGrace is how long a partition that a rebalance wants to
// move stays with a holder whose transaction or read is still in flight.
const DefaultHandoffGrace = 10 * time.Second

// heldMove is a move a pin holds back: since when, and the session the
// balance wants the partition to go to.
type heldMove struct {
	since time.Time
	to    uint32
}

// awaitsRead reports whether a move to pid is held back only by another
// session's autocommit read in flight (a pin, not a transaction): it ends
// as soon as that read's rows are sent and its position committed, so a
// read by pid that found nothing waits for it (read.go, pinHandoffWait).
func (g *Group) awaitsRead(pid uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, m := range g.waiting {
		if _, pinned := g.pinned[p]; pinned && m.to == pid {
			return true
		}
	}
	return false
}

// txHold is an open transaction's hold on a partition it read.
type txHold struct {
	pid  uint32
	txID uint64
}

// sticky reports whether p's holder pins it (balance gives such
// partitions back last).
func (g *Group) sticky(p int32) bool {
	s, ok := g.owner[p]
	if !ok {
		return false
	}
	if pn, ok := g.pinned[p]; ok && pn.pid == s {
		return true
	}
	h, ok := g.txHeld[p]
	return ok && h.pid == s
}

// pinHolder returns the session whose read or transaction pins p.
func (g *Group) pinHolder(p int32) (uint32, bool) {
	if pn, ok := g.pinned[p]; ok {
		return pn.pid, true
	}
	if h, ok := g.txHeld[p]; ok {
		return h.pid, true
	}
	return 0, false
}

// holdBack keeps every pinned partition of next with its holder while it
// has waited less than the grace, and revokes the pins of those whose
// grace is over (they move now; a transaction that read one fails its
// COMMIT). Called by reassign with g.mu held.
func (g *Group) holdBack(next map[int32]uint32, now time.Time) {
	for p := range g.waiting {
		if h, ok := g.pinHolder(p); !ok || next[p] == h {
			delete(g.waiting, p) // the pin ended, or the move is no longer wanted
		}
	}
	check := func(p int32, holder uint32) {
		s, ok := next[p]
		if !ok || s == holder {
			return // not a partition any more, or it stays anyway
		}
		m, waiting := g.waiting[p]
		if !waiting {
			if g.waiting == nil {
				g.waiting = map[int32]heldMove{}
			}
			m.since = now
			g.armGrace()
		}
		m.to = s
		g.waiting[p] = m
		if now.Sub(m.since) < g.grace {
			next[p] = holder
			g.heldBack = true
			return
		}
		// The grace is over: the partition moves, its pins are void.
		delete(g.waiting, p)
		delete(g.pinned, p)
		delete(g.txHeld, p)
	}
	for p, pn := range g.pinned {
		check(p, pn.pid)
	}
	for p, h := range g.txHeld {
		if _, pinned := g.pinned[p]; !pinned {
			check(p, h.pid)
		}
	}
}

// armGrace makes sure the group looks again once the grace of a partition
// that starts waiting now has passed.
func (g *Group) armGrace() {
	if g.grace <= 0 {
		return
	}
	time.AfterFunc(g.grace, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.graceOver(g.clock()) {
			g.reassign(g.parts)
		}
	})
}

// graceOver reports whether a held-back move has waited the grace.
func (g *Group) graceOver(now time.Time) bool {
	if !g.heldBack {
		return false
	}
	for _, m := range g.waiting {
		if now.Sub(m.since) >= g.grace {
			return true
		}
	}
	return false
}

// releaseTx ends the holds of pid's transaction txID; a rebalance that
// waited for them happens now.
func (g *Group) releaseTx(pid uint32, txID uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	freed := false
	for p, h := range g.txHeld {
		if h.pid == pid && h.txID == txID {
			delete(g.txHeld, p)
			freed = true
		}
	}
	if freed && g.heldBack {
		g.reassign(g.parts)
	}
}

// sessionHold is a transaction's hold on some partitions of a group,
// remembered by the session to end it.
type sessionHold struct {
	g    *Group
	txID uint64
}

// noteTxHold remembers that the session's open transaction holds
// partitions of g (joinReq.txID), so that its end releases them.
func (rd *Reader) noteTxHold(g *Group) {
	tx := rd.cfg.Conn.Current()
	if tx == nil {
		return
	}
	id := tx.ID
	for _, h := range rd.txHolds {
		if h.g == g && h.txID == id {
			return
		}
	}
	rd.txHolds = append(rd.txHolds, sessionHold{g: g, txID: id})
}

// EndTx ends the holds of the session's transaction txID, which is over
// (the session's txn.Listener is told, on the session's goroutine).
func (rd *Reader) EndTx(txID uint64) {
	if len(rd.txHolds) == 0 {
		return
	}
	keep := rd.txHolds[:0]
	for _, h := range rd.txHolds {
		if h.txID != txID {
			keep = append(keep, h)
			continue
		}
		h.g.releaseTx(rd.cfg.PID, h.txID)
	}
	clear(rd.txHolds[len(keep):])
	rd.txHolds = keep
}
