package jetstream

import (
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
)

// Read-session groups (topicstore.GroupCoordinator): which gateways have
// read sessions of a streaming consumer, and what those hold, kept in the
// stream and folded like everything else, so that the gateways divide the
// consumer's partitions (consume/cluster.go).
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

// groupsFold is the groups as folded (under s.mu).
type groupsFold struct {
	beats map[string]*gwBeat
	recs  map[memberKey]map[string]*memberRec
	waits map[memberKey]chan struct{} // closed at the group's next change
}

// groupsState is this gateway's announcements (want, under s.mu; beat*,
// owned by groupLoop).
type groupsState struct {
	ttl  time.Duration
	want map[memberKey]*wantRec
	kick chan struct{}

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
	t := s.fold.byName[topic]
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
	g := &s.fold.members
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
func (g *groupsFold) notifyGroup(k memberKey) {
	if ch := g.waits[k]; ch != nil {
		close(ch)
		delete(g.waits, k)
	}
}

// notifyGateway wakes every group gw has a record in.
func (g *groupsFold) notifyGateway(gw string) {
	for k, byGw := range g.recs {
		if _, ok := byGw[gw]; ok {
			g.notifyGroup(k)
		}
	}
}

// applyGroup folds a heartbeat or a member record; it runs under s.mu.
func (f *foldState) applyGroup(tok []string, h nats.Header, seq uint64) error {
	g := &f.members
	if tok[0] == "h" {
		gw := tok[1]
		if g.beats == nil {
			g.beats = map[string]*gwBeat{}
		}
		b := g.beats[gw]
		now := f.clock()
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

// farewellWait bounds Close's wait for its farewell heartbeat.
const farewellWait = time.Second

var _ topicstore.GroupCoordinator = (*Store)(nil)
