package jetstream

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Read-session groups (topicstore.GroupCoordinator): which gateways have
// read sessions of a streaming consumer, and what those hold, kept in the
// stream and folded like everything else, so that the gateways divide the
// consumer's partitions (executor/cluster.go).
//
//   - A member record, subject <prefix>.m.<topic id>.<consumer hex>.<gateway>,
//     is a gateway's announcement in one group: its session count
//     (Tg-Sessions), the partitions they hold (Tg-Held), the group epoch
//     it computed them from (Tg-Saw), and the record that set its session
//     count (Tg-Since; absent: this record does). A group's epoch is the
//     highest Since of its records, the same on every gateway because
//     every gateway folds the same records.
//   - A heartbeat, subject <prefix>.h.<gateway>, says until when the
//     gateway lives (Tg-Until, by the store's Clock). A member counts while
//     its gateway's heartbeat has not expired by the reader's clock.
//
// Why a heartbeat per gateway rather than an expiry in each member record:
// renewals then cost one publish per gateway per renewal interval, however
// many consumers it reads, and a member record is written only when the
// gateway's sessions or what they hold change. The gateway renews its
// heartbeat at start and then groupRenewals times per TTL for as long as
// it runs (Gather waits for the gateways it shows alive: gather.go), a
// publish conditional on the subject's last sequence like every change;
// at a graceful stop it publishes one that has expired already; one that
// dies, or loses the cluster, stops renewing and drops out of every group
// once the TTL has passed, and the others take its share. The TTL must
// outlast a stream leader election (5-8 s measured, doc.go) or every
// election would move every partition: DefaultGroupTTL is 30 s.
//
// Announce only records what the executor wants announced; one goroutine
// (groupLoop) publishes the latest announcement of each group, in order
// (a subject never has two publishes in flight: doc.go), and retries what
// failed at the next renewal. At each renewal it purges the older messages
// of the subjects it published on since the last one, so that the stream
// keeps one record per (group, gateway) and one heartbeat per gateway, not
// their history; not at each publish, because a purge is a replicated
// operation of the whole stream and readers joining and leaving all the
// time would make many (under load the replicas then lag, and a read's
// direct get answered by one that lags finds no message). What
// a dead gateway left is purged by the survivors one TTL after it expired
// (sweepGroups), up to the last sequence they folded of it, so a gateway
// that was only cut off and comes back is not purged again: it publishes
// its heartbeat and then all its records anew, as a new membership.

// DefaultGroupTTL is how long a gateway's read-session memberships outlive
// its last renewal (Options.GroupTTL).
const DefaultGroupTTL = 30 * time.Second

// groupRenewals is how many times per TTL a gateway renews its heartbeat:
// a member survives groupRenewals-1 renewals in a row that fail.
const groupRenewals = 5

// Headers of member records and heartbeats (the heartbeat's expiry is in
// hUntil, as the maintenance lease's).
const (
	hSessions = "Tg-Sessions" // member: the gateway's read sessions of the group
	hHeld     = "Tg-Held"     // member: the partitions they hold, comma-separated
	hSaw      = "Tg-Saw"      // member: the group epoch that assignment was computed from
	hSince    = "Tg-Since"    // member: the record that set the session count (absent: this one)
	hName     = "Tg-Name"     // heartbeat: what the gateway calls itself (Options.Name)
)

// memberKey names a group in the fold: a topic by ID (a dropped and
// re-created topic's groups start over) and a consumer.
type memberKey struct {
	topic    uint64
	consumer string
}

// groupsState is the groups as folded (beats, recs, waits: under s.mu)
// and this gateway's announcements (want, under s.mu; beat*, owned by
// groupLoop).
type groupsState struct {
	ttl   time.Duration
	beats map[string]*gwBeat
	recs  map[memberKey]map[string]*memberRec
	waits map[memberKey]chan struct{} // closed at the group's next change
	want  map[memberKey]*wantRec
	kick  chan struct{}

	beatSeq   uint64    // our heartbeat's last sequence
	beatAt    time.Time // when we last renewed it
	beatUntil time.Time // until when that renewal lasts
	// unpurged are the subjects published on since the last renewal, and
	// their last sequence: what is below it is purged at the next one.
	unpurged map[string]uint64
}

// gwBeat is a gateway's last heartbeat.
type gwBeat struct {
	seq     uint64
	until   time.Time
	expired bool   // the sweep has told the groups that it expired
	name    string // what the gateway calls itself (Options.Name)
}

// memberRec is a member record as folded.
type memberRec struct {
	seq, since uint64
	a          topicstore.Announcement
}

// wantRec is what this gateway announces in a group, and what of it is
// stored.
type wantRec struct {
	a               topicstore.Announcement
	version, stored uint64 // the version of a, and the last version stored
	hasStored       bool
	seq             uint64 // the stored record's sequence: the next publish's expectation
	since           uint64 // the stored record's Since
	sessions        int    // the stored record's session count
	anew            bool   // the next record sets a new Since (after a rejoin)
}

func (s *Store) memberSubject(k memberKey, gw string) string {
	return s.prefix + ".m." + strconv.FormatUint(k.topic, 10) + "." + hex.EncodeToString([]byte(k.consumer)) + "." + gw
}
func (s *Store) beatSubject(gw string) string { return s.prefix + ".h." + gw }

// startGroups publishes the first heartbeat, so that once Open returns
// every other gateway's Gather waits for this one (as soon as its fold
// has the heartbeat), then starts the goroutine that publishes
// announcements and renews it. Open calls it once the fold has caught up.
func (s *Store) startGroups(ttl time.Duration) {
	if ttl <= 0 {
		ttl = DefaultGroupTTL
	}
	s.groups.ttl, s.groups.kick = ttl, make(chan struct{}, 1)
	s.renewBeat() // before the loop starts: nothing else touches it yet
	s.wg.Add(1)
	go s.groupLoop()
}

// GatewayID implements topicstore.GroupCoordinator.
func (s *Store) GatewayID() string { return s.stage.gw }

// groupKey resolves a group's topic; it runs under s.mu.
func (s *Store) groupKey(topic, consumer string) (memberKey, error) {
	if s.closed {
		return memberKey{}, topicstore.ErrClosed
	}
	t := s.byName[topic]
	if t == nil {
		return memberKey{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	return memberKey{t.rec.ID, consumer}, nil
}

// Announce implements topicstore.GroupCoordinator.
func (s *Store) Announce(topic, consumer string, a topicstore.Announcement) error {
	s.mu.Lock()
	k, err := s.groupKey(topic, consumer)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	g := &s.groups
	if g.want == nil {
		g.want = map[memberKey]*wantRec{}
	}
	w := g.want[k]
	if w == nil {
		w = &wantRec{}
		g.want[k] = w
	}
	a.Held = slices.Clone(a.Held)
	w.a = a
	w.version++
	s.mu.Unlock()
	s.kickGroups()
	return nil
}

// Members implements topicstore.GroupCoordinator.
func (s *Store) Members(topic, consumer string) (topicstore.GroupView, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.groupKey(topic, consumer)
	if err != nil {
		return topicstore.GroupView{}, nil, err
	}
	g := &s.groups
	now := s.opts.Clock()
	var v topicstore.GroupView
	for gw, r := range g.recs[k] {
		v.Epoch = max(v.Epoch, r.since)
		if b := g.beats[gw]; r.a.Sessions > 0 && b != nil && now.Before(b.until) {
			a := r.a
			a.Held = slices.Clone(a.Held)
			v.Members = append(v.Members, topicstore.GroupMember{Gateway: gw, Announcement: a, Until: b.until})
		}
	}
	sort.Slice(v.Members, func(i, j int) bool { return v.Members[i].Gateway < v.Members[j].Gateway })
	if g.waits == nil {
		g.waits = map[memberKey]chan struct{}{}
	}
	ch := g.waits[k]
	if ch == nil {
		ch = make(chan struct{})
		g.waits[k] = ch
	}
	return v, ch, nil
}

// notifyGroup wakes the group's waiters; it runs under s.mu.
func (g *groupsState) notifyGroup(k memberKey) {
	if ch := g.waits[k]; ch != nil {
		close(ch)
		delete(g.waits, k)
	}
}

// notifyGateway wakes every group gw has a record in.
func (g *groupsState) notifyGateway(gw string) {
	for k, byGw := range g.recs {
		if _, ok := byGw[gw]; ok {
			g.notifyGroup(k)
		}
	}
}

// applyGroup folds a heartbeat or a member record; it runs under s.mu.
func (s *Store) applyGroup(tok []string, h nats.Header, seq uint64) error {
	g := &s.groups
	if tok[0] == "h" {
		gw := tok[1]
		if g.beats == nil {
			g.beats = map[string]*gwBeat{}
		}
		b := g.beats[gw]
		now := s.opts.Clock()
		wasLive := b != nil && now.Before(b.until)
		if b == nil {
			b = &gwBeat{}
			g.beats[gw] = b
		}
		b.seq, b.until, b.expired = seq, timeMicros(hInt(h, hUntil)), false
		if name := h.Get(hName); name != "" {
			b.name = name
		}
		if !wasLive && now.Before(b.until) {
			g.notifyGateway(gw) // back (a gateway's first beat precedes its records)
		}
		return nil
	}
	if len(tok) != 4 {
		return nil
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return err
	}
	consumer, err := hex.DecodeString(tok[2])
	if err != nil {
		return err
	}
	held, err := parseHeld(h.Get(hHeld))
	if err != nil {
		return err
	}
	r := &memberRec{seq: seq, since: uint64(hInt(h, hSince)),
		a: topicstore.Announcement{Sessions: int(hInt(h, hSessions)), Held: held, Saw: uint64(hInt(h, hSaw))}}
	if r.since == 0 {
		r.since = seq
	}
	k := memberKey{id, string(consumer)}
	if g.recs == nil {
		g.recs = map[memberKey]map[string]*memberRec{}
	}
	if g.recs[k] == nil {
		g.recs[k] = map[string]*memberRec{}
	}
	g.recs[k][tok[3]] = r
	g.notifyGroup(k)
	return nil
}

func parseHeld(v string) ([]int32, error) {
	if v == "" {
		return nil, nil
	}
	f := strings.Split(v, ",")
	out := make([]int32, len(f))
	for i, x := range f {
		p, err := strconv.ParseInt(x, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("member record: partition %q: %w", x, err)
		}
		out[i] = int32(p)
	}
	return out, nil
}

func formatHeld(held []int32) string {
	var b strings.Builder
	for i, p := range held {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(p)))
	}
	return b.String()
}

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
	m := nats.NewMsg(s.beatSubject(s.stage.gw))
	m.Header.Set(hUntil, strconv.FormatInt(s.opts.Clock().UnixMicro(), 10))
	m.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(g.beatSeq, 10))
	ctx, cancel := context.WithTimeout(context.Background(), min(s.opts.Timeout, farewellWait))
	defer cancel()
	_, _ = s.js.PublishMsg(ctx, m)
}

// farewellWait bounds Close's wait for its farewell heartbeat.
const farewellWait = time.Second

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
	subj := s.beatSubject(s.stage.gw)
	until := now.Add(g.ttl)
	seq, ok := s.publishExpecting(subj, g.beatSeq, func(m *nats.Msg) {
		m.Header.Set(hUntil, strconv.FormatInt(until.UnixMicro(), 10))
		if s.opts.Name != "" {
			m.Header.Set(hName, s.opts.Name)
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
	k       memberKey
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
		seq, ok := s.publishExpecting(s.memberSubject(j.k, s.stage.gw), j.expect, func(m *nats.Msg) {
			m.Header.Set(hSessions, strconv.Itoa(j.a.Sessions))
			m.Header.Set(hHeld, formatHeld(j.a.Held))
			m.Header.Set(hSaw, strconv.FormatUint(j.a.Saw, 10))
			if j.since != 0 {
				m.Header.Set(hSince, strconv.FormatUint(j.since, 10))
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
	g := &s.groups
	now := s.opts.Clock()
	self := s.stage.gw
	dead := map[string]uint64{} // gateway -> its last sequence folded
	var dropped []uint64
	s.mu.Lock()
	for gw, b := range g.beats {
		if !b.expired && !now.Before(b.until) {
			b.expired = true
			g.notifyGateway(gw)
		}
		if gw != self && now.Sub(b.until) >= g.ttl {
			dead[gw] = max(dead[gw], b.seq)
		}
	}
	gone := map[uint64]bool{}
	for k, byGw := range g.recs {
		if s.byID[k.topic] == nil {
			if !gone[k.topic] {
				gone[k.topic] = true
				dropped = append(dropped, k.topic)
			}
			delete(g.recs, k)
			delete(g.want, k)
			g.notifyGroup(k)
			continue
		}
		for gw, r := range byGw {
			if b := g.beats[gw]; gw != self && (b == nil || now.Sub(b.until) >= g.ttl) {
				dead[gw] = max(dead[gw], r.seq)
			}
		}
	}
	s.mu.Unlock()
	for _, id := range dropped {
		ctx, cancel := s.request(context.Background())
		_ = s.stream.Purge(ctx, natsjs.WithPurgeSubject(s.prefix+".m."+strconv.FormatUint(id, 10)+".>"))
		cancel()
	}
	for gw, upTo := range dead {
		ok := true
		for _, subj := range []string{s.prefix + ".m.*.*." + gw, s.beatSubject(gw)} {
			ctx, cancel := s.request(context.Background())
			err := s.stream.Purge(ctx, natsjs.WithPurgeSubject(subj), natsjs.WithPurgeSequence(upTo+1))
			cancel()
			ok = ok && err == nil
		}
		if !ok {
			continue // the next sweep tries again
		}
		s.mu.Lock()
		if b := g.beats[gw]; b != nil && b.seq <= upTo {
			delete(g.beats, gw)
		}
		for k, byGw := range g.recs {
			if r := byGw[gw]; r != nil && r.seq <= upTo {
				delete(byGw, gw)
				g.notifyGroup(k) // the epoch may be lower now
			}
		}
		s.mu.Unlock()
	}
}

var _ topicstore.GroupCoordinator = (*Store)(nil)
