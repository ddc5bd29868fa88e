package txn

import (
	"maps"
	"sort"

	"topicgate/topicstore"
)

// SharedKey names a shared consumer of a topic.
type SharedKey struct{ Topic, Consumer string }

// held is what a transaction block did with shared consumers: the
// messages it acquired, which COMMIT acknowledges atomically with the
// block's writes and positions unless they were released or rejected
// meanwhile, and ROLLBACK hands back to the queue.
type held map[SharedKey]map[topicstore.MsgRef]bool

func (h *held) add(k SharedKey, refs []topicstore.MsgRef) {
	if *h == nil {
		*h = held{}
	}
	m := (*h)[k]
	if m == nil {
		m = map[topicstore.MsgRef]bool{}
		(*h)[k] = m
	}
	for _, r := range refs {
		m[r] = true
	}
}

func (h held) remove(k SharedKey, refs []topicstore.MsgRef) {
	for _, r := range refs {
		delete(h[k], r)
	}
}

func (h held) clone() held {
	out := make(held, len(h))
	for k, m := range h {
		out[k] = maps.Clone(m)
	}
	return out
}

// acks lists what COMMIT acknowledges, in a stable order.
func (h held) acks(session uint32) []topicstore.SharedAck {
	var out []topicstore.SharedAck
	for k, m := range h {
		if len(m) == 0 {
			continue
		}
		a := topicstore.SharedAck{Topic: k.Topic, Consumer: k.Consumer, Session: session}
		for r := range m {
			a.Refs = append(a.Refs, r)
		}
		sort.Slice(a.Refs, func(i, j int) bool {
			if a.Refs[i].Partition != a.Refs[j].Partition {
				return a.Refs[i].Partition < a.Refs[j].Partition
			}
			return a.Refs[i].Offset < a.Refs[j].Offset
		})
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic+"\x00"+out[i].Consumer < out[j].Topic+"\x00"+out[j].Consumer })
	return out
}

// Hold records that the open block acquired refs of k: COMMIT
// acknowledges them, ROLLBACK releases them. Outside an explicit block it
// does nothing: a read in an implicit block or a plain autocommit read
// takes its locks as in autocommit, since neither promises that its rows
// were processed. An autocommit statement that reads and writes in one
// transaction (INSERT ... SELECT) holds them like an explicit block.
func (c *Conn) Hold(k SharedKey, refs []topicstore.MsgRef) {
	if c.mode == ExplicitBlock || c.tx == nil && c.stmt != nil {
		c.held.add(k, refs)
	}
}

// Unhold forgets refs of k: the session released or rejected them, which
// acts at once and stays whatever the block does.
func (c *Conn) Unhold(k SharedKey, refs []topicstore.MsgRef) {
	if c.held != nil {
		c.held.remove(k, refs)
	}
}

// Holds reports whether the open block acquired r of k.
func (c *Conn) Holds(k SharedKey, r topicstore.MsgRef) bool { return c.held[k][r] }

// Acquiring notes that the session acquires messages of k: Close releases
// every lock the session still holds there.
func (c *Conn) Acquiring(k SharedKey) {
	if c.used == nil {
		c.used = map[SharedKey]bool{}
	}
	c.used[k] = true
}

// Release hands refs of k, which the session acquired, back to the
// queue: the first counted of them as delivery attempts (their rows may
// have reached the client: the attempt counts against
// max_processing_attempts), the rest as undelivered (not counted). The
// block holds them no longer.
func (c *Conn) Release(k SharedKey, refs []topicstore.MsgRef, counted int) {
	c.release(k, refs, counted)
}

// release is the one place shared-consumer messages go back to the
// queue: Release (a statement's rows that never reached the client), a
// rollback (releaseHeld), ROLLBACK TO SAVEPOINT and the session's close
// (refs nil: every lock the session holds on k, as attempts).
func (c *Conn) release(k SharedKey, refs []topicstore.MsgRef, counted int) {
	if refs == nil {
		c.m.store.ReleaseSession(k.Topic, k.Consumer, c.session, nil)
		delete(c.held, k)
		return
	}
	if counted > 0 {
		c.m.store.ReleaseSession(k.Topic, k.Consumer, c.session, refs[:counted])
	}
	if counted < len(refs) {
		c.m.store.ReleaseUndelivered(k.Topic, k.Consumer, c.session, refs[counted:])
	}
	c.Unhold(k, refs)
}

// releaseHeld hands back every message the block acquired.
func (c *Conn) releaseHeld() {
	for k, m := range c.held {
		refs := make([]topicstore.MsgRef, 0, len(m))
		for r := range m {
			refs = append(refs, r)
		}
		if len(refs) > 0 {
			c.release(k, refs, len(refs))
		}
	}
	c.held = nil
}
