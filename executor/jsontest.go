package executor

import (
	"encoding/json"
	"strconv"
	"strings"

	"topicgate/planner"
	"topicgate/sql/pgerror"
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

func decodeJSON(s string) (any, error) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "invalid json: %v", err)
	}
	return doc, nil
}

func hasKey(doc any, k string) bool {
	switch d := doc.(type) {
	case map[string]any:
		_, ok := d[k]
		return ok
	case []any:
		for _, e := range d {
			if s, ok := e.(string); ok && s == k {
				return true
			}
		}
	case string:
		return d == k
	}
	return false
}

// jsonContains reports whether a contains b: objects contain the pairs of
// b (recursively), arrays contain every element of b in any order, and at
// the top level an array contains a bare scalar equal to an element.
func jsonContains(a, b any, top bool) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, bv := range y {
			av, ok := x[k]
			if !ok || !jsonContains(av, bv, false) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			if _, scalar := b.(map[string]any); !top || scalar {
				return false
			}
			y = []any{b}
		}
		for _, bv := range y {
			found := false
			for _, av := range x {
				if jsonContains(av, bv, false) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		return numbersEqual(x, y)
	default:
		return a == b
	}
}

func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	fa, errA := a.Float64()
	fb, errB := b.Float64()
	return errA == nil && errB == nil && fa == fb
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
