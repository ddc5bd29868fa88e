package executor

import (
	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

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
	d, err := values.ToNumeric(a[0])
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
