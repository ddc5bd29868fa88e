package executor

import (
	"context"
	"strings"
	"time"

	"topicgate/planner"
)

type aggState struct {
	count    int64
	sumI     int64
	sumF     float64
	sumD     time.Duration
	best     any
	distinct map[string]bool
}

// aggregate groups input rows by p.Agg.GroupBy, computes p.Agg.Aggs and
// applies HAVING. Output rows are (group keys..., aggregate values...).
func aggregate(ctx context.Context, ec *evalCtx, p *planner.SelectPlan, in rowIter) (rowIter, error) {
	type group struct {
		keys   []any
		states []aggState
	}
	groups := map[string]*group{}
	var order []string
	var kb strings.Builder
	for {
		r, err := in.next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		keys := make([]any, len(p.Agg.GroupBy))
		kb.Reset()
		for i, g := range p.Agg.GroupBy {
			v, err := ec.eval(g, valuesRow(r))
			if err != nil {
				return nil, err
			}
			keys[i] = v
			if v == nil {
				kb.WriteString("\x01N")
			} else {
				kb.WriteString("\x01V")
				kb.WriteString(planner.FormatText(v))
			}
		}
		k := kb.String()
		gr, ok := groups[k]
		if !ok {
			gr = &group{keys: keys, states: make([]aggState, len(p.Agg.Aggs))}
			groups[k] = gr
			order = append(order, k)
		}
		for i, a := range p.Agg.Aggs {
			if err := accumulate(ec, &gr.states[i], a, r); err != nil {
				return nil, err
			}
		}
	}
	if len(groups) == 0 && len(p.Agg.GroupBy) == 0 {
		groups[""] = &group{states: make([]aggState, len(p.Agg.Aggs))}
		order = append(order, "")
	}
	var rows [][]any
	for _, k := range order {
		gr := groups[k]
		out := append([]any(nil), gr.keys...)
		for i, a := range p.Agg.Aggs {
			out = append(out, finish(&gr.states[i], a))
		}
		if p.Having != nil {
			ok, err := ec.eval(p.Having, valuesRow(out))
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

func accumulate(ec *evalCtx, st *aggState, a *planner.AggExpr, r []any) error {
	if a.Arg == nil {
		st.count++
		return nil
	}
	v, err := ec.eval(a.Arg, valuesRow(r))
	if err != nil || v == nil {
		return err
	}
	if a.Distinct {
		if st.distinct == nil {
			st.distinct = map[string]bool{}
		}
		k := planner.FormatText(v)
		if st.distinct[k] {
			return nil
		}
		st.distinct[k] = true
	}
	st.count++
	switch a.Name {
	case "sum", "avg":
		switch x := v.(type) {
		case int64:
			st.sumI += x
			st.sumF += float64(x)
		case float64:
			st.sumF += x
		case time.Duration:
			st.sumD += x
		case string:
			f, err := planner.ParseText(x, planner.TFloat8)
			if err != nil {
				return err
			}
			st.sumF += f.(float64)
		}
	case "min", "max":
		if st.best == nil {
			st.best = v
			return nil
		}
		c, err := compare(v, st.best)
		if err != nil {
			return err
		}
		if (a.Name == "min" && c < 0) || (a.Name == "max" && c > 0) {
			st.best = v
		}
	}
	return nil
}

func finish(st *aggState, a *planner.AggExpr) any {
	switch a.Name {
	case "count":
		return st.count
	case "sum":
		if st.count == 0 {
			return nil
		}
		switch a.T {
		case planner.TInt8:
			return st.sumI
		case planner.TInterval:
			return st.sumD
		}
		return st.sumF
	case "avg":
		if st.count == 0 {
			return nil
		}
		return st.sumF / float64(st.count)
	}
	return st.best
}
