package executor

import (
	"context"
	"time"

	"topicgate/eval"
	"topicgate/planner/plantree"
)

// row gives expression evaluation access to the current input row.
type row = eval.Row

// valuesRow is a row of already computed values.
type valuesRow []any

func (r valuesRow) Col(i int) (any, error) { return r[i], nil }

// evalCtx holds what an expression may read besides the row: bound
// parameters, the statement time and the session.
type evalCtx struct {
	params []any
	now    time.Time
	host   rowHost                               // the session running the statement
	subs   map[*plantree.SubqueryExpr]*subResult // results of this execution's subqueries
	// ctx is the running statement's (set by runSelect), for correlated
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
	stats *nodeStats
	// read is the statement's read point (readPoint); shared by the copies.
	read *readPoint
}

// eval evaluates e over r (eval.Expr) in this statement.
func (ec *evalCtx) eval(e plantree.Expr, r row) (any, error) { return eval.Expr(ec, e, r) }
