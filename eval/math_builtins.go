package eval

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// mathBuiltins are the numeric functions, and greatest and least.
var mathBuiltins = map[string]Func{
	"abs": func(_ Context, a []any) (any, error) {
		switch v := a[0].(type) {
		case int64:
			if v == math.MinInt64 {
				return nil, pgerror.New(pgerror.CodeNumericValueOutOfRange, "bigint out of range")
			}
			if v < 0 {
				return -v, nil
			}
			return v, nil
		case float64:
			return math.Abs(v), nil
		case *apd.Decimal:
			return new(apd.Decimal).Abs(v), nil
		}
		return a[0], nil
	},
	"round": func(_ Context, a []any) (any, error) {
		return numericRound(a, apd.RoundHalfUp, math.RoundToEven) // float8 rounds half to even, as PostgreSQL's rint
	},
	"trunc": func(_ Context, a []any) (any, error) { return numericRound(a, apd.RoundDown, math.Trunc) },
	"floor": func(_ Context, a []any) (any, error) { return numericFloorCeil(a, false, math.Floor) },
	"ceil":  func(_ Context, a []any) (any, error) { return numericFloorCeil(a, true, math.Ceil) },
	"sqrt": func(_ Context, a []any) (any, error) {
		if x := a[0].(float64); x < 0 {
			return nil, pgerror.New(pgerror.CodeInvalidArgumentForPower, "cannot take square root of a negative number")
		}
		return math.Sqrt(a[0].(float64)), nil
	},
	"cbrt":  func(_ Context, a []any) (any, error) { return math.Cbrt(a[0].(float64)), nil },
	"power": fnPower,
	"pow":   fnPower,
	"exp":   func(_ Context, a []any) (any, error) { return math.Exp(a[0].(float64)), nil },
	"ln": func(_ Context, a []any) (any, error) {
		return logOf(a[0].(float64), math.Log)
	},
	"log": func(_ Context, a []any) (any, error) {
		if len(a) == 1 {
			return logOf(a[0].(float64), math.Log10)
		}
		b, err := logOf(a[0].(float64), math.Log)
		if err != nil {
			return nil, err
		}
		x, err := logOf(a[1].(float64), math.Log)
		if err != nil {
			return nil, err
		}
		if b.(float64) == 0 {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		return x.(float64) / b.(float64), nil
	},
	"pi":       func(Context, []any) (any, error) { return math.Pi, nil },
	"mod":      fnMod,
	"sign":     fnSign,
	"greatest": func(_ Context, a []any) (any, error) { return extreme(a, 1) },
	"least":    func(_ Context, a []any) (any, error) { return extreme(a, -1) },
}

func fnPower(_ Context, a []any) (any, error) {
	x, y := a[0].(float64), a[1].(float64)
	if x == 0 && y < 0 {
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForPower, "zero raised to a negative power is undefined")
	}
	if x < 0 && y != math.Trunc(y) {
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	return math.Pow(x, y), nil
}

func logOf(x float64, f func(float64) float64) (any, error) {
	switch {
	case x == 0:
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForLog, "cannot take logarithm of zero")
	case x < 0:
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForLog, "cannot take logarithm of a negative number")
	}
	return f(x), nil
}

func fnMod(_ Context, a []any) (any, error) {
	if x, ok := a[0].(int64); ok {
		if y, ok := a[1].(int64); ok {
			return values.IntArith("%", x, y)
		}
	}
	x, err := values.ToNumeric(a[0])
	if err != nil {
		return nil, err
	}
	y, err := values.ToNumeric(a[1])
	if err != nil {
		return nil, err
	}
	return values.NumericArith("%", x, y)
}

func fnSign(_ Context, a []any) (any, error) {
	switch x := a[0].(type) {
	case int64:
		switch {
		case x > 0:
			return int64(1), nil
		case x < 0:
			return int64(-1), nil
		}
		return int64(0), nil
	case float64:
		switch {
		case x > 0:
			return 1.0, nil
		case x < 0:
			return -1.0, nil
		}
		return 0.0, nil
	case *apd.Decimal:
		if x.Form == apd.NaN {
			return x, nil
		}
		return values.NumericFromInt(int64(x.Sign())), nil
	}
	return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function sign(%T) does not exist", a[0])
}

// numericRound and numericFloorCeil are round, trunc, floor and ceil:
// numeric in, numeric out; float8 (or an integer, which PostgreSQL rounds
// as float8) in, float8 out. The two-argument forms exist only for numeric.
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

func extreme(a []any, sign int) (any, error) {
	var best any
	for _, v := range a {
		if v == nil {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		c, err := values.Compare(v, best)
		if err != nil {
			return nil, err
		}
		if c*sign > 0 {
			best = v
		}
	}
	return best, nil
}
