package executor

import (
	"context"

	"topicgate/executor/internal/settings"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/txn"
	"topicgate/wire"
)

// Transaction blocks. An explicit block runs from BEGIN to COMMIT or
// ROLLBACK. The statements of one simple Query message that holds more
// than one statement run in an implicit block, as in PostgreSQL: it begins
// with the first of them and ends at the message's end (Sync), committed
// if every statement succeeded and rolled back otherwise, so an error in
// the third statement leaves nothing of the first two. A BEGIN among them
// makes the block explicit; a COMMIT or ROLLBACK among them ends it with a
// warning, as PostgreSQL does.
//
// Shared-consumer reads in an implicit block take their locks as in
// autocommit: the block's end does not acknowledge them (a multi-statement
// query is no promise that its rows were processed), and a consumer read's
// positions commit at the block's end only once its rows were flushed.
//
// Where topicgate differs: topic DDL and UPDATE sys.consumers are not
// transactional, so such a statement in a multi-statement query first
// commits the implicit block before it (the statements after it begin a
// new one) instead of being rolled back with it.

// beginBlock opens a transaction block (txn.ImplicitBlock or
// txn.ExplicitBlock): the transaction manager's, and the block's SET LOCAL
// scope.
func (s *Session) beginBlock(mode txn.Mode) {
	s.txc.Begin(mode)
	s.settings.Begin()
}

// endBlock commits (commit, and the block did not fail) or rolls back the
// open block through the transaction manager and returns the command tag;
// the session's own state of the block (settings, cursors, savepoints)
// follows the outcome (the cursors through txnListener.Ended).
func (s *Session) endBlock(ctx context.Context, out wire.Output, commit bool) (string, error) {
	s.savepoints = nil
	res, committed, err := s.txc.End(ctx, commit)
	if err == nil && committed {
		s.settings.Commit()
		s.afterCommit(ctx, out, &res)
		return "COMMIT", nil
	}
	s.settings.Rollback()
	if err != nil {
		return "", err
	}
	return "ROLLBACK", nil
}

// afterCommit does what follows a successful commit on the session's
// side: the write-speed delay (throttle.go), the duplicate counts and the
// NOTICEs for what dedup skipped and for a throttle wait cut short.
func (s *Session) afterCommit(ctx context.Context, out wire.Output, res *txn.Result) {
	for i, w := range res.Writes {
		if i < len(res.Topics) {
			s.eng.metrics.NoteDuplicates(res.Topics[i], w.Duplicates)
		}
	}
	s.throttleCommit(ctx, &res.CommitResult)
	reportDuplicates(out, res.Writes)
	warnThrottleCut(out, res.CommitResult, res.Topics)
}

// implicitBlock runs before each statement of a multi-statement query:
// it opens the implicit block, or, before a statement that cannot run in
// a block, commits it.
func (s *Session) implicitBlock(ctx context.Context, plan plantree.Plan, out wire.Output) error {
	if !s.multi {
		return nil
	}
	switch p := plan.(type) {
	case *plantree.CreateTopicPlan, *plantree.AlterTopicPlan, *plantree.DropTopicPlan, *plantree.SetPositionPlan:
		if s.txc.Mode() == txn.ImplicitBlock {
			_, err := s.endBlock(ctx, out, true)
			return err
		}
		return nil
	case *plantree.UtilityPlan:
		switch p.Stmt.(type) {
		case *sql.Begin, *sql.Commit, *sql.Rollback:
			return nil
		}
	}
	if s.txc.Block() == nil {
		s.beginBlock(txn.ImplicitBlock)
	}
	return nil
}

// Sync implements wire.Session: the implicit block of a multi-statement
// query or of a pipeline (pipeline.go) ends here.
func (s *Session) Sync(ctx context.Context, out wire.Output) error {
	s.multi, s.pipe = false, false
	if s.txc.Mode() != txn.ImplicitBlock {
		return nil
	}
	if len(s.txc.Block().Reads()) > 0 {
		// Consumer positions move only for rows that reached the client.
		if err := out.Flush(); err != nil {
			_, _ = s.endBlock(ctx, out, false)
			return err
		}
	}
	_, err := s.endBlock(ctx, out, true)
	return err
}

// savepoint is one SAVEPOINT of the open block: what ROLLBACK TO returns
// to besides the transaction's staging (txn.Mark).
type savepoint struct {
	name     string
	tx       txn.Savepoint
	settings settings.Snapshot
	cursors  map[*cursor]bool
}

// execSavepoint runs SAVEPOINT, RELEASE and ROLLBACK TO, with
// PostgreSQL's rules: only in a transaction block (an implicit one does
// not count), RELEASE and ROLLBACK TO name an existing savepoint (3B001)
// and drop the ones after it, ROLLBACK TO keeps the savepoint and clears
// a failure that came after it. It undoes the block's staged writes,
// consumer reads, SETs, cursors and shared-consumer acquisitions since the
// savepoint (those messages go back to the queue); releases, rejects and
// extensions of shared messages act at once and stay.
func (s *Session) execSavepoint(st *sql.Savepoint) (string, [][]any, error) {
	tag := st.Op
	if st.Op == "ROLLBACK TO" {
		tag = "ROLLBACK"
	}
	if s.txc.Mode() != txn.ExplicitBlock {
		return "", nil, pgerror.Newf(pgerror.CodeNoActiveSQLTransaction, "%s can only be used in transaction blocks", st.Op)
	}
	if st.Op == "SAVEPOINT" {
		sp := savepoint{name: st.Name, tx: s.txc.Savepoint(), settings: s.settings.Snapshot(), cursors: map[*cursor]bool{}}
		for _, c := range s.cursors {
			sp.cursors[c] = true
		}
		s.savepoints = append(s.savepoints, sp)
		return tag, nil, nil
	}
	i := len(s.savepoints) - 1
	for i >= 0 && s.savepoints[i].name != st.Name {
		i--
	}
	if i < 0 {
		return "", nil, pgerror.Newf(pgerror.CodeInvalidSavepointSpec, "savepoint \"%s\" does not exist", st.Name)
	}
	if st.Op == "RELEASE" {
		s.savepoints = s.savepoints[:i]
		return tag, nil, nil
	}
	sp := s.savepoints[i]
	if err := s.txc.RollbackTo(sp.tx); err != nil {
		return "", nil, err
	}
	s.savepoints = s.savepoints[:i+1]
	s.settings.Restore(sp.settings)
	for name, c := range s.cursors {
		if !sp.cursors[c] {
			delete(s.cursors, name)
		}
	}
	return tag, nil, nil
}

// sqlTag is the command tag of a transaction statement.
func sqlTag(st sql.Stmt) string {
	if _, ok := st.(*sql.Commit); ok {
		return "COMMIT"
	}
	return "ROLLBACK"
}
