package executor

import (
	"context"
	"sync"
	"time"

	"topicgate/authz"
	"topicgate/consume"
	"topicgate/executor/internal/settings"
	"topicgate/metrics"
	"topicgate/sql"
	"topicgate/sql/parser"
	"topicgate/sysview"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// Version is topicgate's version, reported by version() and server_version.
const Version = "0.1.0"

// DefaultReadSessionIdle is how long a read session keeps its partitions
// without reading before they are handed to the consumer's other sessions.
const DefaultReadSessionIdle = consume.DefaultReadSessionIdle

// DefaultHandoffGrace is how long a partition that a rebalance wants to
// move stays with a holder whose transaction or read is still in flight.
const DefaultHandoffGrace = consume.DefaultHandoffGrace

// Options configure an Engine.
type Options struct {
	// Clock is the time source (default time.Now).
	Clock func() time.Time
	// MaxTxnBytes bounds what one transaction may stage.
	MaxTxnBytes int64
	// ReadSessionIdle is how long a read session keeps its partitions
	// without reading (default DefaultReadSessionIdle).
	ReadSessionIdle time.Duration
	// HandoffGrace is how long a partition a rebalance wants to move stays
	// with a read session whose transaction (or autocommit read) on it is
	// still in flight (default DefaultHandoffGrace; negative: it moves at
	// once). See consume/handoff.go.
	HandoffGrace time.Duration
	// MaxQueryBytes bounds the rows one statement holds to sort or group
	// (default DefaultMaxQueryBytes; negative: no limit).
	MaxQueryBytes int64
	// Auth is the server's authentication method ("trust", "password",
	// "md5", "scram-sha-256"): how new passwords are stored, and whether a
	// login that names no role is the bootstrap superuser.
	Auth string
	// Auditor, when set, is told of each statement as it ends (the audit
	// log, audit.go); nil: no auditing.
	Auditor Auditor
	// Trace, when set, is told of session and statement events, on the
	// session's goroutine (tests use it to act when a statement is
	// running, and to see a session end); it must not block.
	Trace func(Event)
}

// Event is one thing that happened to a session (Options.Trace).
type Event struct {
	Kind EventKind
	PID  uint32 // the session's process id (BackendKeyData)
}

// EventKind says what happened.
type EventKind int

const (
	// EventStatementStart: a portal began (or resumed) executing.
	EventStatementStart EventKind = iota + 1
	// EventStatementEnd: that execution returned.
	EventStatementEnd
	// EventSessionEnd: the session closed and released what it held.
	EventSessionEnd
)

func (e *Engine) trace(k EventKind, pid uint32) {
	if e.opts.Trace != nil {
		e.opts.Trace(Event{Kind: k, PID: pid})
	}
}

// Engine runs statements against a store. It implements wire.Handler: one
// Session per connection.
type Engine struct {
	store topicstore.Store
	opts  Options
	txm   *txn.Manager // every transaction of every session
	authz *authz.Authority
	// signal cancels or ends a session of this process by pid (the wire
	// server's Signal); remoteSignal asks the other gateways to (nil: a
	// store of one process). Both set by SetSignal.
	signal       func(pid uint32, terminate bool) bool
	remoteSignal func(pid uint32, terminate bool)
	// kafkaConns lists the Kafka door's connections and kafkaClose closes
	// one by its sys.sessions pid (SetKafkaSessions); nil without the
	// door.
	kafkaConns func() []sysview.SessionView
	kafkaClose func(pid int64) bool
	cache      parseCache
	sessions   sync.Map // processID -> *Session
	// groups are the consumer groups the sessions read in (package
	// consume; each session's reads go through its consume.Reader).
	groups *consume.Groups
	// views makes the sys views' rows (views.go).
	views   *sysview.Views
	metrics metrics.Metrics
}

// New returns an engine over st.
func New(st topicstore.Store, opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	switch {
	case opts.MaxQueryBytes == 0:
		opts.MaxQueryBytes = DefaultMaxQueryBytes
	case opts.MaxQueryBytes < 0:
		opts.MaxQueryBytes = 0 // no limit
	}
	e := &Engine{store: st, opts: opts}
	e.authz = authz.New(st, authz.Options{Auth: opts.Auth, Clock: opts.Clock})
	e.txm = txn.NewManager(st, txn.Options{Clock: opts.Clock, MaxStagedBytes: opts.MaxTxnBytes,
		ObserveCommit: func(d time.Duration) { e.metrics.Observe(metrics.KindCommit, d) }})
	e.groups = consume.NewGroups(st, opts.Clock, opts.HandoffGrace)
	// The sys views; on a store several gateways share, this gateway
	// answers the others for its sessions from now on.
	e.views = sysview.New(st, opts.Clock, (*viewsLocal)(e))
	return e
}

// SetSignal gives the engine the wire server's way to cancel or end a
// connection (pg_cancel_backend, pg_terminate_backend); call it before
// serving; remote asks the other gateways of a cluster to (nil: none).
func (e *Engine) SetSignal(local func(pid uint32, terminate bool) bool, remote func(pid uint32, terminate bool)) {
	e.signal, e.remoteSignal = local, remote
}

// Authority is the engine's authorization: the role catalog and the
// checks made from it.
func (e *Engine) Authority() *authz.Authority { return e.authz }

// Transactions returns the engine's transaction manager, which the Kafka
// door's transactions run in too.
func (e *Engine) Transactions() *txn.Manager { return e.txm }

// NewSession implements wire.Handler.
func (e *Engine) NewSession(ctx context.Context, info wire.SessionInfo) (wire.Session, error) {
	if err := settings.CheckStartup(info); err != nil {
		return nil, err
	}
	id, leave, err := e.authz.Admit(info.User)
	if err != nil {
		return nil, err
	}
	s := &Session{eng: e, info: info, settings: settings.New(info), id: id, leave: leave, started: e.opts.Clock()}
	s.settings.OnIdentity(s.identityApplied)
	s.noteSuperuser()
	s.txc = e.txm.Conn(info.ProcessID, (*txnListener)(s))
	s.rd = consume.NewReader(consume.Config{PID: info.ProcessID, Conn: s.txc, Store: e.store, Groups: e.groups,
		Idle: e.opts.ReadSessionIdle, NoteRead: e.metrics.NoteRead})
	s.publishStatus() // its application_name, before its first statement
	e.sessions.Store(info.ProcessID, s)
	return s, nil
}

// parseCache keeps parsed statements by query text: drivers send the same
// text over and over (BEGIN, COMMIT, simple-protocol INSERTs), and parsed
// ASTs are immutable.
type parseCache struct {
	mu sync.Mutex
	m  map[string][]sql.Stmt
}

const parseCacheSize = 4096

func (c *parseCache) parse(q string) ([]sql.Stmt, error) {
	c.mu.Lock()
	stmts, ok := c.m[q]
	c.mu.Unlock()
	if ok {
		return stmts, nil
	}
	stmts, err := parser.Parse(q)
	if err != nil {
		return nil, err
	}
	if len(q) <= 4096 {
		c.mu.Lock()
		if c.m == nil || len(c.m) >= parseCacheSize {
			c.m = make(map[string][]sql.Stmt)
		}
		c.m[q] = stmts
		c.mu.Unlock()
	}
	return stmts, nil
}

// Topic implements planner.Catalog.
func (e *Engine) Topic(name string) (topicstore.TopicInfo, error) { return e.store.Topic(name) }

// DefaultMaxQueryBytes bounds what one statement may hold in memory to sort
// or group rows (Options.MaxQueryBytes).
const DefaultMaxQueryBytes = 512 << 20
