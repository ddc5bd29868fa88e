package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"

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
		return compareOp(x.Op, l, rv)
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
		return arith(x.Op, l, rv, x.T)
	case *planner.NegExpr:
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
		v, err := ec.eval(x.X, r)
		if err != nil {
			return nil, err
		}
		return values.Convert(v, x.X.Type(), x.T)
	case *planner.InExpr:
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
			c, err := compare(v, w)
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
		return arrayElem(arr, iv.(int64)), nil
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

// jsonResult renders an extracted JSON value as jsonb, or as text (->>,
// #>>: a string's contents, NULL for JSON null).
func jsonResult(got any, text bool) (any, error) {
	if text {
		switch g := got.(type) {
		case nil:
			return nil, nil
		case string:
			return g, nil
		case json.Number:
			return g.String(), nil
		}
	}
	b, _ := json.Marshal(got)
	return values.NormalizeJSONB(string(b))
}

func compareOp(op string, l, r any) (any, error) {
	switch op {
	case "~~", "~~*", "!~~", "!~~*", "~", "~*", "!~", "!~*":
		return match(op, l, r)
	}
	c, err := compare(l, r)
	if err != nil {
		return nil, err
	}
	switch op {
	case "=":
		return c == 0, nil
	case "<>":
		return c != 0, nil
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	case ">=":
		return c >= 0, nil
	}
	return nil, pgerror.AssertionFailed("unknown comparison %s", op)
}

// compare orders two non-NULL values of comparable types.
func compare(a, b any) (int, error) {
	if x, ok := a.(*apd.Decimal); ok {
		return compareNumeric(x, b)
	}
	if y, ok := b.(*apd.Decimal); ok {
		c, err := compareNumeric(y, a)
		return -c, err
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp3(x < y, x > y), nil
		case float64:
			return cmp3(float64(x) < y, float64(x) > y), nil
		case string:
			f, err := values.ParseText(y, values.TFloat8)
			if err != nil {
				return 0, err
			}
			return compare(float64(x), f)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmp3(x < y, x > y), nil
		case int64:
			return cmp3(x < float64(y), x > float64(y)), nil
		case string:
			f, err := values.ParseText(y, values.TFloat8)
			if err != nil {
				return 0, err
			}
			return compare(x, f)
		}
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y), nil
		case int64, float64:
			c, err := compare(b, a)
			return -c, err
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp3(!x && y, x && !y), nil
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return cmp3(x < y, x > y), nil
		}
	}
	return 0, pgerror.Newf(pgerror.CodeDatatypeMismatch, "cannot compare %T with %T", a, b)
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

var regexCache sync.Map // pattern key -> *regexp.Regexp

func match(op string, l, r any) (any, error) {
	switch op {
	case "~~", "!~~", "~~*", "!~~*":
		return like(op, l, r)
	}
	s, ok1 := l.(string)
	p, ok2 := r.(string)
	if !ok1 || !ok2 {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator %s needs text operands", op)
	}
	key := op + "\x00" + p
	re, ok := regexCache.Load(key)
	if !ok {
		src := p
		if strings.Contains(op, "*") {
			src = "(?i)" + src
		}
		c, err := regexp.Compile(src)
		if err != nil {
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid regular expression: %v", err)
		}
		re, _ = regexCache.LoadOrStore(key, c)
	}
	m := re.(*regexp.Regexp).MatchString(s)
	if strings.HasPrefix(op, "!") {
		return !m, nil
	}
	return m, nil
}

func arith(op string, l, r any, t values.Type) (any, error) {
	if op == "||" {
		if lb, ok := l.([]byte); ok {
			if rb, ok := r.([]byte); ok {
				return append(append([]byte{}, lb...), rb...), nil
			}
		}
		return values.FormatText(l) + values.FormatText(r), nil
	}
	if t == values.TNumeric { // decimal arithmetic, PostgreSQL's scales
		x, err := toNumeric(l)
		if err != nil {
			return nil, err
		}
		y, err := toNumeric(r)
		if err != nil {
			return nil, err
		}
		return values.NumericArith(op, x, y)
	}
	// A numeric meeting a float8 (or an interval) computes in float8.
	var err error
	if l, err = numericOperand(l); err != nil {
		return nil, err
	}
	if r, err = numericOperand(r); err != nil {
		return nil, err
	}
	switch x := l.(type) {
	case int64:
		switch y := r.(type) {
		case int64:
			v, err := intArith(op, x, y)
			if err == nil && t == values.TInt4 {
				if n := v.(int64); n < math.MinInt32 || n > math.MaxInt32 {
					return nil, pgerror.New(pgerror.CodeNumericValueOutOfRange, "integer out of range")
				}
			}
			return v, err
		case float64:
			return floatArith(op, float64(x), y)
		case time.Time: // days + date
			return y.AddDate(0, 0, int(x)), nil
		}
	case float64:
		switch y := r.(type) {
		case int64:
			return floatArith(op, x, float64(y))
		case float64:
			return floatArith(op, x, y)
		}
	case time.Time:
		switch y := r.(type) {
		case time.Duration:
			if op == "-" {
				return x.Add(-y), nil
			}
			return x.Add(y), nil
		case time.Time:
			if t.IsInt() { // date - date: days between
				return int64(x.Sub(y) / (24 * time.Hour)), nil
			}
			return x.Sub(y), nil
		case int64: // date ± days
			if op == "-" {
				y = -y
			}
			return x.AddDate(0, 0, int(y)), nil
		}
	case time.Duration:
		switch y := r.(type) {
		case time.Duration:
			if op == "-" {
				return x - y, nil
			}
			return x + y, nil
		case time.Time:
			return y.Add(x), nil
		case int64:
			if op == "/" {
				if y == 0 {
					return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
				}
				return x / time.Duration(y), nil
			}
			return x * time.Duration(y), nil
		case float64:
			if op == "/" {
				return time.Duration(float64(x) / y), nil
			}
			return time.Duration(float64(x) * y), nil
		}
	}
	return nil, pgerror.AssertionFailed("arithmetic %T %s %T reached the executor", l, op, r)
}

// numericOperand turns a numeric (or numeric text) into float64.
func numericOperand(v any) (any, error) {
	if d, ok := v.(*apd.Decimal); ok {
		return values.NumericToFloat(d), nil
	}
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	f, err := values.ParseText(s, values.TFloat8)
	if err != nil {
		return nil, pgerror.AssertionFailed("numeric operand %q: %v", s, err)
	}
	return f, nil
}

func intArith(op string, x, y int64) (any, error) {
	overflow := pgerror.New(pgerror.CodeNumericValueOutOfRange, "bigint out of range")
	switch op {
	case "+":
		s := x + y
		if (s > x) != (y > 0) {
			return nil, overflow
		}
		return s, nil
	case "-":
		s := x - y
		if (s < x) != (y > 0) {
			return nil, overflow
		}
		return s, nil
	case "*":
		if x != 0 && (x*y/x != y || (x == -1 && y == math.MinInt64)) {
			return nil, overflow
		}
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		if op == "/" {
			return x / y, nil
		}
		return x % y, nil
	}
	return nil, pgerror.AssertionFailed("int op %s", op)
}

func floatArith(op string, x, y float64) (any, error) {
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		if y == 0 {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		return x / y, nil
	case "%":
		return math.Mod(x, y), nil
	}
	return nil, pgerror.AssertionFailed("float op %s", op)
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
		c, err := compare(l, rv)
		if err != nil {
			return nil, err
		}
		same = c == 0
	}
	return same == (x.Op == "IS NOT DISTINCT FROM"), nil
}
