package values

import (
	"math"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
)

// Arith computes l op r (+, -, *, /, %, ||) for non-NULL operands, t the
// result type the planner gave the expression: numeric in decimal with
// PostgreSQL's scales, integers checked for overflow (and for integer's
// range when t is integer), a numeric meeting a float8 in float8, and
// timestamptz, date and interval arithmetic.
func Arith(op string, l, r any, t Type) (any, error) {
	if op == "||" && t.ElemType() != TUnknown {
		return normalizeArray(arrayConcat(l, r), t)
	}
	if op == "||" {
		if lb, ok := l.([]byte); ok {
			if rb, ok := r.([]byte); ok {
				return append(append([]byte{}, lb...), rb...), nil
			}
		}
		return FormatText(l) + FormatText(r), nil
	}
	if t == TNumeric { // decimal arithmetic, PostgreSQL's scales
		x, err := ToNumeric(l)
		if err != nil {
			return nil, err
		}
		y, err := ToNumeric(r)
		if err != nil {
			return nil, err
		}
		return NumericArith(op, x, y)
	}
	// A numeric meeting a float8 (or an interval) computes in float8.
	var err error
	if l, err = numericOperand(l); err != nil {
		return nil, err
	}
	if r, err = numericOperand(r); err != nil {
		return nil, err
	}
	switch x := l.(type) {
	case int64:
		switch y := r.(type) {
		case int64:
			v, err := IntArith(op, x, y)
			if err == nil && t == TInt4 {
				if n := v.(int64); n < math.MinInt32 || n > math.MaxInt32 {
					return nil, pgerror.New(pgerror.CodeNumericValueOutOfRange, "integer out of range")
				}
			}
			return v, err
		case float64:
			return floatArith(op, float64(x), y)
		case time.Time: // days + date
			return y.AddDate(0, 0, int(x)), nil
		}
	case float64:
		switch y := r.(type) {
		case int64:
			return floatArith(op, x, float64(y))
		case float64:
			return floatArith(op, x, y)
		}
	case time.Time:
		switch y := r.(type) {
		case time.Duration:
			if op == "-" {
				return x.Add(-y), nil
			}
			return x.Add(y), nil
		case time.Time:
			if t.IsInt() { // date - date: days between
				return int64(x.Sub(y) / (24 * time.Hour)), nil
			}
			return x.Sub(y), nil
		case int64: // date ± days
			if op == "-" {
				y = -y
			}
			return x.AddDate(0, 0, int(y)), nil
		}
	case time.Duration:
		switch y := r.(type) {
		case time.Duration:
			if op == "-" {
				return x - y, nil
			}
			return x + y, nil
		case time.Time:
			return y.Add(x), nil
		case int64:
			if op == "/" {
				if y == 0 {
					return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
				}
				return x / time.Duration(y), nil
			}
			return x * time.Duration(y), nil
		case float64:
			if op == "/" {
				return time.Duration(float64(x) / y), nil
			}
			return time.Duration(float64(x) * y), nil
		}
	}
	return nil, pgerror.AssertionFailed("arithmetic %T %s %T reached the executor", l, op, r)
}

// numericOperand turns a numeric (or numeric text) into float64.
func numericOperand(v any) (any, error) {
	if d, ok := v.(*apd.Decimal); ok {
		return NumericToFloat(d), nil
	}
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	f, err := ParseText(s, TFloat8)
	if err != nil {
		return nil, pgerror.AssertionFailed("numeric operand %q: %v", s, err)
	}
	return f, nil
}

// IntArith is x op y in bigint, with PostgreSQL's overflow and
// division-by-zero errors.
func IntArith(op string, x, y int64) (any, error) {
	overflow := pgerror.New(pgerror.CodeNumericValueOutOfRange, "bigint out of range")
	switch op {
	case "+":
		s := x + y
		if (s > x) != (y > 0) {
			return nil, overflow
		}
		return s, nil
	case "-":
		s := x - y
		if (s < x) != (y > 0) {
			return nil, overflow
		}
		return s, nil
	case "*":
		if x != 0 && (x*y/x != y || (x == -1 && y == math.MinInt64)) {
			return nil, overflow
		}
		return x * y, nil
	case "/", "%":
		if y == 0 {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		if op == "/" {
			return x / y, nil
		}
		return x % y, nil
	}
	return nil, pgerror.AssertionFailed("int op %s", op)
}

func floatArith(op string, x, y float64) (any, error) {
	switch op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		if y == 0 {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		return x / y, nil
	case "%":
		return math.Mod(x, y), nil
	}
	return nil, pgerror.AssertionFailed("float op %s", op)
}

// arrayConcat is PostgreSQL's anyarray || anyarray (array_cat), and an
// array with an element appended or prepended (the planner has given a
// lone element the array's element type): the elements of l, then r's.
func arrayConcat(l, r any) []any {
	out := append(arrayElems(l), arrayElems(r)...)
	if out == nil {
		out = []any{}
	}
	return out
}

// arrayElems lists an array's elements, or a lone element as one.
func arrayElems(v any) []any {
	switch x := v.(type) {
	case []any:
		return append([]any(nil), x...)
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case []int64:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case []int32:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = int64(e)
		}
		return out
	case []bool:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	}
	return []any{v}
}
