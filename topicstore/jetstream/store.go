package jetstream

import (
	"topicgate/topicstore/jetstream/catalog"
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/groups"
	"topicgate/topicstore/jetstream/maintain"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/jetstream/queue"
	"topicgate/topicstore/jetstream/reads"
	"topicgate/topicstore/jetstream/retain"
	"topicgate/topicstore/jetstream/route"
	"topicgate/topicstore/jetstream/snapshot"
	"topicgate/topicstore/jetstream/wide"

	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// DefaultStream is the stream a cluster's topicgate gateways share.
const DefaultStream = "TOPICGATE"

// DefaultSnapshotEvery is Options.SnapshotEvery's default.
const DefaultSnapshotEvery = snapshot.DefaultEvery

// Options configure a Store.
type Options struct {
	// URLs are the cluster's nodes (nats://user:pass@host:port, ...).
	URLs []string
	// NATS are extra connection options (credentials, TLS).
	NATS []nats.Option
	// Replicas is the stream's replication factor (default 3; 1 for a
	// single node).
	Replicas int
	// Stream names the stream (default DefaultStream); tests give each
	// store of theirs its own.
	Stream string
	// Clock stamps written_at and producer activity (default time.Now).
	Clock func() time.Time
	// Timeout bounds each request to the cluster (default 5s): with no
	// quorum the servers never answer.
	Timeout time.Duration
	// CommitTimeout bounds how long a commit keeps trying to be stored
	// while the cluster cannot take it (no leader: an election, a node
	// stopped; default DefaultCommitTimeout), unless its statement's
	// deadline comes first. A commit that stored nothing by then fails
	// with ErrUnavailable; one whose outcome is still in doubt then with
	// ErrOutcomeUnknown (jetstream/chain).
	CommitTimeout time.Duration
	// ProducerExpiry: see topicstore.DefaultProducerExpiry.
	ProducerExpiry time.Duration
	// RetentionInterval is how often the gateway holding the maintenance
	// lease applies retention (default 30s; negative: never, tests call
	// RunRetention).
	RetentionInterval time.Duration
	// GroupTTL is how long this gateway's read-session memberships outlive
	// its last renewal (default DefaultGroupTTL; jetstream/groups).
	GroupTTL time.Duration
	// CacheBytes bounds the cache of record batches this gateway wrote or
	// read (reads.Cache; default DefaultCacheBytes, negative: none).
	CacheBytes int64
	// StartTimeout bounds how long Open waits for a cluster that does not
	// answer yet (its nodes still starting, no JetStream meta leader, no
	// peers to place the stream on), trying again and logging what it
	// waits for (default DefaultStartTimeout; negative: no waiting). What
	// waiting cannot fix (credentials, TLS, a server too old, a stream
	// that is not topicgate's) fails at once.
	StartTimeout time.Duration
	// Name is what this gateway calls itself in the stream (its host and
	// listen address): sys.cluster shows it beside its id.
	Name string
	// Logger receives what an operator should see: a start that waits for
	// the cluster, maintenance that failed, a batch whose outcome was
	// settled late (default slog.Default()).
	Logger *slog.Logger
	// Monitor are the nodes' HTTP monitoring endpoints (http://host:8222,
	// ...): when given, the gateway checks that they sync every write
	// (jetstream/maintain).
	Monitor []string
	// CommitDelay is how long the committer may hold a group back for
	// the sessions that commit steadily but are not in it yet (pace.go;
	// default DefaultCommitDelay, negative: never).
	CommitDelay time.Duration
	// SnapshotEvery is how many stream messages the maintenance lease
	// holder lets pass between snapshots of the fold, from which a gateway
	// starts (jetstream/snapshot; default DefaultSnapshotEvery, negative: never).
	SnapshotEvery int
	// IgnoreSnapshots makes the gateway start by replaying the whole
	// stream, whatever snapshot there is.
	IgnoreSnapshots bool
	// DecisionHold is how long a wide transaction's decision stays in the
	// stream at least after it was taken (jetstream/wide; default
	// DefaultDecisionHold): a gateway whose fold falls further behind than
	// that may have to be restarted.
	DecisionHold time.Duration
}

// DefaultDecisionHold is Options.DecisionHold's default.
const DefaultDecisionHold = 10 * time.Minute

// DefaultCommitTimeout is Options.CommitTimeout's default: several times
// the 4-8 s a stream leader election takes here (doc.go), so that a
// commit rides one out as a delay rather than an error.
const DefaultCommitTimeout = time.Minute

// pingInterval and maxPingsOut: how a gateway notices a node that stopped
// answering on a connection that stays open.
const (
	pingInterval = 2 * time.Second
	maxPingsOut  = 3
)

// DefaultStartTimeout is Options.StartTimeout's default.
const DefaultStartTimeout = time.Minute

// DefaultCommitDelay is the committer's default CommitDelay: about half
// a batch's round trip on a three-node cluster here, so a held group
// gains more requests than the wait costs them (docs/cluster/commits.md
// has the measurements).
const DefaultCommitDelay = time.Millisecond

// DefaultCacheBytes is the record cache's default budget: enough for the
// last few hundred thousand small messages a gateway wrote.
const DefaultCacheBytes = 64 << 20

// Store is a topicstore.Store on a NATS JetStream cluster. See doc.go for
// the layout. Its state is a fold of the stream's message headers, kept
// current by one ordered consumer; every change goes through the stream.
type Store struct {
	opts   Options
	nc     *nats.Conn
	js     natsjs.JetStream
	stream natsjs.Stream
	subj   fold.Subjects // the stream's subjects; prefix "tg" for DefaultStream, else the lowercased stream name

	mu      sync.Mutex
	cond    *sync.Cond
	applied uint64 // highest stream sequence folded into the state
	// fold is the state the stream's messages fold into, under mu.
	fold    *fold.State
	closed  bool
	foldErr error
	filling bool   // a fill runs
	fillTo  uint64 // the highest sequence a fill was asked for
	stalled bool   // fill, not the consumer, folded the last message: the consumer is behind

	stage stagings
	chain *chain.Chain       // this gateway's chain, its batches in doubt and their resolution (jetstream/chain)
	wide  *wide.Transactions // this gateway's wide transactions, and the aborts of dead gateways' (jetstream/wide)
	io    clusterIO          // the commit protocol's I/O (io.go)
	// maxBatch is the most messages in one atomic batch (0:
	// jsext.MaxBatchMsgs; the simulation makes it small).
	maxBatch int
	// inline, set by the simulation only, runs a shared step's request
	// on the caller's goroutine (host_queue.go: Submit) instead of the
	// committer's.
	inline  func(*plan.Request)
	barrier barriers // read barriers (barrier.go)
	cons    natsjs.ConsumeContext
	commits chan *plan.Request
	done    chan struct{}
	wg      sync.WaitGroup

	leaders route.Leaders // pinned connections to the nodes; batches go to the leader's (jetstream/route)

	durable *maintain.Durability // the nodes' sync settings as last read (jetstream/maintain)
	// shWin is each partition's acquisition window (0:
	// sharedcore.DefaultWindow; the simulation makes it small, so that
	// windows move on and gateways' windows differ).
	shWin int
	shc   plan.SharedCaches // shared consumers' caches (filled by jetstream/queue)
	queue *queue.Queue      // shared consumers: topicstore.SharedStore (jetstream/queue)

	groups *groups.Groups        // read-session groups (jetstream/groups)
	maint  *maintain.Maintenance // the lease, the sweep and the jobs it schedules (jetstream/maintain)

	catalog *catalog.Catalog  // the topics and their changes, drops, splits (jetstream/catalog)
	reads   *reads.Reads      // Scan and the other reads, and the record cache (jetstream/reads)
	retain  *retain.Retention // retention's cuts (jetstream/retain)
	retire  *wide.Retirement  // wide transactions' decisions retired (jetstream/wide)

	answer answerers // this gateway's answers to Gather (gather.go)

	// Commit counters for ClusterStats (commit.go).
	commitGroups, commitRequests, commitReplans atomic.Int64
	commitHeld                                  atomic.Int64        // groups linger held back (pace.go)
	expiredProducers                            atomic.Int64        // producers expireProducers removed (producers.go)
	casBroken                                   atomic.Int64        // states stored over one they did not expect (fold_hooks.go: sharedCASBroken)
	snap                                        *snapshot.Snapshots // the fold's snapshots (jetstream/snapshot)
	// onApplied, set by the simulation only, runs under mu after the fold
	// applied each sequence.
	onApplied     func(seq uint64)
	barrierMisses atomic.Int64 // barrier.go
	ownApplied    atomic.Int64 // batches waitOwn folded from what it published (fold.go)

	pace pacer // sessions that committed lately; the committer's alone (pace.go)
}

// ClusterStats implements topicstore.ClusterStatter: the stream's state
// from its leader (one request, bounded by ctx and the store's timeout),
// this gateway's connection, fold and commit counters.
func (s *Store) ClusterStats(ctx context.Context) topicstore.ClusterStats {
	s.mu.Lock()
	applied := s.applied
	s.mu.Unlock()
	cs := topicstore.ClusterStats{Stream: s.opts.Stream, Applied: applied,
		CommitGroups: s.commitGroups.Load(), CommitRequests: s.commitRequests.Load(), Replans: s.commitReplans.Load(),
		CommitHeld:    s.commitHeld.Load(),
		BarrierMisses: s.barrierMisses.Load()}
	cs.CacheHits, cs.CacheMisses, cs.CacheBytes = s.reads.Cache().Stats()
	cs.Doubts, cs.WideTxns, cs.MaintenanceErrors = s.chain.Doubted(), s.wide.Begun(), s.maint.Errors()
	cs.ExpiredProducers, cs.ExpiredAcquires, cs.CASBroken = s.expiredProducers.Load(), s.queue.ExpiredAcquires(), s.casBroken.Load()
	s.mu.Lock()
	cs.DoubtsUnknown = s.chain.Unknown
	cs.SnapshotSeq, cs.SnapshotAt, cs.SnapshotFrom = s.fold.Snap.Last, s.fold.Snap.LastAt, s.fold.Snap.From
	cs.SnapshotsWritten, cs.SnapshotMismatches = s.snap.Written(), s.snap.Mismatches()
	now := s.opts.Clock()
	if s.fold.Lease.Holder != "" && now.Before(s.fold.Lease.Until) {
		cs.LeaseHolder = s.fold.Lease.Holder
		cs.LeaseHeld = s.fold.Lease.Holder == s.stage.gw
	}
	for gw, b := range s.fold.Groups.Beats {
		if now.Before(b.Until) || gw == s.stage.gw {
			cs.Gateways = append(cs.Gateways, topicstore.GatewayStats{ID: gw, Name: b.Name, Until: b.Until, Self: gw == s.stage.gw})
		}
	}
	s.mu.Unlock()
	sort.Slice(cs.Gateways, func(i, j int) bool { return cs.Gateways[i].ID < cs.Gateways[j].ID })
	cs.Durability = s.durable.Nodes()
	cs.LastRetention, cs.LastSweep, cs.LastMaintenanceError = s.maint.Last()
	if s.nc.IsConnected() {
		cs.Server = s.nc.ConnectedServerName()
	}
	cs.Reconnects = s.nc.Stats().Reconnects
	rctx, cancel := s.request(ctx)
	defer cancel()
	info, err := s.stream.Info(rctx)
	if err != nil {
		cs.StreamErr = s.unavailable(err)
		return cs
	}
	cs.Messages, cs.Bytes, cs.LastSeq = info.State.Msgs, info.State.Bytes, info.State.LastSeq
	if ci := info.Cluster; ci != nil {
		cs.Leader = ci.Leader
		for _, r := range ci.Replicas {
			cs.Replicas = append(cs.Replicas, topicstore.ReplicaStats{Name: r.Name, Current: r.Current, Offline: r.Offline, Lag: r.Lag})
		}
	}
	return cs
}

// Open connects to the cluster, checks it (jsext.Check), creates or adopts the
// stream and folds its state. A cluster that does not answer yet is waited
// for, up to Options.StartTimeout.
func Open(ctx context.Context, o Options) (*Store, error) {
	o = o.withDefaults()
	start := time.Now()
	for attempt := 0; ; attempt++ {
		s, err := open(ctx, o)
		if errors.Is(err, fold.ErrSnapshotUnusable) {
			o.Logger.Warn("not starting from the fold's snapshot: replaying the whole stream", "stream", o.Stream, "err", err)
			o.IgnoreSnapshots = true
			s, err = open(ctx, o)
		}
		if err == nil {
			if attempt > 0 {
				o.Logger.Info("the NATS cluster answers", "urls", jsext.RedactURLs(o.URLs), "after", time.Since(start).Round(time.Millisecond))
			}
			return s, nil
		}
		wait := min(250*time.Millisecond<<min(attempt, 5), 5*time.Second)
		if !startTransient(err) || ctx.Err() != nil || time.Since(start)+wait > o.StartTimeout {
			return nil, err
		}
		o.Logger.Warn("waiting for the NATS cluster", "urls", jsext.RedactURLs(o.URLs), "waited", time.Since(start).Round(time.Millisecond),
			"until", o.StartTimeout, "err", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// startTransient reports whether Open failed in a way that waiting may
// cure: no node reachable, or the nodes up but not answering for
// JetStream yet (no meta leader, no stream leader, no peers, or, in
// operator mode, the account's JetStream not enabled while a node still
// recovers its meta layer: a misconfigured account says the same, so its
// error comes when StartTimeout ends).
func startTransient(err error) bool {
	switch {
	case errors.Is(err, natsjs.ErrJetStreamNotEnabledForAccount):
		return true
	case errors.Is(err, jsext.ErrRefused), errors.Is(err, jsext.ErrTLS), errors.Is(err, jsext.ErrServerTooOld), errors.Is(err, jsext.ErrNoJetStream):
		return false
	case errors.Is(err, jsext.ErrUnreachable), errors.Is(err, topicstore.ErrUnavailable), transientCreate(err),
		errors.Is(err, nats.ErrNoResponders), errors.Is(err, natsjs.ErrNoStreamResponse):
		return true
	}
	switch jsext.ErrorCode(err) {
	case jsext.ErrCodeNoSuitablePeers, errCodeTemporarilyUnavailable:
		return true
	}
	return false
}

// open is one attempt of Open.
func open(ctx context.Context, o Options) (*Store, error) {
	nc, err := jsext.Connect(ctx, o.URLs, append([]nats.Option{nats.MaxReconnects(-1),
		// A node that stops answering (SIGSTOP, a network partition) is
		// noticed within a few seconds rather than nats.go's default
		// 2-4 minutes, and the connection moves to another node.
		nats.PingInterval(pingInterval), nats.MaxPingsOutstanding(maxPingsOut)}, o.NATS...)...)
	if err != nil {
		return nil, err
	}
	if err := jsext.Check(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	if need := int64(minPayload); nc.MaxPayload() < need {
		nc.Close()
		return nil, fmt.Errorf("the NATS server at %s allows messages of %d bytes (max_payload); topicgate stores a message of up to %d bytes in one: set max_payload: %d in every node's configuration",
			nc.ConnectedUrlRedacted(), nc.MaxPayload(), topicstore.MaxMessageSize, need)
	}
	js, err := natsjs.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s := newStore(o, newHolderGateway())
	s.nc, s.js = nc, js
	s.io = natsIO{s}
	if s.stream, err = s.ensureStream(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	if err := s.startFold(ctx); err != nil {
		if s.cons != nil {
			s.cons.Stop()
		}
		nc.Close()
		return nil, err
	}
	s.leaders.Start(route.Config{URLs: s.opts.URLs, Need: minPayload, Options: append([]nats.Option{nats.Timeout(s.opts.Timeout),
		nats.PingInterval(pingInterval), nats.MaxPingsOutstanding(maxPingsOut)}, s.opts.NATS...)}, host{s}, s.nc, s.opts.Stream)
	s.wg.Add(1)
	go s.committer()
	s.startGroups()
	s.startDurability()
	if o.RetentionInterval > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.maint.Run(s.done, o.RetentionInterval)
		}()
	}
	return s, nil
}

// withDefaults fills in the options left zero.
func (o Options) withDefaults() Options {
	if o.Replicas == 0 {
		o.Replicas = 3
	}
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.CommitTimeout == 0 {
		o.CommitTimeout = DefaultCommitTimeout
	}
	if o.DecisionHold <= 0 {
		o.DecisionHold = DefaultDecisionHold
	}
	if o.ProducerExpiry == 0 {
		o.ProducerExpiry = topicstore.DefaultProducerExpiry
	}
	if o.RetentionInterval == 0 {
		o.RetentionInterval = 30 * time.Second
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.CommitDelay == 0 {
		o.CommitDelay = DefaultCommitDelay
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// newHolderGateway picks a random non-zero gateway id.
func newHolderGateway() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

// newStore is a Store with its state empty and no connection: Open gives
// it the cluster; the simulation (sim_test.go) its own clusterIO.
func newStore(o Options, gw uint64) *Store {
	s := &Store{opts: o, commits: make(chan *plan.Request, 1024), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.subj = "tg"
	if o.Stream != DefaultStream {
		s.subj = fold.Subjects(strings.ToLower(o.Stream))
	}
	s.fold = fold.New(s.subj, o.Clock, foldHooks{s})
	s.catalog = catalog.New(catalog.Config{Subjects: s.subj, Fold: s.fold, Clock: o.Clock, Timeout: o.Timeout,
		MaxAttempts: maxAttempts}, host{s})
	s.reads = reads.New(reads.Config{Fold: s.fold, Clock: o.Clock, ProducerExpiry: o.ProducerExpiry, CacheBytes: o.CacheBytes}, host{s})
	// One random id names this gateway everywhere: lock holders (shared
	// consumers), staging subjects, chains, guards, record writers,
	// leases.
	s.queue = queue.New(queue.Config{Gateway: gw, Clock: o.Clock, Fold: s.fold, Caches: &s.shc}, host{s})
	s.stage = stagings{gw: strconv.FormatUint(gw, 16), open: map[uint64]*staging{}}
	s.chain = chain.New(chain.Config{Gateway: s.stage.gw, Subjects: s.subj, Fold: s.fold, Clock: o.Clock, Timeout: o.Timeout,
		URLs: o.URLs, Logger: o.Logger}, host{s})
	s.wide = wide.NewTransactions(wide.Config{Gateway: s.stage.gw, Subjects: s.subj, Fold: s.fold, Clock: o.Clock,
		Timeout: o.Timeout, Hold: o.DecisionHold, URLs: o.URLs, Logger: o.Logger, Chain: s.chain}, host{s}, wideCommit{s})
	s.retain = retain.New(retain.Config{Gateway: s.stage.gw, Subjects: s.subj, Fold: s.fold, Timeout: o.Timeout}, host{s})
	s.retire = wide.New(wide.Config{Subjects: s.subj, Fold: s.fold, Timeout: o.Timeout, Hold: o.DecisionHold}, host{s})
	s.groups = groups.New(groups.Config{Gateway: s.stage.gw, Name: o.Name, Subjects: s.subj, Clock: o.Clock,
		Timeout: o.Timeout, TTL: o.GroupTTL, Fold: s.fold}, host{s})
	s.maint = maintain.New(maintain.Config{Gateway: s.stage.gw, Subjects: s.subj, Clock: o.Clock, Timeout: o.Timeout,
		TTL: s.groups.TTL(), Fold: s.fold, Logger: o.Logger}, host{s}, maintJobs{s})
	s.snap = snapshot.New(snapshot.Config{Gateway: s.stage.gw, Stream: o.Stream, Replicas: o.Replicas, Subjects: s.subj,
		Fold: s.fold, Every: o.SnapshotEvery, Timeout: o.Timeout, Pull: foldPull, Logger: o.Logger}, host{s})
	s.durable = maintain.NewDurability(o.Monitor, o.Timeout, o.Logger)
	return s
}

// startDurability starts the check that the nodes sync every write, or
// says that the nodes' durability is not known.
func (s *Store) startDurability() {
	if len(s.opts.Monitor) == 0 {
		s.opts.Logger.Info("whether the NATS nodes sync every write to disk is not known to this gateway: give their monitoring endpoints (--nats-monitor) to have it checked")
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.durable.Run(s.done)
	}()
}

// DefaultGroupTTL is how long a gateway's read-session memberships outlive
// its last renewal (Options.GroupTTL).
const DefaultGroupTTL = groups.DefaultTTL

// startGroups publishes the first heartbeat (groups.Groups.Start) and
// starts the goroutine that publishes announcements and renews it. Open
// calls it once the fold has caught up.
func (s *Store) startGroups() {
	s.groups.Start()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.groups.Loop(s.done)
	}()
}

// GatewayID implements topicstore.GroupCoordinator.
func (s *Store) GatewayID() string { return s.stage.gw }

// Announce implements topicstore.GroupCoordinator.
func (s *Store) Announce(topic, consumer string, a topicstore.Announcement) error {
	return s.groups.Announce(topic, consumer, a)
}

// Members implements topicstore.GroupCoordinator.
func (s *Store) Members(topic, consumer string) (topicstore.GroupView, <-chan struct{}, error) {
	return s.groups.Members(topic, consumer)
}

var _ topicstore.GroupCoordinator = (*Store)(nil)

// minPayload is the max_payload a node must allow: a topicgate message of
// up to MaxMessageSize is stored in one NATS message, with room for its
// headers.
const minPayload = topicstore.MaxMessageSize + 1<<20

// streamMark is the metadata that marks a stream as topicgate's.
const streamMark = "topicgate.store"

// createTries bounds the creations of the stream at start (transientCreate).
const createTries = 3

// errCodeTemporarilyUnavailable: "JetStream system temporarily
// unavailable", a node without a quorum for the stream.
const errCodeTemporarilyUnavailable = 10008

// Close stops the store; it may be called more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	close(s.done)
	s.wg.Wait()
	if s.cons != nil {
		// nats.go's Stop waits for a re-creation of the ordered consumer in
		// progress (after the node that held it died: a request of up to
		// 10s, then a back-off of up to 10s, seen as a 10.7s Close), so it
		// is given a moment and then left to finish once the connection is
		// closed, rather than holding the gateway's shutdown.
		stopped := make(chan struct{})
		go func() {
			s.cons.Stop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(closeStopWait):
		}
	}
	s.leaders.Close()
	s.nc.Close()
	return nil
}

// closeStopWait bounds Close's wait for the fold's consumer to stop.
const closeStopWait = 500 * time.Millisecond

// isClosed reports whether Close was called.
func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// request returns a context bounded by the store's timeout.
func (s *Store) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.Timeout)
}

// noLeader reports whether a publish found no node to take it: the
// stream has no leader this moment (an election) or no node is up.
// Nothing of it was stored, so it may be published again.
func noLeader(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, natsjs.ErrNoStreamResponse)
}

// awaitLeader waits before the attempt+1st publish after noLeader: until
// the fold applies something (a leader took another gateway's write) or
// 10 ms growing to 250 ms.
func (s *Store) awaitLeader(attempt int) {
	s.mu.Lock()
	from := s.applied
	s.mu.Unlock()
	s.waitAdvance(from, min(10*time.Millisecond<<min(attempt, 5), 250*time.Millisecond))
}

// unavailable wraps a cluster error so the caller can tell it apart.
func (s *Store) unavailable(err error) error {
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, natsjs.ErrNoStreamResponse) {
		// At once, not after the timeout: no node serves the stream now.
		return fmt.Errorf("%w: the NATS cluster (%s) has no leader for stream %s (is a majority of its nodes up?): %v", topicstore.ErrUnavailable, jsext.RedactURLs(s.opts.URLs), s.opts.Stream, err)
	}
	if jsext.ErrorCode(err) == errCodeTemporarilyUnavailable {
		return fmt.Errorf("%w: the NATS cluster (%s) has no quorum for stream %s: %v", topicstore.ErrUnavailable, jsext.RedactURLs(s.opts.URLs), s.opts.Stream, err)
	}
	if errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting) {
		// The gateway's connection to its node dropped: it reconnects
		// to another, and the statement may be run again.
		return fmt.Errorf("%w: the connection to the NATS cluster (%s) is down, reconnecting: %v", topicstore.ErrUnavailable, jsext.RedactURLs(s.opts.URLs), err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("%w: the NATS cluster (%s) did not answer within %v: %v", topicstore.ErrUnavailable, jsext.RedactURLs(s.opts.URLs), s.opts.Timeout, err)
	}
	return err
}
