package executor

import (
	"context"

	"topicgate/planner"
	"topicgate/sql"
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
// Where topicgate differs: topic DDL and UPDATE sys.consumers are not
// transactional, so such a statement in a multi-statement query first
// commits the implicit block before it (the statements after it begin a
// new one) instead of being rolled back with it.

// beginBlock opens a transaction block.
func (s *Session) beginBlock(implicit bool) {
	s.tx = txn.Begin(s.eng.nextTxn.Add(1), s.eng.opts.Clock(), s.eng.opts.MaxTxnBytes)
	s.tx.UseStore(s.eng.store) // large transactions spill to the store
	s.implicit = implicit
	s.settings.begin()
}

// endBlock commits (commit, and the block did not fail) or rolls back the
// open block and returns the command tag.
func (s *Session) endBlock(ctx context.Context, out wire.Output, commit bool) (string, error) {
	tx := s.tx
	s.tx, s.implicit = nil, false
	if !commit || tx.State() == txn.Failed {
		tx.Rollback()
		s.dropCursorsOf(tx)
		s.settings.rollback()
		s.sharedTx.releaseAll(s.eng.store, s.info.ProcessID)
		s.eng.metrics.rollbacks.Add(1)
		return "ROLLBACK", nil
	}
	res, err := s.commitTx(ctx, tx)
	if err != nil {
		s.settings.rollback()
		return "", err
	}
	s.settings.commit()
	reportDuplicates(out, res.Writes)
	return "COMMIT", nil
}

// implicitBlock runs before each statement of a multi-statement query:
// it opens the implicit block, or, before a statement that cannot run in
// a block, commits it.
func (s *Session) implicitBlock(ctx context.Context, plan planner.Plan, out wire.Output) error {
	if !s.multi {
		return nil
	}
	switch p := plan.(type) {
	case *planner.CreateTopicPlan, *planner.AlterTopicPlan, *planner.DropTopicPlan, *planner.SetPositionPlan:
		if s.implicit {
			_, err := s.endBlock(ctx, out, true)
			return err
		}
		return nil
	case *planner.UtilityPlan:
		switch p.Stmt.(type) {
		case *sql.Begin, *sql.Commit, *sql.Rollback:
			return nil
		}
	}
	if s.tx == nil {
		s.beginBlock(true)
	}
	return nil
}

// Sync implements wire.Session: the implicit block of a multi-statement
// query ends here.
func (s *Session) Sync(ctx context.Context, out wire.Output) error {
	s.multi = false
	if s.tx == nil || !s.implicit {
		return nil
	}
	_, err := s.endBlock(ctx, out, true)
	return err
}

// sqlTag is the command tag of a transaction statement.
func sqlTag(st sql.Stmt) string {
	if _, ok := st.(*sql.Commit); ok {
		return "COMMIT"
	}
	return "ROLLBACK"
}
