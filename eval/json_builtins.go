package eval

import (
	"encoding/json"
	"strings"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// jsonBuiltins are the functions over json and jsonb (jsonb's operators,
// jsonops.go, and the jsonb generators use decodeJSON, hasKey,
// jsonContains and jsonResult too).
var jsonBuiltins = map[string]Func{
	"jsonb_typeof": func(_ Context, a []any) (any, error) {
		s := strings.TrimSpace(a[0].(string))
		switch {
		case strings.HasPrefix(s, "{"):
			return "object", nil
		case strings.HasPrefix(s, "["):
			return "array", nil
		case strings.HasPrefix(s, "\""):
			return "string", nil
		case s == "true" || s == "false":
			return "boolean", nil
		case s == "null":
			return "null", nil
		}
		return "number", nil
	},
	"jsonb_pretty": func(_ Context, a []any) (any, error) {
		var v any
		if err := json.Unmarshal([]byte(a[0].(string)), &v); err != nil {
			return nil, err
		}
		b, _ := json.MarshalIndent(v, "", "    ")
		return string(b), nil
	},
	"to_jsonb": func(_ Context, a []any) (any, error) {
		var v any = a[0]
		if b, ok := v.([]byte); ok {
			v = values.FormatText(b)
		}
		b, _ := json.Marshal(v)
		return string(b), nil
	},
}

// decodeJSON parses JSON text, its numbers kept as json.Number.
func decodeJSON(s string) (any, error) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "invalid json: %v", err)
	}
	return doc, nil
}

// hasKey is jsonb's ?: an object's key, or an array's string element.
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
