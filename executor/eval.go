package executor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/eval"
	"topicgate/planner"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// row gives expression evaluation access to the current input row.
type row interface {
	col(i int) (any, error)
}

// valuesRow is a row of already computed values.
type valuesRow []any

func (r valuesRow) col(i int) (any, error) { return r[i], nil }

// evalCtx holds what an expression may read besides the row: bound
// parameters, the statement time and the session.
type evalCtx struct {
	params []any
	now    time.Time
	sess   *Session
	subs   map[*planner.SubqueryExpr]*subResult // results of this execution's subqueries
	// ctx is the running statement's (set by runSelect), for correlated
	// subqueries, which run while an expression is evaluated.
	ctx context.Context
	// outer is the row of the query around a correlated subquery while
	// the subquery runs (planner.OuterRef reads it).
	outer row
	// memo keeps reusable correlated subqueries' results by the outer
	// values they read, for this execution (shared by the copies made for
	// subqueries).
	memo map[*planner.SubqueryExpr]map[string]*subResult
	// srf holds the current values of the set-returning calls of the
	// select lists being projected (srfIter sets them).
	srf map[*planner.FuncExpr]any
	// work holds, for each recursive query running, the rows its
	// recursive term reads next (planner.WorkTable); shared by the copies
	// made for subqueries.
	work map[*planner.WorkTable][][]any
	// mem is the statement's memory budget (--max-query-mib), charged by
	// every sort, hash table, window, set operation, DISTINCT, recursive
	// union and subquery result of the statement; shared by the copies.
	mem *queryMem
	// stats, under EXPLAIN ANALYZE, counts each plan node's rows and time.
	stats *nodeStats
	// read is the statement's read point (readPoint); shared by the copies.
	read *readPoint
}

func (ec *evalCtx) eval(e planner.Expr, r row) (any, error) {
	switch x := e.(type) {
	case *planner.ColExpr:
		return r.col(x.Idx)
	case *planner.ConstExpr:
		return x.V, nil
	case *planner.SubqueryExpr:
		return ec.evalSubquery(x, r)
	case *planner.OuterRef:
		if ec.outer == nil {
			return nil, pgerror.AssertionFailed("outer reference %s evaluated outside its subquery", x)
		}
		return ec.outer.col(x.Idx)
	case *planner.WindowExpr:
		return r.col(x.Slot) // computed by computeWindows
	case *planner.ParamExpr:
		if x.Idx >= len(ec.params) {
			return nil, pgerror.Newf(pgerror.CodeUndefinedParameter, "there is no parameter $%d", x.Idx+1)
		}
		return ec.params[x.Idx], nil
	case *planner.CmpExpr:
		if x.Op == "IS DISTINCT FROM" || x.Op == "IS NOT DISTINCT FROM" {
			return ec.evalDistinct(x, r)
		}
		l, err := ec.eval(x.L, r)
		if err != nil || l == nil {
			return nil, err
		}
		rv, err := ec.eval(x.R, r)
		if err != nil || rv == nil {
			return nil, err
		}
		return eval.Compare(x.Op, l, rv)
	case *planner.LogicExpr:
		return ec.evalLogic(x, r)
	case *planner.NotExpr:
		v, err := ec.eval(x.X, r)
		if err != nil || v == nil {
			return nil, err
		}
		return !v.(bool), nil
	case *planner.ArithExpr:
		l, err := ec.eval(x.L, r)
		if err != nil || l == nil {
			return nil, err
		}
		rv, err := ec.eval(x.R, r)
		if err != nil || rv == nil {
			return nil, err
		}
		return values.Arith(x.Op, l, rv, x.T)
	case *planner.NegExpr:
		return ec.evalNeg(x, r)
	case *planner.JSONGetExpr:
		return ec.evalJSONGet(x, r)
	case *planner.JSONTestExpr:
		return ec.evalJSONTest(x, r)
	case *planner.JSONPathExpr:
		return ec.evalJSONPath(x, r)
	case *planner.FuncExpr:
		if x.Set {
			return ec.srfValue(x)
		}
		return ec.evalFunc(x, r)
	case *planner.CastExpr:
		return ec.evalCast(x, r)
	case *planner.InExpr:
		return ec.evalIn(x, r)
	case *planner.AnyExpr:
		return ec.evalAny(x, r)
	case *planner.IsNullExpr:
		v, err := ec.eval(x.X, r)
		if err != nil {
			return nil, err
		}
		return (v == nil) != x.Not, nil
	case *planner.IsBoolExpr:
		v, err := ec.eval(x.X, r)
		if err != nil {
			return nil, err
		}
		is := v != nil && v.(bool) == x.Value
		return is != x.Not, nil
	case *planner.CaseExpr:
		return ec.evalCase(x, r)
	case *planner.CoalesceExpr:
		for _, a := range x.Args {
			v, err := ec.eval(a, r)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	case *planner.SubscriptExpr:
		arr, err := ec.eval(x.X, r)
		if err != nil || arr == nil {
			return nil, err
		}
		iv, err := ec.eval(x.Index, r)
		if err != nil || iv == nil {
			return nil, err
		}
		return eval.ArrayElem(arr, iv.(int64)), nil
	case *planner.ArrayExpr:
		vals := make([]any, len(x.Elems))
		for i, el := range x.Elems {
			v, err := ec.eval(el, r)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return values.NormalizeParam(vals, x.T)
	}
	return nil, pgerror.AssertionFailed("cannot evaluate %T", e)
}

func (ec *evalCtx) evalNeg(x *planner.NegExpr, r row) (any, error) {
	v, err := ec.eval(x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	switch n := v.(type) {
	case int64:
		return -n, nil
	case float64:
		return -n, nil
	case time.Duration:
		return -n, nil
	case *apd.Decimal:
		return new(apd.Decimal).Neg(n), nil
	}
	return nil, pgerror.AssertionFailed("negation of %T", v)
}

// evalCast converts with sql/values' casts; under a DateStyle other than
// the default, dates print and read in it.
func (ec *evalCtx) evalCast(x *planner.CastExpr, r row) (any, error) {
	v, err := ec.eval(x.X, r)
	if err != nil {
		return nil, err
	}
	if ec.sess != nil && ec.sess.settings.dateStyle != (values.DateStyle{}) {
		return values.ConvertIn(v, x.X.Type(), x.T, ec.sess.settings.dateStyle)
	}
	return values.Convert(v, x.X.Type(), x.T)
}

func (ec *evalCtx) evalIn(x *planner.InExpr, r row) (any, error) {
	v, err := ec.eval(x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	sawNull := false
	for _, it := range x.List {
		w, err := ec.eval(it, r)
		if err != nil {
			return nil, err
		}
		if w == nil {
			sawNull = true
			continue
		}
		c, err := values.Compare(v, w)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			return !x.Not, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return x.Not, nil
}

func (ec *evalCtx) evalCase(x *planner.CaseExpr, r row) (any, error) {
	for _, w := range x.Whens {
		c, err := ec.eval(w.Cond, r)
		if err != nil {
			return nil, err
		}
		if c == true {
			return ec.eval(w.Result, r)
		}
	}
	if x.Else == nil {
		return nil, nil
	}
	return ec.eval(x.Else, r)
}

func (ec *evalCtx) evalLogic(x *planner.LogicExpr, r row) (any, error) {
	sawNull := false
	for _, a := range x.Args {
		v, err := ec.eval(a, r)
		if err != nil {
			return nil, err
		}
		if v == nil {
			sawNull = true
			continue
		}
		if v.(bool) != x.And {
			return !x.And, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return x.And, nil
}

func (ec *evalCtx) evalAny(x *planner.AnyExpr, r row) (any, error) {
	v, err := ec.eval(x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	arr, err := ec.eval(x.Array, r)
	if err != nil || arr == nil {
		return nil, err
	}
	var elems []any
	switch a := arr.(type) {
	case []int64:
		if n, ok := v.(int64); ok && x.Op == "=" && !x.All {
			for _, e := range a {
				if e == n {
					return true, nil
				}
			}
			return false, nil
		}
		for _, e := range a {
			elems = append(elems, e)
		}
	case []string:
		for _, e := range a {
			elems = append(elems, e)
		}
	case []bool:
		for _, e := range a {
			elems = append(elems, e)
		}
	default:
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "op ANY/ALL (array) requires array on right side")
	}
	for _, e := range elems {
		res, err := eval.Compare(x.Op, v, e)
		if err != nil {
			return nil, err
		}
		if res.(bool) != x.All {
			return !x.All, nil
		}
	}
	return x.All, nil
}

func (ec *evalCtx) evalJSONGet(x *planner.JSONGetExpr, r row) (any, error) {
	key, err := ec.eval(x.Key, r)
	if err != nil || key == nil {
		return nil, err
	}
	// Fast path: attrs ->> 'k' reads the message's attribute directly.
	if c, ok := x.X.(*planner.ColExpr); ok && planner.MsgCol(c.Idx) == planner.ColAttrs {
		if mr, ok := r.(*msgRow); ok {
			k, _ := key.(string)
			for _, a := range mr.m.Attrs {
				if a.Key == k {
					if x.Text {
						return a.Value, nil
					}
					b, _ := json.Marshal(a.Value)
					return string(b), nil
				}
			}
			return nil, nil
		}
	}
	v, err := ec.eval(x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	doc, err := eval.DecodeJSON(v.(string))
	if err != nil {
		return nil, err
	}
	var got any
	switch d := doc.(type) {
	case map[string]any:
		k, ok := key.(string)
		if !ok {
			return nil, nil
		}
		val, ok := d[k]
		if !ok {
			return nil, nil
		}
		got = val
	case []any:
		idx, ok := key.(int64)
		if !ok || idx < 0 || int(idx) >= len(d) {
			return nil, nil
		}
		got = d[idx]
	default:
		return nil, nil
	}
	return eval.JSONResult(got, x.Text)
}

func (ec *evalCtx) evalDistinct(x *planner.CmpExpr, r row) (any, error) {
	l, err := ec.eval(x.L, r)
	if err != nil {
		return nil, err
	}
	rv, err := ec.eval(x.R, r)
	if err != nil {
		return nil, err
	}
	same := l == nil && rv == nil
	if l != nil && rv != nil {
		c, err := values.Compare(l, rv)
		if err != nil {
			return nil, err
		}
		same = c == 0
	}
	return same == (x.Op == "IS NOT DISTINCT FROM"), nil
}
