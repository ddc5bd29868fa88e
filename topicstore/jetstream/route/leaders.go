package route

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Leaders sends the committer's batches to the node that leads the
// stream, as a Kafka producer sends to a partition's leader. Through any
// other node a batch takes one more hop each way: the node forwards every
// message of it over its route to the leader and the ack back, which here
// cost 7-9% of ingest-1 (a gateway given only the leader's URL against one
// given only a follower's, docs/cluster/leader.md).
//
// It holds one connection per node it could reach, by server name, each
// pinned to its node (no reconnect: when the node goes, so does the
// connection), and the leader's name as the stream's leader-elected
// advisories and the stream info tell it. Without a live connection to the
// leader (not yet known, its node down, a URL list that names a load
// balancer, credentials that may not subscribe to advisories) batches go
// through the store's own connection, as before: this is a shortcut, never
// a dependency. Whatever is missing is looked for again by one refresh at
// a time (dial the nodes without a live connection, ask the stream who
// leads it), at once when a connection or the leader is lost and at most
// every refreshEvery while batches find no live connection to the leader.
// It is safe for concurrent use; nothing of it outlives Close by more
// than a dial or a question in progress (each bounded by the store's
// timeout; one that ends after Close drops what it got).
type Leaders struct {
	urls []string
	opts []nats.Option
	host Host
	need int64 // the max_payload a node must allow (as Open checks the store's own)

	mu      sync.Mutex
	conns   map[string]*nats.Conn // pinned connections by server name
	byURL   map[string]string     // the server name each URL answered with
	leader  string                // the stream's leader as last heard; "" unknown
	heard   uint64                // advisories heard: an info answer older than the last is dropped
	busy    bool                  // a refresh runs
	again   bool                  // one was asked for while it ran
	lastTry time.Time             // when the last refresh started
	closed  bool
	sub     *nats.Subscription
	changed chan struct{} // closed and replaced at every change of leader or connections (tests wait on it)
	forgot  int           // times a failed batch made it forget the leader
}

// LeaderElectedSubject is where the servers announce a stream's new
// leader (nats-server's JSAdvisoryStreamLeaderElectedPre).
const LeaderElectedSubject = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."

// refreshEvery bounds how often batches without a live connection to the
// leader start a refresh.
const refreshEvery = time.Second

// Host is what Leaders needs of the store: the stream's leader as its
// info names it.
type Host interface {
	// StreamLeader asks the stream for its leader's server name, bounded
	// by the store's timeout; "" if it has none or did not answer.
	StreamLeader() string
}

// Config is what Start needs: the nodes' URLs, the options of a pinned
// connection (the caller's timeout, pings and credentials; Start adds no
// reconnect and no randomizing) and the max_payload a node must allow.
type Config struct {
	URLs    []string
	Options []nats.Option
	Need    int64 // the max_payload a node must allow (as Open checks the store's own)
}

// Start subscribes on nc to the leader advisories of stream and starts
// the first refresh in the background (a node that is down must not hold
// up the start). Nothing of it can fail the store: a part that fails
// leaves batches on the store's own connection.
func (l *Leaders) Start(cfg Config, h Host, nc *nats.Conn, stream string) {
	l.urls = cfg.URLs
	l.opts = append([]nats.Option{nats.NoReconnect(), nats.DontRandomize()}, cfg.Options...)
	l.need = cfg.Need
	l.host = h
	l.conns = map[string]*nats.Conn{}
	l.byURL = map[string]string{}
	l.changed = make(chan struct{})
	// Subscribe before asking, so a change between the two is not missed.
	if sub, err := nc.Subscribe(LeaderElectedSubject+stream, func(m *nats.Msg) {
		var adv struct {
			Leader string `json:"leader"`
		}
		if json.Unmarshal(m.Data, &adv) == nil && adv.Leader != "" {
			l.elected(adv.Leader)
		}
	}); err == nil {
		l.sub = sub
	}
	l.mu.Lock()
	l.kickLocked(true)
	l.mu.Unlock()
}

// Conn is the connection the next batch goes out on: the pinned one to
// the leader if it is live, else fallback (and, at most every
// refreshEvery, a refresh looks for what is missing).
func (l *Leaders) Conn(fallback *nats.Conn) *nats.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.conns[l.leader]; c != nil && c.IsConnected() {
		return c
	}
	l.kickLocked(false)
	return fallback
}

// elected records the leader an advisory names.
func (l *Leaders) elected(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.heard++
	l.setLocked(name)
}

// setLocked makes name the leader; one this gateway has no live
// connection to has its node dialed again (it may have restarted).
func (l *Leaders) setLocked(name string) {
	if l.closed || name == "" {
		return
	}
	l.leader = name
	l.notifyLocked()
	if c := l.conns[name]; c == nil || !c.IsConnected() {
		l.kickLocked(true)
	}
}

// Forget is told that a batch on the leader's connection failed:
// batches take the store's own connection, which follows the cluster by
// itself, until a refresh (started at once) or an advisory names the
// leader again.
func (l *Leaders) Forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.leader == "" {
		return
	}
	l.leader = ""
	l.forgot++
	l.notifyLocked()
	l.kickLocked(true)
}

// kickLocked starts a refresh, or asks the running one for another round;
// one not forced waits refreshEvery after the last.
func (l *Leaders) kickLocked(force bool) {
	if l.closed {
		return
	}
	if l.busy {
		l.again = l.again || force
		return
	}
	now := time.Now()
	if !force && now.Sub(l.lastTry) < refreshEvery {
		return
	}
	l.busy, l.lastTry = true, now
	go l.refresh()
}

// refresh dials the nodes without a live connection and, if the leader
// is unknown or still has none, asks the stream; again while it was
// asked to meanwhile.
func (l *Leaders) refresh() {
	for {
		l.dial()
		l.mu.Lock()
		c, heard := l.conns[l.leader], l.heard
		stale := l.leader == "" || c == nil || !c.IsConnected() // unknown, or its node unreachable: it may have moved
		l.mu.Unlock()
		if stale {
			name := l.host.StreamLeader()
			l.mu.Lock()
			if l.heard == heard { // no advisory since the question: the answer is not stale
				l.setLocked(name)
			}
			l.mu.Unlock()
		}
		l.mu.Lock()
		if l.again && !l.closed {
			l.again = false
			l.lastTry = time.Now()
			l.mu.Unlock()
			continue
		}
		l.busy = false
		l.mu.Unlock()
		return
	}
}

// dial connects to every URL that has no live connection yet, one at a
// time (a few milliseconds each here); failures are skipped, and so is a
// node that allows smaller messages than the store's own.
func (l *Leaders) dial() {
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
		c, err := nats.Connect(u, append(slices.Clip(l.opts), nats.ClosedHandler(l.dropped))...)
		if err != nil {
			continue
		}
		if c.MaxPayload() < l.need {
			c.Close()
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

// dropped forgets a pinned connection that closed (its node went, a
// ping timed out, the server closed it) and, if it was the leader's,
// looks for it again at once: the node may still lead.
func (l *Leaders) dropped(c *nats.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, have := range l.conns {
		if have == c {
			delete(l.conns, name)
			l.notifyLocked()
			if name == l.leader {
				l.kickLocked(true)
			}
		}
	}
}

func (l *Leaders) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Wait returns a channel closed at the next change (tests).
func (l *Leaders) Wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// Close closes every pinned connection. A refresh in progress is not
// waited for (a dial to a node that drops packets takes the whole
// timeout): it ends by itself, closing what it dials after this.
func (l *Leaders) Close() {
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

// Forgot is how many times a failed batch made it forget the leader
// (tests).
func (l *Leaders) Forgot() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.forgot
}

// Pinned is the pinned connection to the node named name, nil if none
// (tests).
func (l *Leaders) Pinned(name string) *nats.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns[name]
}
