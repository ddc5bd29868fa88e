package rowexec

import (
	"context"
	"time"

	"topicgate/eval"
	"topicgate/planner/plantree"
)

// row gives expression evaluation access to the current input row.
type row = eval.Row

// ValuesRow is a row of already computed values.
type ValuesRow []any

func (r ValuesRow) Col(i int) (any, error) { return r[i], nil }

// EvalCtx is one execution of a statement: what its expressions read
// besides the row (bound parameters, the statement time, the session
// through its Host) and what the runs of its query blocks share (the
// subqueries' results, the memory budget, the read point, EXPLAIN
// ANALYZE's counts).
type EvalCtx struct {
	params []any
	now    time.Time
	host   Host                                  // the session running the statement
	subs   map[*plantree.SubqueryExpr]*subResult // results of this execution's subqueries
	// ctx is the running statement's (set by Run), for correlated
	// subqueries, which run while an expression is evaluated.
	ctx context.Context
	// outer is the row of the query around a correlated subquery while
	// the subquery runs (plantree.OuterRef reads it).
	outer row
	// memo keeps reusable correlated subqueries' results by the outer
	// values they read, for this execution (shared by the copies made for
	// subqueries).
	memo map[*plantree.SubqueryExpr]map[string]*subResult
	// srf holds the current values of the set-returning calls of the
	// select lists being projected (srfIter sets them).
	srf map[*plantree.FuncExpr]any
	// work holds, for each recursive query running, the rows its
	// recursive term reads next (plantree.WorkTable); shared by the copies
	// made for subqueries.
	work map[*plantree.WorkTable][][]any
	// mem is the statement's memory budget (--max-query-mib), charged by
	// every sort, hash table, window, set operation, DISTINCT, recursive
	// union and subquery result of the statement; shared by the copies.
	mem *queryMem
	// stats, under EXPLAIN ANALYZE, counts each plan node's rows and time.
	stats *NodeStats
	// read is the statement's read point (readPoint); shared by the copies.
	read *readPoint
}

// NewEvalCtx is one execution of a statement by host's session, with its
// bound parameters and its time (now()).
func NewEvalCtx(host Host, params []any, now time.Time) *EvalCtx {
	ec := &EvalCtx{}
	ec.Init(host, params, now)
	return ec
}

// Init makes ec what NewEvalCtx returns, in place: a caller that keeps
// one execution's context inside its own struct (a portal) saves an
// allocation per statement.
func (ec *EvalCtx) Init(host Host, params []any, now time.Time) {
	*ec = EvalCtx{host: host, params: params, now: now}
}

// SetContext makes ctx the running statement's: a cursor's iterators run
// on in the statement that fetches from it.
func (ec *EvalCtx) SetContext(ctx context.Context) { ec.ctx = ctx }

// WithStats is a copy of ec whose runs count each node's rows, loops and
// time into ns (EXPLAIN ANALYZE).
func (ec *EvalCtx) WithStats(ns *NodeStats) *EvalCtx {
	c := *ec
	c.stats = ns
	return &c
}

// Analyzing reports whether this execution runs under EXPLAIN ANALYZE
// (WithStats): a consumer read then reads without moving or locking.
func (ec *EvalCtx) Analyzing() bool { return ec.stats != nil }

// Eval evaluates e over r (eval.Expr) in this statement.
func (ec *EvalCtx) Eval(e plantree.Expr, r row) (any, error) { return eval.Expr(ec, e, r) }
