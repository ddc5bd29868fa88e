package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/nats-io/nats.go"
)

// leaderConns sends the committer's batches to the node that leads the
// stream, as a Kafka producer sends to a partition's leader. Through any
// other node a batch takes one more hop each way: the node forwards every
// message of it over its route to the leader and the ack back, which here
// cost 7-9% of ingest-1 (a gateway given only the leader's URL against one
// given only a follower's, README "Running a cluster").
//
// It holds one connection per node it could reach, by server name, each
// pinned to its node (no reconnect: when the node goes, so does the
// connection), and the leader's name as the stream's leader-elected
// advisories and the stream info tell it. Without a live connection to the
// leader (not yet known, its node down, a URL list that names a load
// balancer, credentials that may not subscribe to advisories) batches go
// through the store's own connection, as before: this is a shortcut, never
// a dependency. It is safe for concurrent use.
type leaderConns struct {
	urls []string
	opts []nats.Option

	mu      sync.Mutex
	conns   map[string]*nats.Conn // live pinned connections by server name
	byURL   map[string]string     // the server name each URL answered with
	leader  string                // the stream's leader as last heard; "" unknown
	dialing bool
	closed  bool
	sub     *nats.Subscription
	changed chan struct{} // closed and replaced at every change of leader or connections (tests wait on it)
	forgot  int           // times a failed batch made it forget the leader
	wg      sync.WaitGroup
}

// leaderElectedSubject is where the servers announce a stream's new
// leader (nats-server's JSAdvisoryStreamLeaderElectedPre).
const leaderElectedSubject = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."

// startLeaderConns subscribes to the stream's leader advisories and, in
// the background (a node that is down must not hold up the start), dials
// every node of the URL list and asks the stream who leads it. Nothing of
// it can fail the store: a part that fails leaves batches on s.nc.
func (s *Store) startLeaderConns() {
	l := &s.leaders
	l.urls = s.opts.URLs
	l.opts = append([]nats.Option{nats.NoReconnect(), nats.DontRandomize(), nats.Timeout(s.opts.Timeout)}, s.opts.NATS...)
	l.conns = map[string]*nats.Conn{}
	l.byURL = map[string]string{}
	l.changed = make(chan struct{})
	l.dialing = true
	// Subscribe before asking, so a change between the two is not missed.
	if sub, err := s.nc.Subscribe(leaderElectedSubject+s.opts.Stream, func(m *nats.Msg) {
		var adv struct {
			Leader string `json:"leader"`
		}
		if json.Unmarshal(m.Data, &adv) == nil && adv.Leader != "" {
			l.setLeader(adv.Leader)
		}
	}); err == nil {
		l.sub = sub
	}
	l.wg.Go(func() {
		l.dial()
		s.learnLeader()
	})
}

// learnLeader asks the stream who leads it.
func (s *Store) learnLeader() {
	ctx, cancel := s.request(context.Background())
	defer cancel()
	if info, err := s.stream.Info(ctx); err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
		s.leaders.setLeader(info.Cluster.Leader)
	}
}

// conn is the connection the next batch goes out on: the pinned one to
// the leader if it is live, else fallback.
func (l *leaderConns) conn(fallback *nats.Conn) *nats.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.conns[l.leader]; c != nil && c.IsConnected() {
		return c
	}
	return fallback
}

// setLeader records the stream's leader; a leader this gateway has no
// connection to has its node dialed again (it may have restarted).
func (l *leaderConns) setLeader(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.leader = name
	l.notifyLocked()
	if l.conns[name] == nil && !l.dialing {
		l.dialing = true
		l.wg.Go(func() { l.dial() })
	}
}

// forget is told that a batch on the leader's connection failed: batches
// take the store's own connection, which follows the cluster by itself,
// until the stream's info (asked for at once, in the background) or an
// advisory names the leader again.
func (s *Store) forgetLeader() {
	l := &s.leaders
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.leader == "" {
		return
	}
	l.leader = ""
	l.forgot++
	l.notifyLocked()
	l.wg.Go(s.learnLeader)
}

// dial connects to every URL that has no live connection yet, one at a
// time (a few milliseconds each here); failures are skipped.
func (l *leaderConns) dial() {
	defer func() {
		l.mu.Lock()
		l.dialing = false
		l.mu.Unlock()
	}()
	for _, u := range l.urls {
		l.mu.Lock()
		closed, known := l.closed, l.conns[l.byURL[u]]
		l.mu.Unlock()
		if closed {
			return
		}
		if known != nil && known.IsConnected() {
			continue
		}
		c, err := nats.Connect(u, append(l.opts, nats.ClosedHandler(l.dropped))...)
		if err != nil {
			continue
		}
		name := c.ConnectedServerName()
		l.mu.Lock()
		l.byURL[u] = name
		if old := l.conns[name]; l.closed || (old != nil && old.IsConnected()) {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns[name] = c
		l.notifyLocked()
		l.mu.Unlock()
	}
}

// dropped forgets a pinned connection its node closed.
func (l *leaderConns) dropped(c *nats.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, have := range l.conns {
		if have == c {
			delete(l.conns, name)
			l.notifyLocked()
		}
	}
}

func (l *leaderConns) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// wait returns a channel closed at the next change (tests).
func (l *leaderConns) wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// close closes every pinned connection; a dial or a question in
// progress ends by itself (a dial that connects after it closes what it
// got; a question fails once the store's connection closes): wait for
// them with l.wg.Wait after that.
func (l *leaderConns) close() {
	l.mu.Lock()
	if l.conns == nil || l.closed {
		l.closed = true
		l.mu.Unlock()
		return
	}
	l.closed = true
	conns := l.conns
	l.conns = map[string]*nats.Conn{}
	l.mu.Unlock()
	if l.sub != nil {
		_ = l.sub.Unsubscribe()
	}
	for _, c := range conns {
		c.Close()
	}
}

// errBatchNotSent marks a PublishAtomic that failed before its commit
// message went out: the server stored nothing of it (an open batch it
// never sees committed is dropped), so it may be sent again.
var errBatchNotSent = errors.New("the batch was not sent")
