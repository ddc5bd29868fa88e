package eval

import (
	"strconv"
	"topicgate/planner/plantree"
)

// evalJSONTest evaluates jsonb's ?, ?|, ?& (does the object have the key,
// any key, every key; an array's string elements count as keys) and @>,
// <@ (containment, as PostgreSQL defines it for jsonb).
func evalJSONTest(env Env, x *plantree.JSONTestExpr, r Row) (any, error) {
	y, err := Expr(env, x.Y, r)
	if err != nil || y == nil {
		return nil, err
	}
	// Fast path: attrs ? 'k' reads the message's attributes directly.
	if c, ok := x.X.(*plantree.ColExpr); ok && x.Op == "?" && plantree.MsgCol(c.Idx) == plantree.ColAttrs {
		if mr, ok := r.(AttrsRow); ok {
			for _, a := range mr.MsgAttrs() {
				if a.Key == y.(string) {
					return true, nil
				}
			}
			return false, nil
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
	switch x.Op {
	case "?":
		return hasKey(doc, y.(string)), nil
	case "?|", "?&":
		keys, _ := y.([]string)
		for _, k := range keys {
			if hasKey(doc, k) == (x.Op == "?|") {
				return x.Op == "?|", nil
			}
		}
		return x.Op == "?&", nil
	}
	other, err := decodeJSON(y.(string))
	if err != nil {
		return nil, err
	}
	if x.Op == "<@" {
		return jsonContains(other, doc, true), nil
	}
	return jsonContains(doc, other, true), nil
}

// evalJSONPath evaluates X #> path and X #>> path: each element of the
// text[] path is an object key or an array index (negative from the end).
func evalJSONPath(env Env, x *plantree.JSONPathExpr, r Row) (any, error) {
	v, err := Expr(env, x.X, r)
	if err != nil || v == nil {
		return nil, err
	}
	p, err := Expr(env, x.Path, r)
	if err != nil || p == nil {
		return nil, err
	}
	got, err := decodeJSON(v.(string))
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
	return jsonResult(got, x.Text)
}
