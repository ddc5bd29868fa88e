package executor

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"topicgate/authz"
	"topicgate/consume"
	"topicgate/executor/internal/settings"
	"topicgate/planner"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/txn"
	"topicgate/wire"
)

// Session is one connection's state: settings, the open transaction, and
// the statements it prepared. It is used by one goroutine at a time (the
// connection's), as wire promises.
type Session struct {
	eng      *Engine
	info     wire.SessionInfo
	settings *settings.Settings
	// id is who the session acts as (session_user, current_user); leave
	// ends its count against the role's CONNECTION LIMIT.
	id    *authz.Identity
	leave func()
	// txc is the session's transaction state (txn.Conn): the open block,
	// explicit or implicit, or autocommit; the shared messages the block
	// holds; the one commit path.
	txc *txn.Conn
	// readOnly: the explicit block was opened with BEGIN READ ONLY
	// (readonly.go); meaningless outside one.
	readOnly bool
	// multi: a multi-statement query or a pipeline is running (until
	// Sync); pipe: an extended-protocol Execute ran since the last Sync
	// (pipeline.go).
	multi, pipe bool
	// deferred is the write of the pipeline's Execute whose completion
	// waits for the next message (pipeline.go); nil otherwise.
	deferred *deferredWrite
	// auditDeferred is the deferred INSERT's audit record, logged when it
	// completes (audit.go); nil when there is none or the log is off.
	auditDeferred *auditing
	// deferStart is when the deferred INSERT's Execute began; write
	// observes its latency when it commits (or stages) and clears it.
	deferStart time.Time
	// savepoints are the open block's SAVEPOINTs, oldest first.
	savepoints []savepoint
	// rd is the session's consumption (package consume): its reads as
	// consumers, the read sessions it joined, the partitions its
	// transactions hold, the statement's delivery, shared messages'
	// acknowledgements waiting to be durable.
	rd      *consume.Reader
	started time.Time   // when it connected (sys.sessions.backend_start)
	active  atomic.Bool // a statement is running (sys.sessions)
	status  atomic.Pointer[txStatus]
	appName atomic.Pointer[string]
	// portals finds a protocol portal by name (wire.PortalUser), for FETCH
	// and MOVE naming one.
	portals func(name string) (wire.Portal, bool)
	// cursors are the open cursors by name (cursor.go); those of a
	// transaction block leave when it ends (endCursors).
	cursors map[string]*cursor
}

// txStatus is a snapshot of a session's transaction for other sessions'
// sys.sessions reads (they must not touch s.txc).
type txStatus struct {
	id       uint64
	started  time.Time
	failed   bool
	messages int
	bytes    int64
	topics   []string // written to
	reads    []string // topic/consumer:partition read from
}

// txnListener is the session as the listener of its transactions
// (txn.Listener). Before a commit it checks that the partitions the
// transaction read are still the session's (consume.Reader.CheckHeld);
// when a transaction is over, what the session kept of it follows: the
// partitions it held for the transaction go (consume.Reader.EndTx), and
// so do the cursors declared in it (cursor.go).
type txnListener Session

// CheckCommit implements txn.Listener.
func (l *txnListener) CheckCommit(tx *txn.Txn) error { return l.rd.CheckHeld(tx) }

// Ended implements txn.Listener.
func (l *txnListener) Ended(tx *txn.Txn, committed bool) {
	s := (*Session)(l)
	s.rd.EndTx(tx.ID)
	s.endCursors(tx, committed)
}

// publishStatus refreshes the snapshot after a statement.
func (s *Session) publishStatus() {
	if app, _ := s.settings.Get("application_name"); s.appName.Load() == nil || *s.appName.Load() != app {
		changed := app // its own variable: app escaping would cost every statement an allocation
		s.appName.Store(&changed)
	}
	tx := s.txc.Block()
	if tx == nil {
		s.status.Store(nil)
		return
	}
	m, b := tx.Staged()
	st := &txStatus{id: tx.ID, started: tx.Started, failed: tx.State() == txn.Failed, messages: m, bytes: b,
		topics: tx.Topics()}
	for _, k := range tx.Reads() {
		st.reads = append(st.reads, k.Topic+"/"+k.Consumer+":"+itoa(int(k.Partition)))
	}
	s.status.Store(st)
}

// WaitDurable implements wire.DurabilityBarrier: it waits until every
// acknowledgement this session decided is synced.
func (s *Session) WaitDurable() error { return s.rd.WaitDurable() }

// ParameterStatus implements wire.Session.
func (s *Session) ParameterStatus() map[string]string { return s.settings.Startup() }

// FailTx implements wire.TxFailer.
func (s *Session) FailTx() { s.txc.Fail() }

// IdleTimeout implements wire.IdleTimeouter.
func (s *Session) IdleTimeout(st byte) time.Duration {
	if st == 'I' {
		return s.settings.IdleTimeout()
	}
	return s.settings.IdleInTxnTimeout()
}

// ParameterChanges implements wire.ParameterReporter.
func (s *Session) ParameterChanges() []wire.ParamStatus { return s.settings.Changes() }

// TxStatus implements wire.Session.
func (s *Session) TxStatus() byte {
	return byte(s.txc.State())
}

// Close implements wire.Session: an open transaction rolls back, the
// session's shared-consumer locks are released (txn.Conn.Close) and it
// leaves the read sessions it joined.
func (s *Session) Close() {
	_ = s.WaitDurable()
	if s.auditDeferred != nil {
		s.auditDeferredEnd("", nil) // its client left before the pipeline's next message
	}
	s.txc.Close()
	s.rd.Leave()
	s.eng.sessions.Delete(s.info.ProcessID)
	s.leave()
	s.eng.trace(EventSessionEnd, s.info.ProcessID)
}

// Parse implements wire.Session. A single statement is planned at once (so
// Describe can report parameter and column types); statements of a
// multi-statement query are planned when they run, since an earlier one may
// create the topic a later one uses.
func (s *Session) Parse(ctx context.Context, query string, paramOIDs []uint32) ([]wire.Statement, error) {
	stmts, err := s.eng.cache.parse(query)
	if err != nil {
		return nil, err
	}
	if len(stmts) > 1 {
		s.multi = true // until Sync; a pipeline's Parse must not clear it
	}
	out := make([]wire.Statement, 0, len(stmts))
	for _, st := range stmts {
		if _, ok := st.(*sql.Empty); ok && len(stmts) == 1 {
			return nil, nil
		}
		ps := &statement{s: s, ast: st, declared: make([]values.Type, len(paramOIDs)), declaredOIDs: append([]uint32(nil), paramOIDs...)}
		for i, o := range paramOIDs {
			ps.declared[i] = values.TypeFromOID(o)
		}
		out = append(out, ps)
	}
	if len(out) == 1 {
		if err := out[0].(*statement).prepare(); err != nil {
			return nil, s.onError(err)
		}
	}
	return out, nil
}

// onError records a statement failure in the transaction state.
func (s *Session) onError(err error) error {
	s.txc.Fail()
	var pe *pgerror.Error
	if !errors.As(err, &pe) && errors.Is(err, context.Canceled) {
		// A CancelRequest (or the connection's end) stopped a read that
		// returned the context's own error: it is 57014, not internal.
		return pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	return err
}

// statement is a parsed, planned statement (wire.Statement).
type statement struct {
	s        *Session
	ast      sql.Stmt
	declared []values.Type
	// declaredOIDs are the parameter types as the client declared them in
	// Parse (0: let the server infer), kept for ParameterDescription.
	declaredOIDs []uint32
	plan         plantree.Plan
	params       []values.Type
	cols         []wire.Column
	// accesses are what the plan does to topics, checked against the
	// grants each time it runs.
	accesses []plantree.Access
	// audText is the statement's text for the audit log, formatted the
	// first time a line needs it (auditText).
	audText string
}

func (st *statement) prepare() error {
	if st.plan != nil {
		return nil
	}
	if err := st.s.txc.Guard(endsTxn(st.ast)); err != nil {
		return err
	}
	plan, params, err := planner.Build(st.s.eng, st.ast, st.declared)
	if err != nil {
		return err
	}
	st.plan, st.params = plan, params
	st.accesses = plantree.Accesses(plan)
	st.cols = wireColumns(plan.Columns())
	for i, c := range plan.Columns() {
		// A column that is a parameter has its declared type, unless the
		// column's type is not the parameter's (a UNION widened it).
		if c.Param > 0 && c.OID == 0 && c.Param <= len(st.params) && st.params[c.Param-1] == c.T {
			st.cols[i].TypeOID = st.paramOID(c.Param - 1)
		}
	}
	if show, ok := st.ast.(*sql.Show); ok && len(st.cols) == 1 {
		st.cols[0].Name = settings.Name(show.Name) // SHOW datestyle names its column DateStyle
	}
	if f, ok := plan.(*plantree.FetchPlan); ok {
		st.cols = st.s.fetchColumns(f) // the cursor's, which only the session knows
	}
	return nil
}

// paramOID is the type of parameter i as ParameterDescription reports it.
// As PostgreSQL does, a type the client declared in Parse is kept when the
// planner accepted it: varchar and bpchar (run as text), float4 (run as
// float8), timestamp (run as timestamptz). Reporting the planner's type
// instead broke pgjdbc, which declares strings as varchar and refuses a
// ParameterDescription that changes them ("Can't change resolved type for
// param: 1 from 1043 to 25"), and it makes the client encode (and the wire
// decode) the value as the type the client chose.
func (st *statement) paramOID(i int) uint32 {
	if i < len(st.declaredOIDs) {
		if o := st.declaredOIDs[i]; o != 0 && values.TypeFromOID(o) == st.params[i] {
			return o
		}
	}
	return st.params[i].OID()
}

func endsTxn(s sql.Stmt) bool {
	switch x := s.(type) {
	case *sql.Commit, *sql.Rollback:
		return true
	case *sql.Savepoint:
		return x.Op == "ROLLBACK TO"
	}
	return false
}

func wireColumns(cols []plantree.Column) []wire.Column {
	if cols == nil {
		return nil
	}
	out := make([]wire.Column, len(cols))
	for i, c := range cols {
		out[i] = wire.Column{Name: c.Name, TypeOID: c.TypeOID()}
	}
	return out
}

// ParamTypes implements wire.Statement.
func (st *statement) ParamTypes() []uint32 {
	out := make([]uint32, len(st.params))
	for i := range st.params {
		out[i] = st.paramOID(i)
	}
	return out
}

// Columns implements wire.Statement.
func (st *statement) Columns() []wire.Column { return st.cols }

// Bind implements wire.Statement.
func (st *statement) Bind(ctx context.Context, params []any) (wire.Portal, error) {
	if err := st.prepare(); err != nil {
		return nil, st.s.onError(err)
	}
	if len(params) != len(st.params) {
		return nil, st.s.onError(pgerror.Newf(pgerror.CodeProtocolViolation,
			"bind message supplies %d parameters, but prepared statement requires %d", len(params), len(st.params)))
	}
	vals := make([]any, len(params))
	for i, v := range params {
		if iv, ok := v.(wire.Interval); ok {
			v = time.Duration(iv.Microseconds)*time.Microsecond + time.Duration(iv.Days)*24*time.Hour +
				time.Duration(iv.Months)*30*24*time.Hour
		}
		nv, err := st.s.settings.NormalizeParam(v, st.params[i])
		if err != nil {
			var pe *pgerror.Error
			if errors.As(err, &pe) {
				pe.Message = "parameter $" + itoa(i+1) + ": " + pe.Message
			}
			return nil, st.s.onError(err)
		}
		vals[i] = nv
	}
	return &portal{st: st, params: vals}, nil
}

func itoa(i int) string {
	return values.FormatText(int64(i))
}
