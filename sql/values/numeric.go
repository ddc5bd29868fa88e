package values

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
)

// numeric values are *apd.Decimal, treated as immutable once built: every
// operation below returns a new one. The exponent carries PostgreSQL's
// display scale (2.50 is 250e-2 and prints 2.50; 1e3 is 1e3 and prints
// 1000), which addition, subtraction and multiplication keep exactly as
// PostgreSQL does; division and avg round to the scale PostgreSQL's
// select_div_scale picks.

// numericCtx does exact addition, subtraction and multiplication
// (precision 0 disables rounding) and rounds half away from zero, as
// PostgreSQL's numeric does.
var numericCtx = func() apd.Context {
	c := apd.BaseContext
	c.Rounding = apd.RoundHalfUp
	return c
}()

// PostgreSQL's limits for an unconstrained numeric: 131072 digits before
// the decimal point, 16383 after; division results keep at most 1000
// decimals (NUMERIC_MAX_DISPLAY_SCALE) and at least 16 significant digits
// (NUMERIC_MIN_SIG_DIGITS).
const (
	numericMaxIntDigits = 131072
	numericMaxScale     = 16383
	numericMaxDivScale  = 1000
	numericMinSigDigits = 16
)

var errNumericOverflow = pgerror.New(pgerror.CodeNumericValueOutOfRange, "value overflows numeric format")

// ParseNumeric reads numeric text: digits with an optional point and
// exponent, NaN, or [+-]Infinity, with surrounding spaces.
func ParseNumeric(s string) (*apd.Decimal, error) {
	t := strings.TrimSpace(s)
	bad := pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "invalid input syntax for type numeric: %q", s)
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "nan":
		if t[0] == '+' || t[0] == '-' {
			return nil, bad
		}
		return &apd.Decimal{Form: apd.NaN}, nil
	case "infinity", "inf":
		return &apd.Decimal{Form: apd.Infinite, Negative: t[0] == '-'}, nil
	}
	if t == "" || !numericSyntax(t) {
		return nil, bad
	}
	d, _, err := apd.NewFromString(t)
	if err != nil { // the syntax is right: the exponent is out of range
		return nil, errNumericOverflow
	}
	return checkNumeric(d)
}

// numericSyntax accepts [+-]digits[.digits][e[+-]digits] with at least one
// digit in the mantissa (apd also takes forms PostgreSQL refuses).
func numericSyntax(s string) bool {
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// checkNumeric enforces PostgreSQL's size limits and drops a negative
// zero's sign (PostgreSQL has no negative zero).
func checkNumeric(d *apd.Decimal) (*apd.Decimal, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	if d.IsZero() {
		d.Negative = false
	}
	if intDigits := d.NumDigits() + int64(d.Exponent); intDigits > numericMaxIntDigits {
		return nil, errNumericOverflow
	}
	if -d.Exponent > numericMaxScale {
		// PostgreSQL rounds input beyond its maximum scale.
		r := new(apd.Decimal)
		if err := quantize(r, d, -numericMaxScale, apd.RoundHalfUp); err != nil {
			return nil, err
		}
		return r, nil
	}
	return d, nil
}

// NumericNeg is -d within numeric's limits (a negated zero is zero).
func NumericNeg(d *apd.Decimal) (*apd.Decimal, error) {
	return checkNumeric(new(apd.Decimal).Neg(d))
}

// NumericText renders d as PostgreSQL prints a numeric: plain notation
// with the value's scale (1e3 prints 1000), NaN, Infinity or -Infinity.
func NumericText(d *apd.Decimal) string {
	if d.Form == apd.NaNSignaling {
		return "NaN"
	}
	return d.Text('f')
}

// NumericFromInt converts an integer.
func NumericFromInt(n int64) *apd.Decimal { return apd.New(n, 0) }

// NumericFromFloat converts a float8 as PostgreSQL does: through its
// shortest 15-significant-digit text (0.1::float8::numeric is 0.1).
func NumericFromFloat(f float64) (*apd.Decimal, error) {
	switch {
	case math.IsNaN(f):
		return &apd.Decimal{Form: apd.NaN}, nil
	case math.IsInf(f, 0):
		return &apd.Decimal{Form: apd.Infinite, Negative: f < 0}, nil
	}
	d, _, err := apd.NewFromString(strconv.FormatFloat(f, 'g', 15, 64))
	if err != nil {
		return nil, pgerror.AssertionFailed("float %v to numeric: %v", f, err)
	}
	return checkNumeric(d)
}

// NumericToFloat converts a numeric to float8 (rounding to nearest).
func NumericToFloat(d *apd.Decimal) float64 {
	f, err := strconv.ParseFloat(d.Text('g'), 64)
	if err != nil { // out of float range: ParseFloat returns ±Inf or 0 with the error
		return f
	}
	return f
}

// NumericToInt converts a numeric to integer type t, rounding half away
// from zero; NaN, infinities and values out of t's range are 22003.
func NumericToInt(d *apd.Decimal, t Type) (int64, error) {
	name := map[Type]string{TInt2: "smallint", TInt4: "integer"}[t]
	if name == "" {
		name = "bigint"
	}
	if d.Form != apd.Finite {
		return 0, pgerror.Newf(pgerror.CodeFeatureNotSupported, "cannot convert %s to %s", NumericText(d), name)
	}
	if d.NumDigits()+int64(d.Exponent) > 20 {
		return 0, pgerror.Newf(pgerror.CodeNumericValueOutOfRange, "%s out of range", name)
	}
	var r apd.Decimal
	if err := quantize(&r, d, 0, apd.RoundHalfUp); err != nil {
		return 0, pgerror.Newf(pgerror.CodeNumericValueOutOfRange, "%s out of range", name)
	}
	n, err := r.Int64()
	if err != nil {
		return 0, pgerror.Newf(pgerror.CodeNumericValueOutOfRange, "%s out of range", name)
	}
	v, err := CheckIntRange(n, t)
	if err != nil {
		return 0, err
	}
	return v.(int64), nil
}

// NumericScale is d's display scale: its digits after the point.
func NumericScale(d *apd.Decimal) int32 {
	if d.Form != apd.Finite || d.Exponent >= 0 {
		return 0
	}
	return -d.Exponent
}

// NumericArith applies + - * / % to two numerics with PostgreSQL's result
// scales: exact for + - * (the larger scale, the sum of scales), rounded
// to select_div_scale for /, the larger scale for %.
func NumericArith(op string, x, y *apd.Decimal) (*apd.Decimal, error) {
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return numericSpecial(op, x, y)
	}
	z := new(apd.Decimal)
	var err error
	switch op {
	case "+":
		_, err = numericCtx.Add(z, x, y)
	case "-":
		_, err = numericCtx.Sub(z, x, y)
	case "*":
		if int64(-x.Exponent)+int64(-y.Exponent) > numericMaxScale+numericMaxScale ||
			x.NumDigits()+y.NumDigits() > numericMaxIntDigits+2*numericMaxScale {
			return nil, errNumericOverflow
		}
		_, err = numericCtx.Mul(z, x, y)
	case "/":
		if y.IsZero() {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		return NumericDiv(x, y, divScale(x, y))
	case "%":
		if y.IsZero() {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		// Enough digits for the integer quotient and for the remainder.
		p := x.NumDigits() + y.NumDigits() + abs64(int64(x.Exponent)) + abs64(int64(y.Exponent)) + 2
		_, err = numericCtx.WithPrecision(uint32(p)).Rem(z, x, y)
	default:
		return nil, pgerror.AssertionFailed("numeric operator %s", op)
	}
	if err != nil {
		return nil, errNumericOverflow
	}
	return checkNumeric(z)
}

// numericSpecial handles NaN and infinities as PostgreSQL 14+ does.
func numericSpecial(op string, x, y *apd.Decimal) (*apd.Decimal, error) {
	nan := &apd.Decimal{Form: apd.NaN}
	if x.Form == apd.NaN || y.Form == apd.NaN {
		return nan, nil
	}
	z := new(apd.Decimal)
	c := numericCtx
	c.Traps = 0
	var cond apd.Condition
	switch op {
	case "+":
		cond, _ = c.Add(z, x, y)
	case "-":
		cond, _ = c.Sub(z, x, y)
	case "*":
		cond, _ = c.Mul(z, x, y)
	case "/":
		if y.Form == apd.Finite && y.IsZero() {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		if y.Form == apd.Infinite && x.Form == apd.Finite {
			return apd.New(0, 0), nil
		}
		cond, _ = c.WithPrecision(16).Quo(z, x, y)
	case "%":
		if y.Form == apd.Finite && y.IsZero() {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		if x.Form == apd.Finite { // finite % ±Infinity is the finite value
			return x, nil
		}
		return nan, nil
	}
	if cond&apd.InvalidOperation != 0 || z.Form == apd.NaNSignaling {
		return nan, nil // Infinity - Infinity, 0 * Infinity, ...
	}
	return z, nil
}

// divScale is PostgreSQL's select_div_scale: enough decimals for at least
// 16 significant digits, and no fewer than either operand's scale.
func divScale(x, y *apd.Decimal) int32 {
	w1, f1 := nbaseLead(x)
	w2, f2 := nbaseLead(y)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := int64(numericMinSigDigits) - qweight*4
	rscale = max(rscale, int64(NumericScale(x)), int64(NumericScale(y)), 0)
	return int32(min(rscale, numericMaxDivScale))
}

// nbaseLead returns the weight and value of d's leading base-10000 digit,
// as PostgreSQL stores numerics (0 and 0 for zero).
func nbaseLead(d *apd.Decimal) (weight int64, first int64) {
	if d.IsZero() {
		return 0, 0
	}
	coeff := d.Coeff.String()
	e10 := int64(len(coeff)) - 1 + int64(d.Exponent) // 10^e10 <= |d| < 10^(e10+1)
	weight = e10 / 4
	if e10 < 0 && e10%4 != 0 {
		weight-- // floor division
	}
	k := int(e10 - 4*weight + 1) // decimal digits in the leading group: 1..4
	for i := 0; i < k; i++ {
		first *= 10
		if i < len(coeff) {
			first += int64(coeff[i] - '0')
		}
	}
	return weight, first
}

// NumericDiv divides x by y (y non-zero, both finite) and rounds the
// quotient half away from zero to scale decimals. The quotient is computed
// truncated with spare digits first, so that the final rounding is exact.
func NumericDiv(x, y *apd.Decimal, scale int32) (*apd.Decimal, error) {
	intDigits := (x.NumDigits() + int64(x.Exponent)) - (y.NumDigits() + int64(y.Exponent)) + 2
	prec := max(intDigits, 1) + int64(scale) + 3
	if prec > numericMaxIntDigits+numericMaxDivScale {
		return nil, errNumericOverflow
	}
	c := numericCtx.WithPrecision(uint32(prec))
	c.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := c.Quo(q, x, y); err != nil {
		return nil, errNumericOverflow
	}
	return NumericRound(q, scale, apd.RoundHalfUp)
}

// NumericRound rounds d to scale decimals (a negative scale rounds to
// tens, hundreds, ...) with mode: apd.RoundHalfUp for round, apd.RoundDown
// for trunc.
func NumericRound(d *apd.Decimal, scale int32, mode apd.Rounder) (*apd.Decimal, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	if int64(d.Exponent)+int64(scale) < -numericMaxScale-numericMaxScale || scale > numericMaxScale+numericMaxScale {
		return nil, errNumericOverflow
	}
	z := new(apd.Decimal)
	if err := quantize(z, d, -scale, mode); err != nil {
		return nil, err
	}
	if scale < 0 { // round(1234.5, -2) is 1200, with scale 0
		if err := quantize(z, z, 0, mode); err != nil {
			return nil, err
		}
	}
	return checkNumeric(z)
}

// quantize sets z to d with exponent exp, rounding with mode. apd's
// Quantize needs a precision that holds the result's digits.
func quantize(z, d *apd.Decimal, exp int32, mode apd.Rounder) error {
	c := numericCtx
	c.Rounding = mode
	p := d.NumDigits() + 1
	if int64(d.Exponent) > int64(exp) {
		p += int64(d.Exponent) - int64(exp)
	}
	c.Precision = uint32(p)
	if _, err := c.Quantize(z, d, exp); err != nil {
		return errNumericOverflow
	}
	return nil
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// NumericKey is a canonical text of d for grouping and DISTINCT: equal
// numerics (1.0 and 1.00) get equal keys.
func NumericKey(d *apd.Decimal) string {
	if d.Form != apd.Finite {
		return NumericText(d)
	}
	var r apd.Decimal
	r.Reduce(d)
	return r.Text('e')
}

// KeyText is v's text for grouping and DISTINCT: FormatText, except that
// equal numerics get one key whatever their scale.
func KeyText(v any) string {
	if d, ok := v.(*apd.Decimal); ok {
		return NumericKey(d)
	}
	return FormatText(v)
}

// ToNumeric converts an operand of a numeric operation: the planner has
// typed it numeric or integer; a float8 here comes from a float-computed
// function typed numeric, a string from numeric text.
func ToNumeric(v any) (*apd.Decimal, error) {
	switch x := v.(type) {
	case *apd.Decimal:
		return x, nil
	case int64:
		return NumericFromInt(x), nil
	case float64:
		return NumericFromFloat(x)
	case string:
		return ParseNumeric(x)
	}
	return nil, pgerror.AssertionFailed("numeric operand %T", v)
}

// compareNumeric orders a numeric against a numeric or an integer exactly,
// and against a float8 in float8, as PostgreSQL does. NaN sorts above
// everything and equals itself.
func compareNumeric(x *apd.Decimal, b any) (int, error) {
	if f, ok := b.(float64); ok {
		return Compare(NumericToFloat(x), f)
	}
	y, err := ToNumeric(b)
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
