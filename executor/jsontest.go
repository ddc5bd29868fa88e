package executor

import (
	"strconv"

	"topicgate/eval"
	"topicgate/planner"
)

// evalJSONTest evaluates jsonb's ?, ?|, ?& (does the object have the key,
// any key, every key; an array's string elements count as keys) and @>,
// <@ (containment, as PostgreSQL defines it for jsonb).
func (ec *evalCtx) evalJSONTest(x *planner.JSONTestExpr, r row) (any, error) {
	y, err := ec.eval(x.Y, r)
	if err != nil || y == nil {
		return nil, err
	}
	// Fast path: attrs ? 'k' reads the message's attributes directly.
	if c, ok := x.X.(*planner.ColExpr); ok && x.Op == "?" && planner.MsgCol(c.Idx) == planner.ColAttrs {
		if mr, ok := r.(*msgRow); ok {
			for _, a := range mr.m.Attrs {
				if a.Key == y.(string) {
					return true, nil
				}
			}
			return false, nil
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
	switch x.Op {
	case "?":
		return eval.HasKey(doc, y.(string)), nil
	case "?|", "?&":
		keys, _ := y.([]string)
		for _, k := range keys {
			if eval.HasKey(doc, k) == (x.Op == "?|") {
				return x.Op == "?|", nil
			}
		}
		return x.Op == "?&", nil
	}
	other, err := eval.DecodeJSON(y.(string))
	if err != nil {
		return nil, err
	}
	if x.Op == "<@" {
		return eval.JSONContains(other, doc, true), nil
	}
	return eval.JSONContains(doc, other, true), nil
}

// evalJSONPath evaluates X #> path and X #>> path: each element of the
// text[] path is an object key or an array index (negative from the end).
func (ec *evalCtx) evalJSONPath(x *planner.JSONPathExpr, r row) (any, error) {
	v, err := ec.eval(x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	p, err := ec.eval(x.Path, r)
	if err != nil || p == nil {
		return nil, err
	}
	got, err := eval.DecodeJSON(v.(string))
	if err != nil {
		return nil, err
	}
	for _, k := range p.([]string) {
		switch d := got.(type) {
		case map[string]any:
			var ok bool
			if got, ok = d[k]; !ok {
				return nil, nil
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil {
				return nil, nil
			}
			if i < 0 {
				i += len(d)
			}
			if i < 0 || i >= len(d) {
				return nil, nil
			}
			got = d[i]
		default:
			return nil, nil
		}
	}
	return eval.JSONResult(got, x.Text)
}
