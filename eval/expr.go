package eval

import (
	"encoding/json"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

// Row is the input row an expression reads its columns from.
type Row interface {
	Col(i int) (any, error)
}

// AttrsRow is a row of a topic's message, whose attributes attrs ->> 'k'
// and attrs ? 'k' read without building the attrs column's JSON.
type AttrsRow interface {
	Row
	MsgAttrs() []topicstore.Attr
}

// Env is what evaluating an expression needs of the running statement
// besides the row: a builtin's Context, the bound parameters, the row of
// the query around a correlated subquery, subqueries' results and the
// current values of the set-returning calls being projected. Package
// rowexec implements it; subqueries and set-returning functions run
// there.
type Env interface {
	Context
	Params() []any
	// Outer is the row of the query around the correlated subquery
	// running (plantree.OuterRef reads it); nil outside one.
	Outer() Row
	Subquery(x *plantree.SubqueryExpr, r Row) (any, error)
	SRFValue(f *plantree.FuncExpr) (any, error)
}

// Expr evaluates e over row r. NULL is nil; a comparison, an operator or
// a strict builtin with a NULL operand is NULL; AND, OR, IN and
// IS DISTINCT FROM follow SQL's three-valued logic.
func Expr(env Env, e plantree.Expr, r Row) (any, error) {
	switch x := e.(type) {
	case *plantree.ColExpr:
		return r.Col(x.Idx)
	case *plantree.ConstExpr:
		return x.V, nil
	case *plantree.SubqueryExpr:
		return env.Subquery(x, r)
	case *plantree.OuterRef:
		outer := env.Outer()
		if outer == nil {
			return nil, pgerror.AssertionFailed("outer reference %s evaluated outside its subquery", x)
		}
		return outer.Col(x.Idx)
	case *plantree.WindowExpr:
		return r.Col(x.Slot) // computed by computeWindows
	case *plantree.ParamExpr:
		params := env.Params()
		if x.Idx >= len(params) {
			return nil, pgerror.Newf(pgerror.CodeUndefinedParameter, "there is no parameter $%d", x.Idx+1)
		}
		return params[x.Idx], nil
	case *plantree.CmpExpr:
		if x.Op == "IS DISTINCT FROM" || x.Op == "IS NOT DISTINCT FROM" {
			return evalDistinct(env, x, r)
		}
		l, err := Expr(env, x.L, r)
		if err != nil || l == nil {
			return nil, err
		}
		rv, err := Expr(env, x.R, r)
		if err != nil || rv == nil {
			return nil, err
		}
		return compareOp(x.Op, l, rv)
	case *plantree.LogicExpr:
		return evalLogic(env, x, r)
	case *plantree.NotExpr:
		v, err := Expr(env, x.X, r)
		if err != nil || v == nil {
			return nil, err
		}
		return !v.(bool), nil
	case *plantree.ArithExpr:
		l, err := Expr(env, x.L, r)
		if err != nil || l == nil {
			return nil, err
		}
		rv, err := Expr(env, x.R, r)
		if err != nil || rv == nil {
			return nil, err
		}
		return values.Arith(x.Op, l, rv, x.T)
	case *plantree.NegExpr:
		return evalNeg(env, x, r)
	case *plantree.JSONGetExpr:
		return evalJSONGet(env, x, r)
	case *plantree.JSONTestExpr:
		return evalJSONTest(env, x, r)
	case *plantree.JSONPathExpr:
		return evalJSONPath(env, x, r)
	case *plantree.FuncExpr:
		if x.Set {
			return env.SRFValue(x)
		}
		return evalFunc(env, x, r)
	case *plantree.CastExpr:
		return evalCast(env, x, r)
	case *plantree.InExpr:
		return evalIn(env, x, r)
	case *plantree.AnyExpr:
		return evalAny(env, x, r)
	case *plantree.IsNullExpr:
		v, err := Expr(env, x.X, r)
		if err != nil {
			return nil, err
		}
		return (v == nil) != x.Not, nil
	case *plantree.IsBoolExpr:
		v, err := Expr(env, x.X, r)
		if err != nil {
			return nil, err
		}
		is := v != nil && v.(bool) == x.Value
		return is != x.Not, nil
	case *plantree.CaseExpr:
		return evalCase(env, x, r)
	case *plantree.CoalesceExpr:
		for _, a := range x.Args {
			v, err := Expr(env, a, r)
			if err != nil || v != nil {
				return v, err
			}
		}
		return nil, nil
	case *plantree.SubscriptExpr:
		arr, err := Expr(env, x.X, r)
		if err != nil || arr == nil {
			return nil, err
		}
		iv, err := Expr(env, x.Index, r)
		if err != nil || iv == nil {
			return nil, err
		}
		return arrayElem(arr, iv.(int64)), nil
	case *plantree.ArrayExpr:
		vals := make([]any, len(x.Elems))
		for i, el := range x.Elems {
			v, err := Expr(env, el, r)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return values.NormalizeParam(vals, x.T)
	}
	return nil, pgerror.AssertionFailed("cannot evaluate %T", e)
}

func evalNeg(env Env, x *plantree.NegExpr, r Row) (any, error) {
	v, err := Expr(env, x.X, r)
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
func evalCast(env Env, x *plantree.CastExpr, r Row) (any, error) {
	v, err := Expr(env, x.X, r)
	if err != nil {
		return nil, err
	}
	if t, ok := v.(time.Time); ok {
		if out, ok := castZoned(env, t, x.X.Type(), x.T); ok {
			return out, nil
		}
	}
	if ds := env.DateStyle(); ds != (values.DateStyle{}) {
		return values.ConvertIn(v, x.X.Type(), x.T, ds)
	}
	return values.Convert(v, x.X.Type(), x.T)
}

// castZoned does the casts that depend on the session's TimeZone: a
// timestamptz prints in it, as on the wire. (Dates and the fields of a
// timestamptz are taken in UTC: docs/dialect/expressions.md.)
func castZoned(env Env, t time.Time, from, to values.Type) (any, bool) {
	if from != values.TTimestamptz || !to.IsText() {
		return nil, false
	}
	loc := env.Location()
	if loc == nil {
		loc = time.UTC
	}
	return string(values.AppendTimestamp(nil, t.In(loc), true, env.DateStyle())), true
}

func evalIn(env Env, x *plantree.InExpr, r Row) (any, error) {
	v, err := Expr(env, x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	sawNull := false
	for _, it := range x.List {
		w, err := Expr(env, it, r)
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

func evalCase(env Env, x *plantree.CaseExpr, r Row) (any, error) {
	for _, w := range x.Whens {
		c, err := Expr(env, w.Cond, r)
		if err != nil {
			return nil, err
		}
		if c == true {
			return Expr(env, w.Result, r)
		}
	}
	if x.Else == nil {
		return nil, nil
	}
	return Expr(env, x.Else, r)
}

func evalLogic(env Env, x *plantree.LogicExpr, r Row) (any, error) {
	sawNull := false
	for _, a := range x.Args {
		v, err := Expr(env, a, r)
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

func evalAny(env Env, x *plantree.AnyExpr, r Row) (any, error) {
	v, err := Expr(env, x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	arr, err := Expr(env, x.Array, r)
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
		res, err := compareOp(x.Op, v, e)
		if err != nil {
			return nil, err
		}
		if res.(bool) != x.All {
			return !x.All, nil
		}
	}
	return x.All, nil
}

func evalJSONGet(env Env, x *plantree.JSONGetExpr, r Row) (any, error) {
	key, err := Expr(env, x.Key, r)
	if err != nil || key == nil {
		return nil, err
	}
	// Fast path: attrs ->> 'k' reads the message's attribute directly.
	if c, ok := x.X.(*plantree.ColExpr); ok && plantree.MsgCol(c.Idx) == plantree.ColAttrs {
		if mr, ok := r.(AttrsRow); ok {
			k, _ := key.(string)
			for _, a := range mr.MsgAttrs() {
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
	v, err := Expr(env, x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	doc, err := decodeJSON(v.(string))
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
	return jsonResult(got, x.Text)
}

func evalDistinct(env Env, x *plantree.CmpExpr, r Row) (any, error) {
	l, err := Expr(env, x.L, r)
	if err != nil {
		return nil, err
	}
	rv, err := Expr(env, x.R, r)
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

// evalFunc evaluates a builtin's arguments and calls it (call); a
// NULL argument makes the result NULL unless the builtin is NullAware.
func evalFunc(env Env, x *plantree.FuncExpr, r Row) (any, error) {
	if x.Fn == nil {
		return nil, pgerror.AssertionFailed("builtin %s was planned without its declaration", x.Name)
	}
	var buf [4]any
	args := buf[:0]
	for _, a := range x.Args {
		v, err := Expr(env, a, r)
		if err != nil {
			return nil, err
		}
		if v == nil && !x.Fn.NullAware {
			return nil, nil
		}
		args = append(args, v)
	}
	return call(env, x, args)
}
