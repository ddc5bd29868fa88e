package groups

import (
	"context"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// The loop: this gateway's heartbeat and announcements, published and
// renewed on a timer, a farewell at Close, and the purge of what dead
// gateways left (doc.go says what the groups are).

// Loop runs until done is closed: it publishes announcements when told to
// (Announce) and, every TTL/renewals, renews the heartbeat, sweeps
// expired members and retries what failed. When done is closed it
// publishes what is still unpublished (a graceful stop's sessions left
// before the store closes), once.
func (g *Groups) Loop(done <-chan struct{}) {
	tick := time.NewTicker(g.cfg.TTL / renewals)
	defer tick.Stop()
	for {
		select {
		case <-done:
			g.publish(true)
			g.farewell()
			return
		case <-g.kick:
			if !g.beatUntil.After(g.cfg.Clock()) {
				g.Renew()
			}
		case <-tick.C:
			g.Renew()
			g.purgeOld()
			g.sweep()
		}
		g.publish(false)
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
// FarewellWait at most and skipped when the gateway has lost the cluster:
// Close must not wait for a cluster that is away.
func (g *Groups) farewell() {
	if g.beatSeq == 0 || !g.host.Connected() {
		return
	}
	g.host.Lock()
	for _, w := range g.want {
		if w.a.Sessions > 0 {
			g.host.Unlock()
			return
		}
	}
	g.host.Unlock()
	m := nats.NewMsg(g.cfg.Subjects.Beat(g.cfg.Gateway))
	m.Header.Set(fold.HUntil, strconv.FormatInt(g.cfg.Clock().UnixMicro(), 10))
	m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(g.beatSeq, 10))
	ctx, cancel := context.WithTimeout(context.Background(), min(g.cfg.Timeout, FarewellWait))
	defer cancel()
	_, _ = g.host.Publish(ctx, m)
}

// Kick wakes Loop: an announcement to publish, or a heartbeat to renew
// (a gateway with open stagings keeps one, for the sweep of its staged
// chunks).
func (g *Groups) Kick() {
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

// Renew publishes this gateway's heartbeat and reports whether it is
// stored; it belongs to Loop once Loop runs. A renewal after the heartbeat
// had expired makes every announcement with sessions be published again,
// as a new membership: meanwhile the others may have taken this gateway's
// share, or purged its records.
func (g *Groups) Renew() bool {
	now := g.cfg.Clock()
	subj := g.cfg.Subjects.Beat(g.cfg.Gateway)
	until := now.Add(g.cfg.TTL)
	seq, ok := g.publishExpecting(subj, g.beatSeq, func(m *nats.Msg) {
		m.Header.Set(fold.HUntil, strconv.FormatInt(until.UnixMicro(), 10))
		if g.cfg.Name != "" {
			m.Header.Set(fold.HName, g.cfg.Name)
		}
	})
	if !ok {
		g.beatSeq = seq
		return false
	}
	rejoin := !g.beatUntil.IsZero() && !now.Before(g.beatUntil)
	g.beatSeq, g.beatAt, g.beatUntil = seq, now, until
	if rejoin {
		g.host.Lock()
		for _, w := range g.want {
			if w.a.Sessions > 0 {
				w.version++
				w.anew = true
			}
		}
		g.host.Unlock()
	}
	return true
}

// job is one announcement to publish.
type job struct {
	k       fold.GroupKey
	version uint64
	a       topicstore.Announcement
	expect  uint64
	since   uint64 // 0: the record sets a new Since
}

// publish publishes every announcement not stored yet, the heartbeat
// first when one of them has sessions and it is not fresh. The last one,
// at Close, gives up at the first failure (the cluster is away: Close
// must not wait a timeout per group).
func (g *Groups) publish(last bool) {
	g.host.Lock()
	var jobs []job
	members := false
	for k, w := range g.want {
		if w.version == w.stored {
			continue
		}
		if !w.hasStored && w.a.Sessions == 0 {
			w.stored = w.version // never a member: nothing to take back
			continue
		}
		j := job{k: k, version: w.version, a: w.a, expect: w.seq}
		if w.hasStored && w.sessions == w.a.Sessions && !w.anew {
			j.since = w.since
		}
		members = members || w.a.Sessions > 0
		jobs = append(jobs, j)
	}
	g.host.Unlock()
	if len(jobs) == 0 {
		return
	}
	now := g.cfg.Clock()
	if members && (g.beatUntil.IsZero() || now.Sub(g.beatAt) >= g.cfg.TTL/renewals || !now.Before(g.beatUntil)) && !g.Renew() {
		return // retried at the next renewal
	}
	for _, j := range jobs {
		seq, ok := g.publishExpecting(g.cfg.Subjects.Member(j.k, g.cfg.Gateway), j.expect, func(m *nats.Msg) {
			m.Header.Set(fold.HSessions, strconv.Itoa(j.a.Sessions))
			m.Header.Set(fold.HHeld, fold.FormatHeld(j.a.Held))
			m.Header.Set(fold.HSaw, strconv.FormatUint(j.a.Saw, 10))
			if j.since != 0 {
				m.Header.Set(fold.HSince, strconv.FormatUint(j.since, 10))
			}
		})
		g.host.Lock()
		w := g.want[j.k]
		if w == nil { // its topic was dropped meanwhile
			g.host.Unlock()
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
		g.host.Unlock()
		if !ok && last {
			return
		}
	}
}

// request returns a context bounded by the store's timeout.
func (g *Groups) request() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), g.cfg.Timeout)
}

// publishExpecting publishes one message on subj, conditional on the
// subject's last sequence being expect (its older messages are purged at
// the next renewal: purgeOld). It returns the sequence the subject ends at
// (the new message's, or on a wrong expectation the one the stream has,
// for the next try) and whether the message is stored.
func (g *Groups) publishExpecting(subj string, expect uint64, fill func(*nats.Msg)) (uint64, bool) {
	for try := 0; try < 2; try++ {
		m := nats.NewMsg(subj)
		fill(m)
		m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(expect, 10))
		ctx, cancel := g.request()
		seq, err := g.host.Publish(ctx, m)
		cancel()
		if err == nil {
			if g.unpurged == nil {
				g.unpurged = map[string]uint64{}
			}
			g.unpurged[subj] = seq
			return seq, true
		}
		if jsext.ErrorCode(err) != jsext.ErrCodeWrongLastSequence {
			return expect, false // the cluster is away: retried at the next renewal
		}
		// Someone purged the subject (a sweep while this gateway was cut
		// off): start from what the stream has (0: nothing).
		ctx, cancel = g.request()
		last, _, err := g.host.LastFor(ctx, subj)
		cancel()
		if err != nil {
			return expect, false
		}
		expect = last
	}
	return expect, false
}

// purgeOld purges what this gateway published before its last message on
// each subject it published on since the last renewal.
func (g *Groups) purgeOld() {
	for subj, seq := range g.unpurged {
		ctx, cancel := g.request()
		err := g.host.Purge(ctx, subj, seq)
		cancel()
		if err != nil {
			return // the cluster is away: at the next renewal
		}
		delete(g.unpurged, subj)
	}
}

// sweep tells the groups about members that expired, and purges and
// forgets what gateways that expired a TTL ago left (and the records of
// dropped topics), up to the last sequence folded of them.
func (g *Groups) sweep() {
	f := g.cfg.Fold
	m := &f.Groups
	now := g.cfg.Clock()
	self := g.cfg.Gateway
	dead := map[string]uint64{} // gateway -> its last sequence folded
	var dropped []uint64
	g.host.Lock()
	for gw, b := range m.Beats {
		if !b.Expired && !now.Before(b.Until) {
			b.Expired = true
			m.NotifyGateway(gw)
		}
		if gw != self && now.Sub(b.Until) >= g.cfg.TTL {
			dead[gw] = max(dead[gw], b.Seq)
		}
	}
	gone := map[uint64]bool{}
	for k, byGw := range m.Recs {
		if f.ByID[k.Topic] == nil {
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
			if b := m.Beats[gw]; gw != self && (b == nil || now.Sub(b.Until) >= g.cfg.TTL) {
				dead[gw] = max(dead[gw], r.Seq)
			}
		}
	}
	g.host.Unlock()
	for _, id := range dropped {
		ctx, cancel := g.request()
		_ = g.host.Purge(ctx, g.cfg.Subjects.TopicFilter(fold.KindMember, id), 0)
		cancel()
	}
	for gw, upTo := range dead {
		ok := true
		for _, subj := range []string{g.cfg.Subjects.Members(gw), g.cfg.Subjects.Beat(gw)} {
			ctx, cancel := g.request()
			err := g.host.Purge(ctx, subj, upTo+1)
			cancel()
			ok = ok && err == nil
		}
		if !ok {
			continue // the next sweep tries again
		}
		g.host.Lock()
		if b := m.Beats[gw]; b != nil && b.Seq <= upTo {
			delete(m.Beats, gw)
		}
		for k, byGw := range m.Recs {
			if r := byGw[gw]; r != nil && r.Seq <= upTo {
				delete(byGw, gw)
				m.NotifyGroup(k) // the epoch may be lower now
			}
		}
		g.host.Unlock()
	}
}
