package txn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// Mode is which kind of transaction a session's statements run in.
type Mode uint8

// Modes.
const (
	// Autocommit: no block is open; each statement that has effects runs
	// in an implicit transaction of its own (Statement).
	Autocommit Mode = iota
	// ImplicitBlock: the statements of a multi-statement query or of an
	// extended-protocol pipeline, up to Sync, as PostgreSQL runs them.
	ImplicitBlock
	// ExplicitBlock: BEGIN ... COMMIT or ROLLBACK.
	ExplicitBlock
)

// ErrAborted is the answer to a statement in a failed block.
var ErrAborted = pgerror.New(pgerror.CodeInFailedSQLTransaction,
	"current transaction is aborted, commands ignored until end of transaction block")

// Conn is one session's transaction state machine, in the manner of
// CockroachDB's connExecutor: every statement runs inside a transaction,
// the open block's (explicit or implicit) or, in autocommit, one of its
// own, and every transaction ends through the one commit path (commit)
// or is rolled back. It also holds the shared-consumer messages the block
// acquired (held.go). A Conn is owned by its session's goroutine.
type Conn struct {
	m       *Manager
	session uint32
	mode    Mode
	// tx is the open block's transaction; nil in Autocommit.
	tx *Txn
	// stmt is the transaction of the autocommit statement running
	// Statement's stage; nil otherwise.
	stmt *Txn
	// spare is a finished statement transaction kept for the next one,
	// so an autocommit INSERT allocates no transaction.
	spare *Txn
	held  held
	// used are the shared consumers the session acquired from (Acquiring).
	used map[SharedKey]bool
	// l hears of the session's transactions (Listener); nil: nobody.
	l Listener
}

// Listener is the session's side of its transactions: the executor's
// session gives one to Manager.Conn, and the Conn asks it before each
// commit and tells it when each transaction is over, so the session
// never has to compare transactions to learn that one ended. Both are
// called on the session's goroutine.
type Listener interface {
	// CheckCommit is asked on the one commit path before a transaction
	// reaches the store (the executor's check: every partition the
	// transaction read is still this session's), except for an
	// at-least-once read (Txn.AtLeastOnce). Its error rolls the
	// transaction back and is the commit's error as is.
	CheckCommit(tx *Txn) error
	// Ended is told once, when tx is over: committed (the store stored
	// it, or there was nothing to store), or rolled back (ROLLBACK, a
	// COMMIT of a failed block, a failed autocommit statement, a failed
	// commit, the session's close). The messages the block held are
	// acknowledged or released by then. A ROLLBACK TO SAVEPOINT ends no
	// transaction and is not told.
	Ended(tx *Txn, committed bool)
}

// ended tells the listener that tx is over.
func (c *Conn) ended(tx *Txn, committed bool) {
	if c.l != nil {
		c.l.Ended(tx, committed)
	}
}

// Mode returns the mode of the session's next statement.
func (c *Conn) Mode() Mode { return c.mode }

// Block returns the open block's transaction, nil in autocommit.
func (c *Conn) Block() *Txn { return c.tx }

// Current returns the transaction the running statement's effects go to:
// the open block's, or the autocommit statement's inside Statement; nil
// in autocommit outside Statement.
func (c *Conn) Current() *Txn {
	if c.tx != nil {
		return c.tx
	}
	return c.stmt
}

// State is the transaction status ReadyForQuery reports.
func (c *Conn) State() State {
	if c.tx == nil {
		return Idle
	}
	return c.tx.state
}

// Begin opens a block of mode (ImplicitBlock or ExplicitBlock) and
// returns its transaction. A block already open stays as it is.
func (c *Conn) Begin(mode Mode) *Txn {
	if c.tx == nil {
		c.tx = c.m.begin()
		c.mode = mode
	}
	return c.tx
}

// MakeExplicit turns the open implicit block into an explicit one (BEGIN
// inside a multi-statement query).
func (c *Conn) MakeExplicit() {
	if c.tx != nil {
		c.mode = ExplicitBlock
	}
}

// Fail moves the open block to the failed state: a statement of it
// failed.
func (c *Conn) Fail() {
	if c.tx != nil {
		c.tx.Fail()
	}
}

// Guard refuses a statement in a failed block (ErrAborted, 25P02) unless
// it ends the block (endsTxn: COMMIT, ROLLBACK, ROLLBACK TO SAVEPOINT).
func (c *Conn) Guard(endsTxn bool) error {
	if c.tx != nil && c.tx.state == Failed && !endsTxn {
		return ErrAborted
	}
	return nil
}

// Result is what a commit wrote.
type Result struct {
	topicstore.CommitResult
	// Topics are the topics written, in the order of CommitResult.Writes.
	Topics []string
	// StoreErr is the store's own error when the commit failed, before
	// its mapping to a SQLSTATE (the Kafka door maps it to Kafka's codes).
	StoreErr error
}

// End ends the open block: it commits it when commit is true and the
// block did not fail, and rolls it back otherwise (committed false; a
// COMMIT of a failed block answers ROLLBACK, as in PostgreSQL). A failed
// commit rolls back too and returns the error mapped to its SQLSTATE.
func (c *Conn) End(ctx context.Context, commit bool) (res Result, committed bool, err error) {
	tx := c.tx
	c.tx, c.mode = nil, Autocommit
	if tx == nil {
		return Result{}, false, nil
	}
	if !commit || tx.state == Failed {
		c.rollback(tx)
		return Result{}, false, nil
	}
	res, err = c.commit(ctx, tx)
	return res, err == nil, err
}

// Rollback rolls the open block back, if there is one.
func (c *Conn) Rollback() {
	if c.tx != nil {
		tx := c.tx
		c.tx, c.mode = nil, Autocommit
		c.rollback(tx)
	}
}

// Close ends the session: an open block rolls back, and every lock the
// session holds on a shared consumer it acquired from (Acquiring) is
// released, as a failed attempt.
func (c *Conn) Close() {
	if tx := c.tx; tx != nil {
		tx.discard()
		c.tx, c.mode = nil, Autocommit
		c.m.rollbacks.Add(1)
		c.ended(tx, false)
	}
	for k := range c.used {
		c.release(k, nil, 0)
	}
	c.held, c.used = nil, nil
}

// Statement runs one statement's effects: stage stages writes, records
// reads and holds shared messages on the transaction it is given. In a
// block (or inside another Statement) that is the current transaction,
// and the effects commit with it. In autocommit it is an implicit
// transaction of the statement's own, committed through the one commit
// path when stage returns nil and rolled back when it fails.
func (c *Conn) Statement(ctx context.Context, stage func(*Txn) error) (Result, error) {
	if cur := c.Current(); cur != nil {
		return Result{}, stage(cur)
	}
	tx := c.spare
	c.spare = nil
	if tx == nil {
		tx = c.m.begin()
		tx.autocommit = true
	} else {
		tx.restart(c.m.nextID.Add(1), c.m.opts.Clock())
	}
	c.stmt = tx
	err := stage(tx)
	c.stmt = nil
	defer func() { c.spare = tx }()
	if err != nil {
		c.rollback(tx)
		return Result{}, err
	}
	return c.commit(ctx, tx)
}

// rollback discards tx and hands back what the block held.
func (c *Conn) rollback(tx *Txn) {
	tx.discard()
	c.releaseHeld()
	c.m.rollbacks.Add(1)
	c.ended(tx, false)
}

// commit is the one commit path: every transaction that publishes,
// moves a position or acknowledges ends here. It checks the transaction
// (Listener.CheckCommit), adds the acknowledgements of the shared messages held,
// sends one CommitRequest to the store, maps a refusal to its SQLSTATE
// (StoreError) and counts the outcome. Either way the transaction is over
// when it returns, and the listener was told (Listener.Ended).
func (c *Conn) commit(ctx context.Context, tx *Txn) (Result, error) {
	res := Result{Topics: tx.Topics()}
	if tx.state == Failed {
		c.rollback(tx)
		return res, ErrFailed
	}
	if c.l != nil && !tx.atLeastOnce {
		if err := c.l.CheckCommit(tx); err != nil {
			c.rollback(tx)
			c.count(err)
			return res, err
		}
	}
	tx.acks = c.held.acks(c.session)
	req := tx.Request()
	req.Session = c.session
	if len(req.Writes) == 0 && len(req.Positions) == 0 && len(req.Acks) == 0 {
		tx.discard()
		c.held = nil
		c.ended(tx, true)
		return res, nil
	}
	start := time.Now()
	cr, err := c.m.store.Commit(ctx, req)
	if tx.atLeastOnce && errors.Is(err, topicstore.ErrPositionConflict) {
		cr, err = topicstore.CommitResult{}, nil // one position, moved since: the other's stands
		if len(req.Positions) > 1 {
			cr, err = c.commitEach(ctx, req)
		}
	}
	if o := c.m.opts.ObserveCommit; o != nil && !tx.autocommit {
		o(time.Since(start))
	}
	res.CommitResult = cr
	res.StoreErr = err
	if err != nil {
		if errors.Is(err, topicstore.ErrOutcomeUnknown) {
			// The store keeps what the transaction staged until it learns
			// whether the commit was stored.
			tx.spilled = false
			err = fmt.Errorf("transaction %d: %w", tx.ID, err)
		}
		c.rollback(tx)
		if len(req.Positions) > 0 || len(req.Acks) > 0 {
			err = CommitError(err, strings.Join(res.Topics, ", "))
		} else {
			err = StoreError(err, strings.Join(res.Topics, ", "))
		}
		c.count(err)
		return res, err
	}
	tx.spilled = false // the store owns the staged data now
	tx.discard()
	c.held = nil
	c.m.commits.Add(1)
	c.ended(tx, true)
	return res, nil
}

// commitEach commits an at-least-once read's positions one by one after
// their joint commit conflicted: a position another session moved since
// the read keeps the other's value (the rows were delivered; some may
// come again), the others move.
func (c *Conn) commitEach(ctx context.Context, req *topicstore.CommitRequest) (topicstore.CommitResult, error) {
	for _, u := range req.Positions {
		_, err := c.m.store.Commit(ctx, &topicstore.CommitRequest{Positions: []topicstore.PositionUpdate{u}})
		if err != nil && !errors.Is(err, topicstore.ErrPositionConflict) {
			return topicstore.CommitResult{}, err
		}
	}
	return topicstore.CommitResult{}, nil
}

// count counts a refused commit as a conflict (40001) or an error.
func (c *Conn) count(err error) {
	if pgerror.Code(err) == pgerror.CodeSerializationFailure {
		c.m.conflicts.Add(1)
	} else {
		c.m.commitErrors.Add(1)
	}
}

// Savepoint is a SAVEPOINT of the open explicit block: the staging's mark
// and the shared messages held then.
type Savepoint struct {
	mark Mark
	held held
}

// Savepoint returns the open block's current point.
func (c *Conn) Savepoint() Savepoint {
	return Savepoint{mark: c.tx.Mark(), held: c.held.clone()}
}

// RollbackTo returns the open block to sp: what was staged and read
// since is dropped, the failure cleared, and the shared messages acquired
// since go back to the queue (those released or rejected since have left
// for good). On error (a spill since sp) nothing changed.
func (c *Conn) RollbackTo(sp Savepoint) error {
	if err := c.tx.RollbackTo(sp.mark); err != nil {
		return err
	}
	for k, m := range c.held {
		var refs []topicstore.MsgRef
		for r := range m {
			if !sp.held[k][r] {
				refs = append(refs, r)
			}
		}
		if len(refs) > 0 {
			c.release(k, refs, len(refs))
		}
	}
	now := c.held
	c.held = nil
	for k, m := range sp.held {
		for r := range m {
			if now[k][r] {
				c.held.add(k, []topicstore.MsgRef{r})
			}
		}
	}
	return nil
}
