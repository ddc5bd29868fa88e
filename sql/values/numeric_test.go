package values

import (
	"errors"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
)

func mustNumeric(t *testing.T, s string) *apd.Decimal {
	t.Helper()
	d, err := ParseNumeric(s)
	if err != nil {
		t.Fatalf("ParseNumeric(%q): %v", s, err)
	}
	return d
}

func ratOf(t *testing.T, d *apd.Decimal) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(d.Text('f'))
	if !ok {
		t.Fatalf("rat of %s", d.Text('f'))
	}
	return r
}

// roundRat rounds r half away from zero to scale decimals, as text.
func roundRat(r *big.Rat, scale int32) string {
	neg := r.Sign() < 0
	a := new(big.Rat).Abs(r)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	a.Mul(a, new(big.Rat).SetInt(p))
	// floor(a + 1/2)
	a.Add(a, big.NewRat(1, 2))
	q := new(big.Int).Quo(a.Num(), a.Denom())
	s := q.String()
	if scale > 0 {
		for len(s) <= int(scale) {
			s = "0" + s
		}
		s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	}
	if neg && strings.Trim(s, "0.") != "" {
		s = "-" + s
	}
	return s
}

func randNumeric(rng *rand.Rand) string {
	var b strings.Builder
	if rng.Intn(2) == 0 {
		b.WriteByte('-')
	}
	for i, n := 0, 1+rng.Intn(25); i < n; i++ {
		b.WriteByte(byte('0' + rng.Intn(10)))
	}
	if rng.Intn(3) > 0 {
		b.WriteByte('.')
		for i, n := 0, 1+rng.Intn(25); i < n; i++ {
			b.WriteByte(byte('0' + rng.Intn(10)))
		}
	}
	return b.String()
}

// TestNumericArithExact checks + - * against big.Rat (exact, with the
// larger scale or the sum of scales) and / against the exact quotient
// rounded half away from zero at PostgreSQL's division scale.
func TestNumericArithExact(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 3000; i++ {
		x, y := mustNumeric(t, randNumeric(rng)), mustNumeric(t, randNumeric(rng))
		rx, ry := ratOf(t, x), ratOf(t, y)
		for _, op := range []string{"+", "-", "*", "/"} {
			if op == "/" && y.IsZero() {
				continue
			}
			z, err := NumericArith(op, x, y)
			if err != nil {
				t.Fatalf("%s %s %s: %v", x, op, y, err)
			}
			var want *big.Rat
			var scale int32
			switch op {
			case "+":
				want, scale = new(big.Rat).Add(rx, ry), max(NumericScale(x), NumericScale(y))
			case "-":
				want, scale = new(big.Rat).Sub(rx, ry), max(NumericScale(x), NumericScale(y))
			case "*":
				want, scale = new(big.Rat).Mul(rx, ry), NumericScale(x)+NumericScale(y)
			case "/":
				want, scale = new(big.Rat).Quo(rx, ry), divScale(x, y)
			}
			if got, w := NumericText(z), roundRat(want, scale); got != w {
				t.Fatalf("%s %s %s = %s, want %s", x, op, y, got, w)
			}
		}
	}
}

// TestNumericPostgresCases pins results checked against PostgreSQL 15.
func TestNumericPostgresCases(t *testing.T) {
	for _, c := range []struct{ x, op, y, want string }{
		{"1", "/", "3", "0.33333333333333333333"},
		{"10.0", "/", "4", "2.5000000000000000"},
		{"100", "/", "7.0", "14.2857142857142857"},
		{"0.001", "/", "12345678", "0.0000000000810000066420005446"},
		{"12345678", "/", "0.001", "12345678000.00000000"},
		{"2.50", "*", "2", "5.00"},
		{"-7.25", "%", "2", "-1.25"},
		{"1e3", "+", "0", "1000"},
	} {
		z, err := NumericArith(c.op, mustNumeric(t, c.x), mustNumeric(t, c.y))
		if err != nil || NumericText(z) != c.want {
			t.Errorf("%s %s %s = %v (%v), want %s", c.x, c.op, c.y, z, err, c.want)
		}
	}
}

// TestNumericLimits: extreme input is a 22003 or 22P02 error, never a panic
// or a runaway computation.
func TestNumericLimits(t *testing.T) {
	code := func(err error) string {
		var pe *pgerror.Error
		if errors.As(err, &pe) {
			return pe.Code
		}
		return ""
	}
	for _, c := range []struct{ in, code string }{
		{"1e400000", "22003"}, {"1e131073", "22003"}, {strings.Repeat("9", 131073), "22003"},
		{"abc", "22P02"}, {"1e", "22P02"}, {".", "22P02"}, {"+NaN", "22P02"}, {"1..2", "22P02"},
	} {
		if _, err := ParseNumeric(c.in); code(err) != c.code {
			t.Errorf("ParseNumeric(%.20q): %v, want %s", c.in, err, c.code)
		}
	}
	if d := mustNumeric(t, "0."+strings.Repeat("1", 20000)); NumericScale(d) != numericMaxScale {
		t.Errorf("scale beyond 16383 is rounded, have %d", NumericScale(d))
	}
	big1 := mustNumeric(t, "1"+strings.Repeat("0", 100000))
	if _, err := NumericArith("*", big1, big1); code(err) != "22003" {
		t.Errorf("overflowing product: %v", err)
	}
	if _, err := NumericToInt(mustNumeric(t, "1e100"), TInt8); code(err) != "22003" {
		t.Errorf("1e100::int8: %v", err)
	}
	if n, err := NumericToInt(mustNumeric(t, "-2.5"), TInt4); err != nil || n != -3 {
		t.Errorf("-2.5::int4 = %d, %v", n, err)
	}
	if r, err := NumericRound(mustNumeric(t, "1234.5"), -2, apd.RoundHalfUp); err != nil || NumericText(r) != "1200" {
		t.Errorf("round(1234.5, -2) = %v, %v", r, err)
	}
}
