package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"fmt"
	"slices"
	"sort"
	"time"

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

// groupsState is this gateway's announcements (want, under s.mu; beat*,
// owned by groupLoop).
type groupsState struct {
	ttl  time.Duration
	want map[fold.GroupKey]*wantRec
	kick chan struct{}

	beatSeq   uint64    // our heartbeat's last sequence
	beatAt    time.Time // when we last renewed it
	beatUntil time.Time // until when that renewal lasts
	// unpurged are the subjects published on since the last renewal, and
	// their last sequence: what is below it is purged at the next one.
	unpurged map[string]uint64
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
func (s *Store) groupKey(topic, consumer string) (fold.GroupKey, error) {
	if s.closed {
		return fold.GroupKey{}, topicstore.ErrClosed
	}
	t := s.fold.ByName[topic]
	if t == nil {
		return fold.GroupKey{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	return fold.GroupKey{Topic: t.Rec.ID, Consumer: consumer}, nil
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
		g.want = map[fold.GroupKey]*wantRec{}
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
	g := &s.fold.Groups
	now := s.opts.Clock()
	var v topicstore.GroupView
	for gw, r := range g.Recs[k] {
		v.Epoch = max(v.Epoch, r.Since)
		if b := g.Beats[gw]; r.Ann.Sessions > 0 && b != nil && now.Before(b.Until) {
			a := r.Ann
			a.Held = slices.Clone(a.Held)
			v.Members = append(v.Members, topicstore.GroupMember{Gateway: gw, Announcement: a, Until: b.Until})
		}
	}
	sort.Slice(v.Members, func(i, j int) bool { return v.Members[i].Gateway < v.Members[j].Gateway })
	if g.Waits == nil {
		g.Waits = map[fold.GroupKey]chan struct{}{}
	}
	ch := g.Waits[k]
	if ch == nil {
		ch = make(chan struct{})
		g.Waits[k] = ch
	}
	return v, ch, nil
}

// farewellWait bounds Close's wait for its farewell heartbeat.
const farewellWait = time.Second

var _ topicstore.GroupCoordinator = (*Store)(nil)
