package executor

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"topicgate/consume"
	"topicgate/metrics"
	"topicgate/planner/plantree"
	"topicgate/planner/topicopts"
	"topicgate/rowexec"
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
	ec     *rowexec.EvalCtx // &ecv once the portal first runs
	ecv    rowexec.EvalCtx
	it     rowexec.Iter
	sent   int64
	done   bool
	// deliver holds the consumer-read effects that wait for the rows to
	// reach the client (consume.Delivery); it points at dlv once the
	// portal runs a statement that returns rows.
	deliver *consume.Delivery
	dlv     consume.Delivery
	// running is set while Execute runs: a FETCH naming the portal from
	// inside its own execution is refused, not run recursively.
	running bool
	// started is when the portal's first Execute began: a statement's
	// latency runs from there to the Execute that completes it.
	started time.Time
	// checked: the privilege check passed (at the portal's first
	// Execute; the grants in force when the statement started decide).
	checked bool
	// aud is the statement's audit record from its first Execute to the
	// one that ends it (audit.go); nil when the audit log is off.
	aud *auditing
}

// Running reports whether the portal is executing now.
func (p *portal) Running() bool { return p.running }

// Columns implements wire.Portal.
func (p *portal) Columns() []wire.Column { return p.st.cols }

// Close implements wire.Portal. A portal closed before its rows were all
// sent settles nothing: its consumer reads are read again.
func (p *portal) Close() {
	p.it = nil
	p.deliver.Abandon(p.st.s.rd, p.sent)
	if p.aud != nil {
		p.auditClosed()
	}
}

// Execute implements wire.Portal: the statement's lifecycle around run
// (sys.sessions' active flag, the latency histogram, client_min_messages),
// the statement itself run through inStatement.
func (p *portal) Execute(ctx context.Context, out wire.Output, maxRows int) (tag string, done bool, err error) {
	s := p.st.s
	if p.running {
		return "", true, pgerror.New(pgerror.CodeObjectNotInPrerequisiteState, "portal cannot be run: it is running")
	}
	p.running = true
	defer func() { p.running = false }()
	if p.started.IsZero() {
		p.started = time.Now()
	}
	kind := metrics.KindOf(p.st.plan)
	defer func() {
		if done {
			s.eng.metrics.Observe(kind, time.Since(p.started))
		}
	}()
	s.active.Store(true)
	s.eng.trace(EventStatementStart, s.info.ProcessID)
	defer s.eng.trace(EventStatementEnd, s.info.ProcessID)
	defer s.active.Store(false)
	defer s.publishStatus()
	if notices, warnings := s.settings.Muted(); notices {
		out = quietOutput{out, warnings}
	}
	if s.eng.opts.Auditor != nil {
		p.auditStart()
		defer func() { p.auditEnd(tag, done, err) }()
	}
	err = s.inStatement(ctx, func(ctx context.Context) error {
		var err error
		tag, done, err = p.run(ctx, out, maxRows, &kind)
		return err
	})
	return tag, done, err
}

// inStatement runs f as one statement of the session: f's context ends
// after statement_timeout (withStatementTimeout), a panic in f is an
// internal error of this statement only, and f's error is mapped (57014
// when the timeout cut it, timedOut) and moves an open block to the
// failed state (onError). A portal's Execute and the completion of a
// pipeline's deferred INSERT (DeferredTag) run through it.
func (s *Session) inStatement(ctx context.Context, f func(ctx context.Context) error) (err error) {
	ctx, cancel := s.withStatementTimeout(ctx)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = pgerror.AssertionFailed("panic executing statement: %v", r)
		}
		if err != nil {
			err = timedOut(ctx, err)
			err = s.onError(err)
		}
	}()
	return f(ctx)
}

// run runs the portal's statement (up to maxRows rows of it) inside
// inStatement. kind is the latency histogram the statement counts in; a
// deferred INSERT clears it (it is observed when it commits).
func (p *portal) run(ctx context.Context, out wire.Output, maxRows int, kind *metrics.Kind) (tag string, done bool, err error) {
	s := p.st.s
	if err := s.txc.Guard(endsTxn(p.st.ast)); err != nil {
		return "", true, err
	}
	if s.readOnly && s.txc.Mode() == txn.ExplicitBlock {
		if err := readOnlyCheck(p.st.plan, p.st.accesses); err != nil {
			return "", true, err
		}
	}
	if !p.checked {
		if err := s.eng.authz.Check(ctx, s.id, p.st.accesses); err != nil {
			return "", true, err
		}
		p.checked = true
	}
	if err := s.implicitBlock(ctx, p.st.plan, out); err != nil {
		return "", true, err
	}
	if _, utility := p.st.plan.(*plantree.UtilityPlan); !utility && s.txc.Block() == nil && !s.settings.InTxn() {
		// An autocommit statement is a transaction of its own for its
		// settings too: set_config() in a statement that fails is undone.
		s.settings.Begin()
		defer func() { s.settings.End(err == nil) }()
	}
	if p.ec == nil {
		p.ecv.Init(sessionHost{s}, p.params, s.eng.opts.Clock().UTC())
		p.ec = &p.ecv
	}
	switch plan := p.st.plan.(type) {
	case *plantree.SelectPlan:
		if p.it == nil {
			var direct func() *wire.RowEncoder
			if maxRows <= 0 {
				direct = out.RowEncoder
			}
			p.deliver = &p.dlv
			p.it, err = s.rd.WithDelivery(p.deliver, func() (rowexec.Iter, error) { return rowexec.Run(ctx, p.ec, plan, direct) })
			if err != nil {
				p.deliver.Abandon(s.rd, 0)
				return "", true, err
			}
		}
		tag, done, err := p.stream(ctx, out, maxRows)
		if done {
			err = p.settle(ctx, out, p.sent, err)
		}
		return tag, done, err
	case *plantree.InsertPlan:
		if s.defers(plan) {
			*kind = metrics.KindNone // observed when it is written (DeferredTag)
		}
		tag, err := s.execInsert(ctx, p.ec, plan, out)
		if tag == wire.TagDeferred {
			s.deferStart = p.started
		}
		return tag, true, err
	case *plantree.CopyPlan:
		n, err := s.execCopy(ctx, plan, out)
		if err != nil {
			return "", true, err
		}
		return "COPY " + strconv.FormatInt(int64(n), 10), true, nil
	case *plantree.CopyOutPlan:
		p.deliver = &p.dlv
		var n int64
		_, err := s.rd.WithDelivery(p.deliver, func() (rowexec.Iter, error) {
			var err error
			n, err = s.execCopyOut(ctx, p.ec, plan, out)
			return nil, err
		})
		if err = p.settle(ctx, out, n, err); err != nil {
			return "", true, err
		}
		return "COPY " + strconv.FormatInt(int64(n), 10), true, nil
	case *plantree.SharedActionPlan:
		tag, err := s.rd.SharedAction(ctx, p.ec, plan, out)
		return tag, true, err
	case *plantree.SetPositionPlan:
		tag, err := s.rd.SetPositions(ctx, p.ec, plan, s.usableConsumerRows)
		return tag, true, err
	case *plantree.CreateTopicPlan:
		return "CREATE TOPIC", true, s.execCreateTopic(ctx, plan, out)
	case *plantree.AlterTopicPlan:
		return "ALTER TOPIC", true, s.execAlterTopic(ctx, plan, out)
	case *plantree.DropTopicPlan:
		return "DROP TOPIC", true, s.execDropTopic(ctx, plan, out)
	case *plantree.ExplainPlan:
		if p.it == nil {
			rows, err := s.runExplain(ctx, p.ec, plan)
			if err != nil {
				return "", true, err
			}
			p.it = rowexec.Rows(rows)
		}
		t, d, err := p.stream(ctx, out, maxRows)
		if d && err == nil {
			t = "EXPLAIN"
		}
		return t, d, err
	case *plantree.DeclareCursorPlan:
		return "DECLARE CURSOR", true, s.execDeclare(ctx, p.ec, plan, sql.Format(p.st.ast))
	case *plantree.FetchPlan:
		tag, err := s.execFetch(ctx, plan, p.st.cols, out)
		return tag, true, err
	case *plantree.CloseCursorPlan:
		tag, err := s.execCloseCursor(plan)
		return tag, true, err
	case *plantree.UtilityPlan:
		if p.it != nil {
			return p.stream(ctx, out, maxRows)
		}
		tag, rows, err := s.execUtility(ctx, plan, out)
		if err != nil || rows == nil {
			return tag, true, err
		}
		p.it = rowexec.Rows(rows)
		t, d, err := p.stream(ctx, out, maxRows)
		if d && err == nil {
			t = tag
		}
		return t, d, err
	}
	return "", true, pgerror.AssertionFailed("no executor for plan %T", p.st.plan)
}

// quietOutput drops the notices (and, when quieter, the warnings) that
// client_min_messages asks not to send.
type quietOutput struct {
	wire.Output
	quieter bool
}

func (quietOutput) Notice(code, msg string) {}

func (q quietOutput) Warning(code, msg string) {
	if !q.quieter {
		q.Output.Warning(code, msg)
	}
}

// withStatementTimeout is the one place statement_timeout is set up: ctx
// bounded by the session's statement_timeout, with errStatementTimeout as
// its cause; ctx itself when the setting is 0.
func (s *Session) withStatementTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := s.settings.StatementTimeout(); d > 0 {
		return context.WithTimeoutCause(ctx, d, errStatementTimeout)
	}
	return ctx, func() {}
}

// errStatementTimeout is the cause of a statement cut by statement_timeout.
var errStatementTimeout = errors.New("statement timeout")

// timedOut is the error of a statement that failed with err: 57014 when
// statement_timeout cut it, except a commit whose outcome is unknown
// (08007), which a cancellation must not be reported as.
func timedOut(ctx context.Context, err error) error {
	if context.Cause(ctx) != errStatementTimeout || pgerror.Code(err) == pgerror.CodeTransactionResolutionUnknown ||
		errors.Is(err, topicstore.ErrOutcomeUnknown) {
		return err
	}
	return pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to statement timeout")
}

// settle ends the portal's delivery: committed when the statement
// succeeded and its rows reached the client, abandoned otherwise.
func (p *portal) settle(ctx context.Context, out wire.Output, sentRows int64, err error) error {
	if err != nil {
		p.deliver.Abandon(p.st.s.rd, sentRows)
		return err
	}
	return p.deliver.Finish(ctx, p.st.s.rd, out, sentRows)
}

// stream writes up to maxRows rows from the portal's iterator.
func (p *portal) stream(ctx context.Context, out wire.Output, maxRows int) (string, bool, error) {
	if enc, ok := consume.Encoded(p.it); ok { // only made for maxRows <= 0
		if err := out.WriteRows(enc); err != nil {
			return "", true, err
		}
		p.sent += int64(enc.Rows())
		p.done = true
		p.it = rowexec.Rows(nil)
		return "SELECT " + strconv.Itoa(enc.Rows()), true, nil
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
		r, err := p.it.Next(ctx)
		if err != nil {
			return "", true, err
		}
		if r == nil {
			p.done = true
			return "SELECT " + strconv.Itoa(n), true, nil
		}
		if len(r) > len(p.st.cols) {
			r = r[:len(p.st.cols)]
		}
		presentRow(r, p.st.cols, p.st.s.settings)
		if err := out.WriteRow(r); err != nil {
			return "", true, err
		}
		p.sent++
		n++
	}
}

// execUtility runs transaction control, SET, SHOW and friends. rows is
// non-nil for statements that return rows (SHOW).
func (s *Session) execUtility(ctx context.Context, plan *plantree.UtilityPlan, out wire.Output) (string, [][]any, error) {
	switch st := plan.Stmt.(type) {
	case *sql.Begin:
		tag := "BEGIN"
		if st.Start {
			tag = "START TRANSACTION"
		}
		switch s.txc.Mode() {
		case txn.ExplicitBlock:
			out.Warning(pgerror.CodeActiveSQLTransaction, "there is already a transaction in progress")
		case txn.ImplicitBlock: // BEGIN inside a multi-statement query: its block becomes explicit
			s.txc.MakeExplicit()
			s.readOnly = st.ReadOnly
		default:
			s.beginBlock(txn.ExplicitBlock)
			s.readOnly = st.ReadOnly
		}
		return tag, nil, nil
	case *sql.Commit, *sql.Rollback:
		_, commit := st.(*sql.Commit)
		if s.txc.Mode() != txn.ExplicitBlock {
			out.Warning(pgerror.CodeNoActiveSQLTransaction, "there is no transaction in progress")
			if s.txc.Block() == nil {
				return sqlTag(st), nil, nil
			}
		}
		tag, err := s.endBlock(ctx, out, commit)
		return tag, nil, err
	case *sql.Savepoint:
		return s.execSavepoint(st)
	case *sql.SetVar:
		if st.Local && s.txc.Block() == nil {
			out.Warning(pgerror.CodeNoActiveSQLTransaction, "SET LOCAL can only be used in transaction blocks")
		}
		if tag, ok, err := s.setIdentity(st); ok {
			return tag, nil, err
		}
		var err error
		switch {
		case st.All:
			s.settings.ResetAll()
		case st.Reset:
			err = s.settings.Reset(st.Name, st.Local)
		default:
			err = s.settings.Set(st.Name, st.Value, st.Local)
		}
		if err != nil {
			return "", nil, err
		}
		if st.Reset && !st.Default {
			return "RESET", nil, nil
		}
		return "SET", nil, nil
	case *sql.Show:
		if strings.EqualFold(st.Name, "all") {
			return "SHOW", s.settings.All(), nil
		}
		v, err := s.settings.Show(st.Name)
		if err != nil {
			return "", nil, err
		}
		return "SHOW", [][]any{{v}}, nil
	case *sql.ShowCreateTopic:
		ti, err := s.eng.store.Topic(st.Name)
		if err != nil {
			return "", nil, txn.StoreError(err, st.Name)
		}
		return "SHOW", [][]any{{ti.Config.Name, topicopts.CreateTopicDDL(ti.Config)}}, nil
	case *sql.Discard:
		return "DISCARD " + strings.ToUpper(st.What), nil, nil
	case *sql.Deallocate:
		return "DEALLOCATE", nil, nil
	case *sql.Empty:
		return "", nil, nil
	}
	if err := s.noDDLInTxn(stmtTag(plan.Stmt)); err != nil {
		return "", nil, err
	}
	if tag, ok, err := s.eng.authz.Exec(ctx, s.id, plan.Stmt, out); ok {
		return tag, nil, err
	}
	return "", nil, pgerror.AssertionFailed("utility %T", plan.Stmt)
}
