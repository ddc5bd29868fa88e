package executor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"topicgate/planner"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// portal is a bound statement (wire.Portal). A row-returning portal keeps
// its iterator between Execute calls so row-limited fetches resume.
type portal struct {
	st     *statement
	params []any
	ec     *evalCtx
	it     rowIter
	sent   int64
	done   bool
}

// Columns implements wire.Portal.
func (p *portal) Columns() []wire.Column { return p.st.cols }

// Close implements wire.Portal.
func (p *portal) Close() { p.it = nil }

// Execute implements wire.Portal.
func (p *portal) Execute(ctx context.Context, out wire.Output, maxRows int) (tag string, done bool, err error) {
	s := p.st.s
	s.active.Store(true)
	defer s.active.Store(false)
	defer s.publishStatus()
	defer func() {
		if r := recover(); r != nil {
			err = pgerror.AssertionFailed("panic executing statement: %v", r)
		}
		if err != nil {
			err = s.onError(err)
		}
	}()
	if s.tx != nil && s.tx.State() == txn.Failed && !endsTxn(p.st.ast) {
		return "", true, errAborted
	}
	if p.ec == nil {
		p.ec = &evalCtx{params: p.params, now: s.eng.opts.Clock().UTC(), sess: s}
	}
	switch plan := p.st.plan.(type) {
	case *planner.SelectPlan:
		if p.it == nil {
			var direct func() *wire.RowEncoder
			if maxRows <= 0 {
				direct = out.RowEncoder
			}
			if p.it, err = s.runSelect(ctx, p.ec, plan, direct); err != nil {
				return "", true, err
			}
		}
		return p.stream(ctx, out, maxRows)
	case *planner.InsertPlan:
		n, err := s.execInsert(ctx, p.ec, plan, out)
		if err != nil {
			return "", true, err
		}
		return fmt.Sprintf("INSERT 0 %d", n), true, nil
	case *planner.CopyPlan:
		n, err := s.execCopy(ctx, plan, out)
		if err != nil {
			return "", true, err
		}
		return fmt.Sprintf("COPY %d", n), true, nil
	case *planner.CopyOutPlan:
		n, err := s.execCopyOut(ctx, p.ec, plan, out)
		if err != nil {
			return "", true, err
		}
		return fmt.Sprintf("COPY %d", n), true, nil
	case *planner.SharedActionPlan:
		tag, err := s.execSharedAction(ctx, p.ec, plan, out)
		return tag, true, err
	case *planner.SetPositionPlan:
		tag, err := s.execSetPosition(ctx, p.ec, plan)
		return tag, true, err
	case *planner.CreateTopicPlan:
		return "CREATE TOPIC", true, s.execCreateTopic(ctx, plan, out)
	case *planner.AlterTopicPlan:
		return "ALTER TOPIC", true, s.execAlterTopic(ctx, plan, out)
	case *planner.DropTopicPlan:
		return "DROP TOPIC", true, s.execDropTopic(ctx, plan, out)
	case *planner.ExplainPlan:
		if p.it == nil {
			var rows [][]any
			for _, line := range explain(plan.Inner) {
				rows = append(rows, []any{line})
			}
			p.it = &sliceIter{rows: rows}
		}
		t, d, err := p.stream(ctx, out, maxRows)
		if d && err == nil {
			t = "EXPLAIN"
		}
		return t, d, err
	case *planner.UtilityPlan:
		if p.it != nil {
			return p.stream(ctx, out, maxRows)
		}
		tag, rows, err := s.execUtility(ctx, plan, out)
		if err != nil || rows == nil {
			return tag, true, err
		}
		p.it = &sliceIter{rows: rows}
		t, d, err := p.stream(ctx, out, maxRows)
		if d && err == nil {
			t = tag
		}
		return t, d, err
	}
	return "", true, pgerror.AssertionFailed("no executor for plan %T", p.st.plan)
}

// stream writes up to maxRows rows from the portal's iterator.
func (p *portal) stream(ctx context.Context, out wire.Output, maxRows int) (string, bool, error) {
	if e, ok := p.it.(*encodedIter); ok { // only made for maxRows <= 0
		if err := out.WriteRows(e.enc); err != nil {
			return "", true, err
		}
		p.sent += int64(e.enc.Rows())
		p.done = true
		p.it = &sliceIter{}
		return fmt.Sprintf("SELECT %d", e.enc.Rows()), true, nil
	}
	// The tag counts the rows of this Execute only, as PostgreSQL's does:
	// after row-limited Executes it is the rows of the last one.
	n := 0
	for {
		if maxRows > 0 && n >= maxRows {
			return "", false, nil
		}
		if err := ctx.Err(); err != nil {
			return "", true, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		r, err := p.it.next(ctx)
		if err != nil {
			return "", true, err
		}
		if r == nil {
			p.done = true
			return fmt.Sprintf("SELECT %d", n), true, nil
		}
		if len(r) > len(p.st.cols) {
			r = r[:len(p.st.cols)]
		}
		presentRow(r, p.st.cols, p.st.s.settings.loc)
		if err := out.WriteRow(r); err != nil {
			return "", true, err
		}
		p.sent++
		n++
	}
}

// execUtility runs transaction control, SET, SHOW and friends. rows is
// non-nil for statements that return rows (SHOW).
func (s *Session) execUtility(ctx context.Context, plan *planner.UtilityPlan, out wire.Output) (string, [][]any, error) {
	switch st := plan.Stmt.(type) {
	case *sql.Begin:
		if s.tx != nil {
			out.Notice(pgerror.CodeActiveSQLTransaction, "there is already a transaction in progress")
			return "BEGIN", nil, nil
		}
		s.tx = txn.Begin(s.eng.nextTxn.Add(1), s.eng.opts.Clock(), s.eng.opts.MaxTxnBytes)
		s.tx.UseStore(s.eng.store) // large transactions spill to the store
		return "BEGIN", nil, nil
	case *sql.Commit:
		if s.tx == nil {
			out.Notice(pgerror.CodeNoActiveSQLTransaction, "there is no transaction in progress")
			return "COMMIT", nil, nil
		}
		tx := s.tx
		s.tx = nil
		if tx.State() == txn.Failed {
			tx.Rollback()
			s.sharedTx.releaseAll(s.eng.store, s.info.ProcessID)
			return "ROLLBACK", nil, nil
		}
		res, err := s.commitTx(ctx, tx)
		if err != nil {
			return "", nil, err
		}
		reportDuplicates(out, res.Writes)
		return "COMMIT", nil, nil
	case *sql.Rollback:
		if s.tx == nil {
			out.Notice(pgerror.CodeNoActiveSQLTransaction, "there is no transaction in progress")
			return "ROLLBACK", nil, nil
		}
		s.tx.Rollback()
		s.tx = nil
		s.sharedTx.releaseAll(s.eng.store, s.info.ProcessID)
		s.eng.metrics.rollbacks.Add(1)
		return "ROLLBACK", nil, nil
	case *sql.SetVar:
		switch {
		case st.All:
			for k := range s.settings.vals {
				s.settings.reset(k)
			}
		case st.Reset:
			s.settings.reset(st.Name)
		default:
			if st.Name == "client_encoding" && !strings.EqualFold(strings.ReplaceAll(st.Value, "-", ""), "utf8") {
				return "", nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "client_encoding %s is not supported; topicgate speaks UTF8", st.Value)
			}
			if err := s.settings.set(st.Name, st.Value); err != nil {
				return "", nil, err
			}
		}
		if st.Reset {
			return "RESET", nil, nil
		}
		return "SET", nil, nil
	case *sql.Show:
		if strings.EqualFold(st.Name, "all") {
			return "", nil, pgerror.New(pgerror.CodeFeatureNotSupported, "SHOW ALL is not supported")
		}
		v, ok := s.settings.get(st.Name)
		if !ok {
			return "", nil, pgerror.Newf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter \"%s\"", st.Name)
		}
		return "SHOW", [][]any{{v}}, nil
	case *sql.Discard:
		return "DISCARD " + strings.ToUpper(st.What), nil, nil
	case *sql.Deallocate:
		return "DEALLOCATE", nil, nil
	case *sql.Empty:
		return "", nil, nil
	}
	return "", nil, pgerror.AssertionFailed("utility %T", plan.Stmt)
}

// durationInterval splits d into days and time, as PostgreSQL prints
// intervals ("1 day 02:00:00").
func durationInterval(d time.Duration) wire.Interval {
	day := 24 * time.Hour
	return wire.Interval{Days: int32(d / day), Microseconds: int64(d%day) / 1000}
}

// commitTx commits a transaction block: staged writes, the positions it
// read and the shared-consumer messages it acquired, in one atomic store
// commit. On failure everything is discarded and what it acquired goes back
// to the queue.
func (s *Session) commitTx(ctx context.Context, tx *txn.Txn) (topicstore.CommitResult, error) {
	pid := s.info.ProcessID
	if err := s.checkHeld(tx); err != nil {
		tx.Rollback()
		s.sharedTx.releaseAll(s.eng.store, pid)
		s.eng.metrics.conflicts.Add(1)
		return topicstore.CommitResult{}, err
	}
	tx.SetAcks(s.sharedTx.acks(pid))
	topics := strings.Join(tx.Topics(), ", ")
	res, err := tx.Commit(ctx, s.eng.store)
	if err != nil {
		s.sharedTx.releaseAll(s.eng.store, pid)
		s.eng.metrics.commitFailed(err)
		return res, mapCommitErr(err, topics)
	}
	s.sharedTx.held = nil
	s.eng.metrics.commits.Add(1)
	return res, nil
}
