package eval

import (
	"strings"

	"topicgate/sql/values"
)

// arrayBuiltins are the functions over arrays. topicgate's arrays have one
// dimension and no NULL elements: int8[] is []int64, text[] []string,
// bool[] []bool.
var arrayBuiltins = map[string]Func{
	"array_length": func(_ Context, a []any) (any, error) { return arrayLen(a[0]), nil },
	"cardinality": func(_ Context, a []any) (any, error) { // 0 for an empty array
		if n := arrayLen(a[0]); n != nil {
			return n, nil
		}
		return int64(0), nil
	},
	"array_to_string": func(_ Context, a []any) (any, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		var parts []string
		switch x := a[0].(type) {
		case []string:
			parts = x
		case []any:
			for _, v := range x {
				if v != nil { // NULL elements are left out, as without a null string
					parts = append(parts, values.KeyText(v))
				}
			}
		default:
			for i := int64(1); ; i++ {
				v := arrayElem(x, i)
				if v == nil {
					break
				}
				parts = append(parts, values.KeyText(v))
			}
		}
		sep, _ := a[1].(string)
		return strings.Join(parts, sep), nil
	},
	"array_upper": func(_ Context, a []any) (any, error) {
		if d, _ := a[1].(int64); d != 1 {
			return nil, nil
		}
		return arrayLen(a[0]), nil
	},
	// array_remove(a, x): a without the elements equal to x (psql's \sv
	// strips the check options from reloptions).
	"array_remove": func(_ Context, a []any) (any, error) {
		x := values.KeyText(a[1])
		var out []string
		switch arr := a[0].(type) {
		case []string:
			out = []string{}
			for _, e := range arr {
				if e != x {
					out = append(out, e)
				}
			}
			return out, nil
		}
		return a[0], nil
	},
}

// arrayLen is an array's length; an empty array has no dimension, so
// its length is NULL, as in PostgreSQL.
func arrayLen(v any) any {
	n := -1
	switch x := v.(type) {
	case []int64:
		n = len(x)
	case []string:
		n = len(x)
	case []bool:
		n = len(x)
	}
	if n <= 0 {
		return nil
	}
	return int64(n)
}

// arrayElem is arr[i] (1-based), nil outside the array.
func arrayElem(arr any, i int64) any {
	if i < 1 {
		return nil
	}
	switch x := arr.(type) {
	case []int64:
		if i <= int64(len(x)) {
			return x[i-1]
		}
	case []string:
		if i <= int64(len(x)) {
			return x[i-1]
		}
	case []bool:
		if i <= int64(len(x)) {
			return x[i-1]
		}
	}
	return nil
}
