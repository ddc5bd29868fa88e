package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// The group loop: this gateway's heartbeat and announcements, published
// and renewed on a timer, a farewell at Close, and the purge of what dead
// gateways left (groups.go says what the groups are).

// groupLoop runs until Close: it publishes announcements when told to
// (Announce) and, every TTL/groupRenewals, renews the heartbeat, sweeps
// expired members and retries what failed. At Close it publishes what is
// still unpublished (a graceful stop's sessions left before the store
// closes), once.
func (s *Store) groupLoop() {
	defer s.wg.Done()
	tick := time.NewTicker(s.groups.ttl / groupRenewals)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			s.publishGroups(true)
			s.farewell()
			return
		case <-s.groups.kick:
			if g := &s.groups; !g.beatUntil.After(s.opts.Clock()) {
				s.renewBeat()
			}
		case <-tick.C:
			s.renewBeat()
			s.purgeOld()
			s.sweepGroups()
		}
		s.publishGroups(false)
	}
}

// farewell publishes, at Close, a heartbeat that has expired already, so
// that the other gateways stop counting this one at once (in read-session
// groups, in Gather, for the sweep of its staged chunks: its open
// stagings were abandoned by Close) rather than a TTL later. Only a
// gateway whose read sessions all left says goodbye (a graceful stop:
// the server's sessions end before the store closes); one closed under
// sessions that still hold partitions lets its heartbeat expire, as if it
// had died, so nobody takes what they might still be reading. It is given
// a second at most and skipped when the gateway has lost the cluster:
// Close must not wait for a cluster that is away.
func (s *Store) farewell() {
	g := &s.groups
	if g.beatSeq == 0 || !s.nc.IsConnected() {
		return
	}
	s.mu.Lock()
	for _, w := range g.want {
		if w.a.Sessions > 0 {
			s.mu.Unlock()
			return
		}
	}
	s.mu.Unlock()
	m := nats.NewMsg(s.subj.Beat(s.stage.gw))
	m.Header.Set(fold.HUntil, strconv.FormatInt(s.opts.Clock().UnixMicro(), 10))
	m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(g.beatSeq, 10))
	ctx, cancel := context.WithTimeout(context.Background(), min(s.opts.Timeout, farewellWait))
	defer cancel()
	_, _ = s.js.PublishMsg(ctx, m)
}

// kickGroups wakes groupLoop.
func (s *Store) kickGroups() {
	select {
	case s.groups.kick <- struct{}{}:
	default:
	}
}

// renewBeat publishes this gateway's heartbeat and reports whether it is
// stored. A renewal after the heartbeat had expired makes every
// announcement with sessions be published again, as a new membership:
// meanwhile the others may have taken this gateway's share, or purged its
// records.
func (s *Store) renewBeat() bool {
	g := &s.groups
	now := s.opts.Clock()
	subj := s.subj.Beat(s.stage.gw)
	until := now.Add(g.ttl)
	seq, ok := s.publishExpecting(subj, g.beatSeq, func(m *nats.Msg) {
		m.Header.Set(fold.HUntil, strconv.FormatInt(until.UnixMicro(), 10))
		if s.opts.Name != "" {
			m.Header.Set(fold.HName, s.opts.Name)
		}
	})
	if !ok {
		g.beatSeq = seq
		return false
	}
	rejoin := !g.beatUntil.IsZero() && !now.Before(g.beatUntil)
	g.beatSeq, g.beatAt, g.beatUntil = seq, now, until
	if rejoin {
		s.mu.Lock()
		for _, w := range g.want {
			if w.a.Sessions > 0 {
				w.version++
				w.anew = true
			}
		}
		s.mu.Unlock()
	}
	return true
}

// groupJob is one announcement to publish.
type groupJob struct {
	k       fold.GroupKey
	version uint64
	a       topicstore.Announcement
	expect  uint64
	since   uint64 // 0: the record sets a new Since
}

// publishGroups publishes every announcement not stored yet, the
// heartbeat first when one of them has sessions and it is not fresh. The
// last one, at Close, gives up at the first failure (the cluster is away:
// Close must not wait a timeout per group).
func (s *Store) publishGroups(last bool) {
	g := &s.groups
	s.mu.Lock()
	var jobs []groupJob
	members := false
	for k, w := range g.want {
		if w.version == w.stored {
			continue
		}
		if !w.hasStored && w.a.Sessions == 0 {
			w.stored = w.version // never a member: nothing to take back
			continue
		}
		j := groupJob{k: k, version: w.version, a: w.a, expect: w.seq}
		if w.hasStored && w.sessions == w.a.Sessions && !w.anew {
			j.since = w.since
		}
		members = members || w.a.Sessions > 0
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	now := s.opts.Clock()
	if members && (g.beatUntil.IsZero() || now.Sub(g.beatAt) >= g.ttl/groupRenewals || !now.Before(g.beatUntil)) && !s.renewBeat() {
		return // retried at the next renewal
	}
	for _, j := range jobs {
		seq, ok := s.publishExpecting(s.subj.Member(j.k, s.stage.gw), j.expect, func(m *nats.Msg) {
			m.Header.Set(fold.HSessions, strconv.Itoa(j.a.Sessions))
			m.Header.Set(fold.HHeld, fold.FormatHeld(j.a.Held))
			m.Header.Set(fold.HSaw, strconv.FormatUint(j.a.Saw, 10))
			if j.since != 0 {
				m.Header.Set(fold.HSince, strconv.FormatUint(j.since, 10))
			}
		})
		s.mu.Lock()
		w := g.want[j.k]
		if w == nil { // its topic was dropped meanwhile
			s.mu.Unlock()
			continue
		}
		w.seq = seq
		if ok {
			w.stored = max(w.stored, j.version)
			w.hasStored, w.sessions = true, j.a.Sessions
			if j.since == 0 {
				w.since, w.anew = seq, false
			}
		}
		s.mu.Unlock()
		if !ok && last {
			return
		}
	}
}

// publishExpecting publishes one message on subj, conditional on the
// subject's last sequence being expect (its older messages are purged at
// the next renewal: purgeOld). It returns the sequence the subject ends at
// (the new message's, or on a wrong expectation the one the stream has,
// for the next try) and whether the message is stored.
func (s *Store) publishExpecting(subj string, expect uint64, fill func(*nats.Msg)) (uint64, bool) {
	for try := 0; try < 2; try++ {
		m := nats.NewMsg(subj)
		fill(m)
		m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(expect, 10))
		ctx, cancel := s.request(context.Background())
		ack, err := s.js.PublishMsg(ctx, m)
		cancel()
		if err == nil {
			if s.groups.unpurged == nil {
				s.groups.unpurged = map[string]uint64{}
			}
			s.groups.unpurged[subj] = ack.Sequence
			return ack.Sequence, true
		}
		if jsext.ErrorCode(err) != jsext.ErrCodeWrongLastSequence {
			return expect, false // the cluster is away: retried at the next renewal
		}
		// Someone purged the subject (a sweep while this gateway was cut
		// off): start from what the stream has.
		ctx, cancel = s.request(context.Background())
		last, err := s.stream.GetLastMsgForSubject(ctx, subj)
		cancel()
		switch {
		case errors.Is(err, natsjs.ErrMsgNotFound):
			expect = 0
		case err != nil:
			return expect, false
		default:
			expect = last.Sequence
		}
	}
	return expect, false
}

// purgeOld purges what this gateway published before its last message on
// each subject it published on since the last renewal.
func (s *Store) purgeOld() {
	for subj, seq := range s.groups.unpurged {
		ctx, cancel := s.request(context.Background())
		err := s.stream.Purge(ctx, natsjs.WithPurgeSubject(subj), natsjs.WithPurgeSequence(seq))
		cancel()
		if err != nil {
			return // the cluster is away: at the next renewal
		}
		delete(s.groups.unpurged, subj)
	}
}

// sweepGroups tells the groups about members that expired, and purges
// and forgets what gateways that expired a TTL ago left (and the records of
// dropped topics), up to the last sequence folded of them.
func (s *Store) sweepGroups() {
	g, m := &s.groups, &s.fold.Groups
	now := s.opts.Clock()
	self := s.stage.gw
	dead := map[string]uint64{} // gateway -> its last sequence folded
	var dropped []uint64
	s.mu.Lock()
	for gw, b := range m.Beats {
		if !b.Expired && !now.Before(b.Until) {
			b.Expired = true
			m.NotifyGateway(gw)
		}
		if gw != self && now.Sub(b.Until) >= g.ttl {
			dead[gw] = max(dead[gw], b.Seq)
		}
	}
	gone := map[uint64]bool{}
	for k, byGw := range m.Recs {
		if s.fold.ByID[k.Topic] == nil {
			if !gone[k.Topic] {
				gone[k.Topic] = true
				dropped = append(dropped, k.Topic)
			}
			delete(m.Recs, k)
			delete(g.want, k)
			m.NotifyGroup(k)
			continue
		}
		for gw, r := range byGw {
			if b := m.Beats[gw]; gw != self && (b == nil || now.Sub(b.Until) >= g.ttl) {
				dead[gw] = max(dead[gw], r.Seq)
			}
		}
	}
	s.mu.Unlock()
	for _, id := range dropped {
		ctx, cancel := s.request(context.Background())
		_ = s.stream.Purge(ctx, natsjs.WithPurgeSubject(s.subj.TopicFilter(fold.KindMember, id)))
		cancel()
	}
	for gw, upTo := range dead {
		ok := true
		for _, subj := range []string{s.subj.Members(gw), s.subj.Beat(gw)} {
			ctx, cancel := s.request(context.Background())
			err := s.stream.Purge(ctx, natsjs.WithPurgeSubject(subj), natsjs.WithPurgeSequence(upTo+1))
			cancel()
			ok = ok && err == nil
		}
		if !ok {
			continue // the next sweep tries again
		}
		s.mu.Lock()
		if b := m.Beats[gw]; b != nil && b.Seq <= upTo {
			delete(m.Beats, gw)
		}
		for k, byGw := range m.Recs {
			if r := byGw[gw]; r != nil && r.Seq <= upTo {
				delete(byGw, gw)
				m.NotifyGroup(k) // the epoch may be lower now
			}
		}
		s.mu.Unlock()
	}
}
