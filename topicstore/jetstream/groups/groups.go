package groups

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
)

// DefaultTTL is how long a gateway's read-session memberships outlive
// its last renewal (topicstore/jetstream's Options.GroupTTL).
const DefaultTTL = 30 * time.Second

// renewals is how many times per TTL a gateway renews its heartbeat:
// a member survives renewals-1 renewals in a row that fail.
const renewals = 5

// FarewellWait bounds the farewell heartbeat's publish at Close.
const FarewellWait = time.Second

// Host is what the groups need of the store that runs them.
type Host interface {
	// Lock and Unlock are the store's lock: the fold's state (Config.Fold)
	// and the announcements are read and changed only under it.
	sync.Locker
	// Closed reports, under the lock, whether the store is closed.
	Closed() bool
	// Connected reports whether the store's connection to the cluster is
	// up.
	Connected() bool
	// Publish publishes m, conditional as its headers say, and returns
	// its stream sequence.
	Publish(ctx context.Context, m *nats.Msg) (uint64, error)
	// LastFor returns the sequence of the last message on subject, 0 when
	// the subject holds none.
	LastFor(ctx context.Context, subject string) (uint64, nats.Header, error)
	// Purge deletes the messages on subject (a filter) below sequence
	// below; 0: all of them.
	Purge(ctx context.Context, subject string, below uint64) error
}

// Config is what the groups know of their gateway.
type Config struct {
	Gateway  string           // this gateway's id
	Name     string           // what it calls itself (the heartbeat's Tg-Name)
	Subjects fold.Subjects    // the stream's subjects
	Clock    func() time.Time // the store's clock
	Timeout  time.Duration    // bounds each request to the cluster
	TTL      time.Duration    // DefaultTTL when not positive
	Fold     *fold.State      // the store's fold, under the host's lock
}

// Groups is this gateway's announcements (want, under the host's lock;
// beat*, owned by Loop).
type Groups struct {
	cfg  Config
	host Host
	want map[fold.GroupKey]*wantRec
	kick chan struct{}

	beatSeq   uint64    // our heartbeat's last sequence
	beatAt    time.Time // when we last renewed it
	beatUntil time.Time // until when that renewal lasts
	// unpurged are the subjects published on since the last renewal, and
	// their last sequence: what is below it is purged at the next one.
	unpurged map[string]uint64
}

// New returns the groups of a gateway; Start starts them.
func New(cfg Config, host Host) *Groups {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	return &Groups{cfg: cfg, host: host}
}

// TTL is how long this gateway's memberships outlive its last renewal.
func (g *Groups) TTL() time.Duration { return g.cfg.TTL }

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

// Start publishes the first heartbeat, so that once the store's Open
// returns every other gateway's Gather waits for this one (as soon as its
// fold has the heartbeat); the store then runs Loop. Open calls it once
// the fold has caught up.
func (g *Groups) Start() {
	g.kick = make(chan struct{}, 1)
	g.Renew() // before the loop starts: nothing else touches it yet
}

// key resolves a group's topic; it runs under the host's lock.
func (g *Groups) key(topic, consumer string) (fold.GroupKey, error) {
	if g.host.Closed() {
		return fold.GroupKey{}, topicstore.ErrClosed
	}
	t := g.cfg.Fold.ByName[topic]
	if t == nil {
		return fold.GroupKey{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	return fold.GroupKey{Topic: t.Rec.ID, Consumer: consumer}, nil
}

// Announce implements topicstore.GroupCoordinator.
func (g *Groups) Announce(topic, consumer string, a topicstore.Announcement) error {
	g.host.Lock()
	k, err := g.key(topic, consumer)
	if err != nil {
		g.host.Unlock()
		return err
	}
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
	g.host.Unlock()
	g.Kick()
	return nil
}

// Members implements topicstore.GroupCoordinator.
func (g *Groups) Members(topic, consumer string) (topicstore.GroupView, <-chan struct{}, error) {
	g.host.Lock()
	defer g.host.Unlock()
	k, err := g.key(topic, consumer)
	if err != nil {
		return topicstore.GroupView{}, nil, err
	}
	fg := &g.cfg.Fold.Groups
	now := g.cfg.Clock()
	var v topicstore.GroupView
	for gw, r := range fg.Recs[k] {
		v.Epoch = max(v.Epoch, r.Since)
		if b := fg.Beats[gw]; r.Ann.Sessions > 0 && b != nil && now.Before(b.Until) {
			a := r.Ann
			a.Held = slices.Clone(a.Held)
			v.Members = append(v.Members, topicstore.GroupMember{Gateway: gw, Announcement: a, Until: b.Until})
		}
	}
	sort.Slice(v.Members, func(i, j int) bool { return v.Members[i].Gateway < v.Members[j].Gateway })
	if fg.Waits == nil {
		fg.Waits = map[fold.GroupKey]chan struct{}{}
	}
	ch := fg.Waits[k]
	if ch == nil {
		ch = make(chan struct{})
		fg.Waits[k] = ch
	}
	return v, ch, nil
}
