package txn

import (
	"context"
	"sync/atomic"
	"time"

	"topicgate/topicstore"
)

// Committer is the narrow part of a store the transaction manager needs:
// the one atomic commit (Commit) and the release of shared-consumer
// messages the session acquired (ReleaseSession, ReleaseUndelivered;
// held.go's release is their one caller). It also declares
// Producer, which this package never calls through it: Admit takes its
// producer lookup from its caller (ProducerLookup). Both backends
// implement it as part of topicstore.Store; a store that is also a
// topicstore.Stager lets large transactions spill to it.
type Committer interface {
	Commit(ctx context.Context, req *topicstore.CommitRequest) (topicstore.CommitResult, error)
	Producer(topic, producer string) (info topicstore.ProducerInfo, ok bool)
	ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef)
	ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef)
}

// Options configure a Manager.
type Options struct {
	// Clock stamps each transaction's start (default time.Now).
	Clock func() time.Time
	// MaxStagedBytes bounds one transaction's staging (0:
	// DefaultMaxStagedBytes).
	MaxStagedBytes int64
	// SpillBytes is Txn.SpillBytes for every transaction (0:
	// DefaultSpillBytes; < 0 never spill).
	SpillBytes int64
	// ObserveCommit, if set, is called after the store commit of every
	// block (explicit or implicit) with its latency (metrics).
	ObserveCommit func(d time.Duration)
}

// Manager is the engine-wide transaction manager: it numbers
// transactions, owns the counters /metrics shows and hands each session a
// Conn. It is safe for concurrent use; a Conn is not.
type Manager struct {
	store  Committer
	stager topicstore.Stager // nil: everything staged stays in memory
	opts   Options
	nextID atomic.Uint64

	commits, rollbacks, conflicts, commitErrors atomic.Int64
}

// NewManager returns a manager committing to store.
func NewManager(store Committer, o Options) *Manager {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.MaxStagedBytes <= 0 {
		o.MaxStagedBytes = DefaultMaxStagedBytes
	}
	if o.SpillBytes == 0 {
		o.SpillBytes = DefaultSpillBytes
	}
	m := &Manager{store: store, opts: o}
	if sg, ok := store.(topicstore.Stager); ok {
		m.stager = sg
	}
	return m
}

// Stats are the manager's counters since it started.
type Stats struct {
	// Commits counts transactions committed: blocks and autocommit
	// statements that wrote, moved a position or acknowledged.
	Commits int64
	// Rollbacks counts transactions that ended without committing:
	// ROLLBACK, COMMIT of a failed block, a failed implicit transaction,
	// a commit that failed (conflicts included), a session closed inside
	// a block.
	Rollbacks int64
	// Conflicts counts commits refused with SQLSTATE 40001.
	Conflicts int64
	// CommitErrors counts commits the store refused for another reason.
	CommitErrors int64
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	return Stats{Commits: m.commits.Load(), Rollbacks: m.rollbacks.Load(), Conflicts: m.conflicts.Load(),
		CommitErrors: m.commitErrors.Load()}
}

// begin starts a transaction.
func (m *Manager) begin() *Txn {
	t := Begin(m.nextID.Add(1), m.opts.Clock(), m.opts.MaxStagedBytes)
	t.SpillBytes = m.opts.SpillBytes
	t.stager = m.stager
	return t
}

// Conn returns the transaction state of a new session; l (may be nil)
// hears of its transactions.
func (m *Manager) Conn(session uint32, l Listener) *Conn {
	return &Conn{m: m, session: session, l: l}
}
