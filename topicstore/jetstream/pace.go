package jetstream

import (
	"time"
	"topicgate/topicstore/jetstream/plan"
)

// Pacing group commit.
//
// The stream's leader pays for a batch mostly per batch, not per message
// (tg-cluster bench here: atomic batches of 3 reach twice the messages/s
// of single publishes). A committer that publishes whatever is queued the
// moment its previous batch returns makes batches as large as the
// sessions that happened to arrive during that round trip; two gateways
// sharing the same sessions make batches half as large, so the leader
// pays twice per message. The committer therefore holds a group back for
// up to Options.CommitDelay while sessions that committed within
// paceWindow, and so will probably commit again soon, are not in it yet;
// it stops waiting as soon as all of them are. This is MySQL's
// binlog_group_commit_sync_delay with binlog_group_commit_sync_no_delay_count
// set, per group, to the sessions that write steadily, and PostgreSQL's
// commit_delay with commit_siblings: a lone session never waits, since
// nobody else is expected.

// paceWindow is how recently a session must have committed for the
// committer to wait for it.
const paceWindow = 20 * time.Millisecond

// pacer remembers which sessions committed lately. Only the committer
// goroutine uses it.
type pacer struct {
	last  map[uint32]time.Time // session -> when its last request was grouped
	swept time.Time            // when last was last pruned
	// clock is the pacer's time (nil: time.Now); tests freeze it.
	clock func() time.Time
	// holding, when set, is told each time linger starts to hold a group
	// (tests: to send the request it waits for only then).
	holding chan<- struct{}
}

func (p *pacer) now() time.Time {
	if p.clock != nil {
		return p.clock()
	}
	return time.Now()
}

// recent reports whether session committed within paceWindow of now.
func (p *pacer) recent(session uint32, now time.Time) bool {
	at, ok := p.last[session]
	return ok && now.Sub(at) <= paceWindow
}

// expected is the number of sessions that committed within paceWindow and
// have no request in members.
func (p *pacer) expected(members map[uint32]bool, now time.Time) int {
	n := 0
	for id, at := range p.last {
		if !members[id] && now.Sub(at) <= paceWindow {
			n++
		}
	}
	return n
}

// note records the sessions of group as having committed at now, and
// forgets those idle for longer than paceWindow.
func (p *pacer) note(group []*plan.Request, now time.Time) {
	if p.last == nil {
		p.last = map[uint32]time.Time{}
	}
	for _, r := range group {
		if r.Session != 0 {
			p.last[r.Session] = now
		}
	}
	if now.Sub(p.swept) > paceWindow {
		p.swept = now
		for id, at := range p.last {
			if now.Sub(at) > paceWindow {
				delete(p.last, id)
			}
		}
	}
}

// linger returns group, grown by the requests that arrive within
// CommitDelay from the sessions it waits for (see above); it returns at
// once when none is expected.
func (s *Store) linger(group []*plan.Request) []*plan.Request {
	d := s.opts.CommitDelay
	now := s.pace.now()
	defer func() { s.pace.note(group, now) }()
	if d <= 0 || len(group) >= maxGroupReqs {
		return group
	}
	members := make(map[uint32]bool, len(group))
	for _, r := range group {
		members[r.Session] = true
	}
	want := s.pace.expected(members, now)
	if want == 0 {
		return group
	}
	s.commitHeld.Add(1)
	if s.pace.holding != nil {
		s.pace.holding <- struct{}{}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for want > 0 && len(group) < maxGroupReqs {
		select {
		case r := <-s.commits:
			group = append(group, r)
			if r.Session != 0 && !members[r.Session] {
				members[r.Session] = true
				if s.pace.recent(r.Session, now) {
					want--
				}
			}
		case <-t.C:
			return group
		case <-s.done:
			return group
		}
	}
	return group
}
