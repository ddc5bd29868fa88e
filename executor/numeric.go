package executor

import (
	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// toNumeric converts an operand of a numeric operation: the planner has
// typed it numeric or integer; a float8 here comes from a float-computed
// function typed numeric, a string from numeric text.
func toNumeric(v any) (*apd.Decimal, error) {
	switch x := v.(type) {
	case *apd.Decimal:
		return x, nil
	case int64:
		return values.NumericFromInt(x), nil
	case float64:
		return values.NumericFromFloat(x)
	case string:
		return values.ParseNumeric(x)
	}
	return nil, pgerror.AssertionFailed("numeric operand %T", v)
}

// compareNumeric orders a numeric against a numeric or an integer exactly,
// and against a float8 in float8, as PostgreSQL does. NaN sorts above
// everything and equals itself.
func compareNumeric(x *apd.Decimal, b any) (int, error) {
	if f, ok := b.(float64); ok {
		return compare(values.NumericToFloat(x), f)
	}
	y, err := toNumeric(b)
	if err != nil {
		return 0, err
	}
	xn, yn := x.Form == apd.NaN, y.Form == apd.NaN
	switch {
	case xn && yn:
		return 0, nil
	case xn:
		return 1, nil
	case yn:
		return -1, nil
	}
	return x.Cmp(y), nil
}

// numericFns are round, trunc, floor and ceil: numeric in, numeric out;
// float8 (or an integer, which PostgreSQL rounds as float8) in, float8 out.
// The two-argument forms exist only for numeric.
func numericRound(a []any, mode apd.Rounder, fl func(float64) float64) (any, error) {
	if _, ok := a[0].(*apd.Decimal); !ok && len(a) == 1 {
		if n, ok := a[0].(int64); ok {
			return fl(float64(n)), nil
		}
		if f, ok := a[0].(float64); ok {
			return fl(f), nil
		}
	}
	d, err := toNumeric(a[0])
	if err != nil {
		return nil, err
	}
	scale := int64(0)
	if len(a) > 1 {
		scale = a[1].(int64)
	}
	if scale > 16383 || scale < -131072 {
		scale = max(min(scale, 16383), -131072)
	}
	return values.NumericRound(d, int32(scale), mode)
}

// numericFloorCeil rounds a numeric toward -Inf (floor) or +Inf (ceil).
func numericFloorCeil(a []any, ceil bool, fl func(float64) float64) (any, error) {
	d, ok := a[0].(*apd.Decimal)
	if !ok {
		switch x := a[0].(type) {
		case int64:
			return fl(float64(x)), nil
		case float64:
			return fl(x), nil
		}
		return nil, pgerror.AssertionFailed("floor/ceil of %T", a[0])
	}
	mode := apd.RoundFloor
	if ceil {
		mode = apd.RoundCeiling
	}
	return values.NumericRound(d, 0, mode)
}
