package consume

import (
	"context"
	"time"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// Config is what a Reader is given of its session and engine.
type Config struct {
	// PID is the session's process id: who joins a read session and holds
	// partitions, who acquires shared messages.
	PID uint32
	// Conn is the session's transaction state: reads record their
	// positions in its transaction, shared messages are held, released
	// and acknowledged through it.
	Conn  *txn.Conn
	Store topicstore.Store
	// Groups is the engine's registry of consumer groups.
	Groups *Groups
	// Idle is how long a read session keeps its partitions without reading
	// (DefaultReadSessionIdle when 0).
	Idle time.Duration
	// NoteRead counts n messages of nbytes read from topic (the engine's
	// metrics); nil: not counted.
	NoteRead func(topic string, n, nbytes int64)
}

// Reader is one session's consumption: its reads as consumers, what they
// hold (read sessions joined, partitions held for its transactions, the
// statement's delivery) and its shared consumers' acknowledgements. The
// session owns one and uses it from its goroutine only, as the session
// itself is used.
type Reader struct {
	cfg Config
	// joined are the consumer groups this session reads in -> topic, left
	// by Leave.
	joined map[*Group]string
	// txHolds are the partitions held for this session's transactions
	// (handoff.go), released when the transaction is over (EndTx).
	txHolds []sessionHold
	// arena holds copies of message bodies for consumer reads; its chunks
	// are handed to rows and never reused, only replaced.
	arena rowexec.Arena
	// deliver collects the effects of the row-returning statement being
	// run that wait for its rows to reach the client (delivery.go); nil
	// otherwise.
	deliver *Delivery
	// pendingDurable are acknowledgements decided but not yet known to be
	// synced; WaitDurable runs them before output reaches the client.
	pendingDurable []func() error
}

// NewReader returns a session's Reader.
func NewReader(cfg Config) *Reader {
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultReadSessionIdle
	}
	return &Reader{cfg: cfg}
}

// Open opens a read as a consumer: a streaming consumer's read from its
// held partitions (read.go) or a shared consumer's acquisition
// (shared.go), or under EXPLAIN ANALYZE a read that moves and locks
// nothing. direct, when not nil, offers an encoder a read without a
// filter (streaming or shared) may encode its rows into (direct.go;
// Encoded finds them).
func (rd *Reader) Open(ctx context.Context, ec *rowexec.EvalCtx, n *plantree.ConsumerReadNode, direct func() *wire.RowEncoder) (rowexec.Iter, error) {
	if !n.Fused {
		return nil, pgerror.AssertionFailed("a read as consumer \"%s\" without its projection (rule fuseConsumerRead)", n.Read.Consumer)
	}
	switch {
	case ec.Analyzing():
		return rd.analyze(ctx, ec, n)
	case n.Read.Shared:
		return rd.readShared(ctx, ec, n, direct)
	}
	return rd.read(ctx, ec, n, direct)
}

// WithDelivery runs f (the start of a statement that returns rows) with d
// as the delivery its reads' effects wait in, reset however f ends.
func (rd *Reader) WithDelivery(d *Delivery, f func() (rowexec.Iter, error)) (rowexec.Iter, error) {
	rd.deliver = d
	defer func() { rd.deliver = nil }()
	return f()
}

// CheckHeld fails a commit whose transaction read a partition that was
// reassigned to another read session since (SQLSTATE 40001): the
// session's txn.Listener asks it before each commit.
func (rd *Reader) CheckHeld(tx *txn.Txn) error {
	for _, k := range tx.Reads() {
		if !rd.cfg.Groups.Get(k.Topic, k.Consumer).holds(rd.cfg.PID, k.Partition) {
			return pgerror.Newf(pgerror.CodeSerializationFailure,
				"could not commit: partition %d of topic \"%s\" was reassigned to another read session of consumer \"%s\"; retry the transaction",
				k.Partition, k.Topic, k.Consumer)
		}
	}
	return nil
}

// WaitDurable waits until every acknowledgement and delivery count this
// session decided is synced (the session's wire.DurabilityBarrier).
func (rd *Reader) WaitDurable() error {
	var first error
	for _, wait := range rd.pendingDurable {
		if err := wait(); err != nil && first == nil {
			first = err
		}
	}
	rd.pendingDurable = rd.pendingDurable[:0]
	return first
}

// Leave leaves every read session the session joined (it closes); its
// partitions go to the consumers' other sessions.
func (rd *Reader) Leave() {
	for g := range rd.joined {
		g.leave(rd.cfg.PID)
	}
	rd.joined = nil
}

// join remembers which consumer groups this session reads in, so Leave
// can leave them.
func (rd *Reader) join(g *Group, topic string) {
	if rd.joined == nil {
		rd.joined = map[*Group]string{}
	}
	rd.joined[g] = topic
}

func (rd *Reader) noteRead(topic string, n, nbytes int64) {
	if rd.cfg.NoteRead != nil {
		rd.cfg.NoteRead(topic, n, nbytes)
	}
}
