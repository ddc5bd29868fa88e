package rowexec

import (
	"context"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/eval"
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

type aggState struct {
	count    int64
	sumI     int64
	sumF     float64
	sumD     time.Duration
	sumN     *apd.Decimal // numeric sum, and integer sums past int64 (nil: zero)
	best     any
	distinct map[string]bool
	buf      []byte  // string_agg
	all, any bool    // bool_and, bool_or
	list     []any   // array_agg
	ordered  [][]any // rows of an aggregate with ORDER BY: sort keys, value, separator
}

// aggregate groups input rows by agg.GroupBy, computes agg.Aggs and
// applies HAVING. Output rows are (group keys..., aggregate values...).
func aggregate(ctx context.Context, ec *EvalCtx, agg *plantree.AggSpec, having plantree.Expr, in Iter, mem *queryMem) (Iter, error) {
	type group struct {
		keys   []any
		states []aggState
	}
	groups := map[string]*group{}
	var order []string
	var kb []byte
	for {
		r, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		keys := make([]any, len(agg.GroupBy))
		kb = kb[:0]
		for i, g := range agg.GroupBy {
			v, err := ec.Eval(g, ValuesRow(r))
			if err != nil {
				return nil, err
			}
			keys[i] = v
			kb = appendKey(kb, v)
		}
		k := string(kb)
		gr, ok := groups[k]
		if !ok {
			gr = &group{keys: keys, states: make([]aggState, len(agg.Aggs))}
			groups[k] = gr
			order = append(order, k)
			if err := mem.charge(2*int64(len(k)) + rowBytes(keys) + 160*int64(len(gr.states)) + 64); err != nil {
				return nil, err
			}
		}
		for i, a := range agg.Aggs {
			if err := accumulate(ec, &gr.states[i], a, r, mem); err != nil {
				return nil, err
			}
		}
	}
	if len(groups) == 0 && len(agg.GroupBy) == 0 {
		groups[""] = &group{states: make([]aggState, len(agg.Aggs))}
		order = append(order, "")
	}
	var rows [][]any
	for _, k := range order {
		gr := groups[k]
		out := append([]any(nil), gr.keys...)
		for i, a := range agg.Aggs {
			out = append(out, finish(&gr.states[i], a))
		}
		if having != nil {
			ok, err := ec.Eval(having, ValuesRow(out))
			if err != nil {
				return nil, err
			}
			if ok != true {
				continue
			}
		}
		rows = append(rows, out)
	}
	return &sliceIter{rows: rows}, nil
}

func accumulate(ec *EvalCtx, st *aggState, a *plantree.AggExpr, r []any, mem *queryMem) error {
	if a.Filter != nil {
		ok, err := ec.Eval(a.Filter, ValuesRow(r))
		if err != nil || ok != true {
			return err
		}
	}
	if a.Arg == nil {
		st.count++
		return nil
	}
	v, err := ec.Eval(a.Arg, ValuesRow(r))
	if err != nil {
		return err
	}
	if v == nil {
		if a.Name == "array_agg" { // PostgreSQL keeps NULL elements; these arrays cannot
			return pgerror.New(pgerror.CodeFeatureNotSupported, "array_agg over NULL values is not supported")
		}
		return nil
	}
	if a.Distinct {
		if st.distinct == nil {
			st.distinct = map[string]bool{}
		}
		k := values.KeyText(v)
		if st.distinct[k] {
			return nil
		}
		st.distinct[k] = true
		if err := mem.charge(int64(len(k)) + 48); err != nil {
			return err
		}
	}
	if len(a.Order) > 0 && (a.Name == "string_agg" || a.Name == "array_agg") {
		// Order matters only to these: keep the rows, fold them at finish.
		e := make([]any, len(a.Order), len(a.Order)+2)
		for i, o := range a.Order {
			if e[i], err = ec.Eval(o, ValuesRow(r)); err != nil {
				return err
			}
		}
		var sep any
		if a.Sep != nil {
			if sep, err = ec.Eval(a.Sep, ValuesRow(r)); err != nil {
				return err
			}
		}
		st.ordered = append(st.ordered, append(e, v, sep))
		st.count++
		return mem.charge(rowBytes(st.ordered[len(st.ordered)-1]))
	}
	st.count++
	if a.Name == "string_agg" || a.Name == "array_agg" { // they grow with every row
		if err := mem.charge(16 + valueBytes(v)); err != nil {
			return err
		}
	}
	return fold(st, a, v, func() (any, error) { return ec.Eval(a.Sep, ValuesRow(r)) })
}

// fold adds value v (the st.count-th) to st; sep yields string_agg's
// separator for this row.
func fold(st *aggState, a *plantree.AggExpr, v any, sep func() (any, error)) error {
	switch a.Name {
	case "string_agg":
		if st.count > 1 {
			s, err := sep()
			if err != nil {
				return err
			}
			if s != nil {
				st.buf = append(st.buf, eval.AsBytes(s)...)
			}
		}
		st.buf = append(st.buf, eval.AsBytes(v)...)
	case "bool_and", "every":
		st.all = (st.count == 1 || st.all) && v == true
	case "bool_or":
		st.any = st.any || v == true
	case "array_agg":
		st.list = append(st.list, v)
	case "sum", "avg":
		switch x := v.(type) {
		case int64:
			return st.addInt(x)
		case float64:
			st.sumF += x
		case time.Duration:
			st.sumD += x
		case *apd.Decimal:
			return st.addNumeric(x)
		default:
			return pgerror.AssertionFailed("%s over %T", a.Name, v)
		}
	case "min", "max":
		if st.best == nil {
			st.best = v
			return nil
		}
		c, err := values.Compare(v, st.best)
		if err != nil {
			return err
		}
		if (a.Name == "min" && c < 0) || (a.Name == "max" && c > 0) {
			st.best = v
		}
	}
	return nil
}

func finish(st *aggState, a *plantree.AggExpr) any {
	if st.count == 0 && a.Name != "count" {
		return nil // every aggregate but count is NULL over no rows
	}
	if st.ordered != nil {
		sortRows(st.ordered, a.OrderBy)
		n := len(a.Order)
		st.count = 0
		for _, e := range st.ordered {
			st.count++
			_ = fold(st, a, e[n], func() (any, error) { return e[n+1], nil }) // no errors: values are evaluated
		}
		st.ordered = nil
	}
	switch a.Name {
	case "count":
		return st.count
	case "string_agg":
		if a.T == values.TBytea {
			return st.buf
		}
		return string(st.buf)
	case "bool_and", "every":
		return st.all
	case "bool_or":
		return st.any
	case "array_agg":
		return arrayOf(st.list, a.T)
	case "sum":
		if st.count == 0 {
			return nil
		}
		switch a.T {
		case values.TInt8:
			return st.sumI
		case values.TInterval:
			return st.sumD
		case values.TNumeric:
			return st.numericSum()
		}
		return st.sumF
	case "avg":
		if st.count == 0 {
			return nil
		}
		if a.T == values.TNumeric {
			return st.numericAvg()
		}
		return st.sumF / float64(st.count)
	}
	return st.best
}

// arrayOf builds array_agg's result (accumulate refused NULL elements).
func arrayOf(vs []any, t values.Type) any {
	switch t {
	case values.TInt8Array, values.TOidArray:
		out := make([]int64, len(vs))
		for i, v := range vs {
			out[i], _ = v.(int64)
		}
		return out
	case values.TBoolArray:
		out := make([]bool, len(vs))
		for i, v := range vs {
			out[i], _ = v.(bool)
		}
		return out
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _ = v.(string)
	}
	return out
}

// addInt adds x to an integer sum, carrying into sumN when int64 would
// overflow (sum(bigint) is a numeric and cannot overflow).
func (st *aggState) addInt(x int64) error {
	s := st.sumI + x
	if (x > 0 && s < st.sumI) || (x < 0 && s > st.sumI) {
		if err := st.addNumeric(values.NumericFromInt(st.sumI)); err != nil {
			return err
		}
		st.sumI = 0
		return st.addNumeric(values.NumericFromInt(x))
	}
	st.sumI = s
	return nil
}

func (st *aggState) addNumeric(x *apd.Decimal) error {
	if st.sumN == nil {
		st.sumN = x
		return nil
	}
	s, err := values.NumericArith("+", st.sumN, x)
	if err != nil {
		return err
	}
	st.sumN = s
	return nil
}

// numericSum is the exact sum of integers and numerics.
func (st *aggState) numericSum() *apd.Decimal {
	if st.sumN == nil {
		return values.NumericFromInt(st.sumI)
	}
	if st.sumI == 0 {
		return st.sumN
	}
	s, err := values.NumericArith("+", st.sumN, values.NumericFromInt(st.sumI))
	if err != nil { // beyond numeric's range: NaN rather than a wrong value
		return &apd.Decimal{Form: apd.NaN}
	}
	return s
}

// numericAvg divides the sum by the count with PostgreSQL's division scale.
func (st *aggState) numericAvg() *apd.Decimal {
	q, err := values.NumericArith("/", st.numericSum(), values.NumericFromInt(st.count))
	if err != nil {
		return &apd.Decimal{Form: apd.NaN}
	}
	return q
}
