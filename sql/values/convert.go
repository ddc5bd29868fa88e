package values

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
)

// Convert casts v (of type from) to type to, following PostgreSQL's casts.
func Convert(v any, from, to Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == to && from != TUnknown {
		return v, nil
	}
	if s, ok := v.(string); ok && (from.IsText() || from == TJSON || from == TJSONB || from == TNumeric) {
		// (A numeric is a *apd.Decimal; a string of type numeric is
		// decimal text from the wire.)
		if to == TJSONB && from == TJSON {
			return NormalizeJSONB(s)
		}
		if to.IsText() {
			return s, nil
		}
		return ParseText(s, to)
	}
	if from == TDate {
		if t, ok := v.(time.Time); ok && to.IsText() {
			return t.Format("2006-01-02"), nil
		}
	}
	if to.IsText() {
		return FormatText(v), nil
	}
	switch x := v.(type) {
	case int64:
		switch {
		case to.IsInt():
			return CheckIntRange(x, to)
		case to == TFloat8:
			return float64(x), nil
		case to == TNumeric:
			return NumericFromInt(x), nil
		case to == TBool:
			return x != 0, nil
		case to == TTimestamptz:
			return time.Unix(x, 0).UTC(), nil
		}
	case float64:
		switch {
		case to.IsInt():
			if math.IsNaN(x) || x > math.MaxInt64 || x < math.MinInt64 {
				return nil, pgerror.Newf(pgerror.CodeNumericValueOutOfRange, "%s out of range", to)
			}
			if from == TNumeric { // numeric rounds half away from zero, float8 to even
				return CheckIntRange(int64(math.Round(x)), to)
			}
			return CheckIntRange(int64(math.RoundToEven(x)), to)
		case to == TNumeric:
			return NumericFromFloat(x)
		case to == TFloat8:
			return x, nil
		}
	case *apd.Decimal:
		switch {
		case to.IsInt():
			return NumericToInt(x, to)
		case to == TFloat8:
			return NumericToFloat(x), nil
		case to == TNumeric:
			return x, nil
		}
	case bool:
		if to.IsInt() {
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case []byte:
		if to == TBytea {
			return x, nil
		}
	case time.Time:
		switch to {
		case TTimestamptz:
			return x, nil
		case TDate:
			return DateOf(x), nil
		}
	case time.Duration:
		if to == TInterval {
			return x, nil
		}
	case []int64:
		switch to {
		case TInt8Array, TInt4Array, TOidArray:
			return x, nil
		case TTextArray: // oid[] and int4[] as PostgreSQL casts them (pgcli: proargtypes::regtype[]::text[])
			if from != TOidArray && from != TInt4Array {
				break
			}
			out := make([]string, len(x))
			for i, n := range x {
				out[i] = strconv.FormatInt(n, 10)
			}
			return out, nil
		}
	case []string:
		if to == TTextArray {
			return x, nil
		}
		if to == TInt8Array || to == TInt4Array || to == TOidArray {
			out := make([]int64, len(x))
			for i, s := range x {
				n, err := ParseText(s, TInt8)
				if err != nil {
					return nil, err
				}
				out[i] = n.(int64)
			}
			return out, nil
		}
	}
	return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "cannot cast type %s to %s", from, to)
}

// NormalizeParam turns a value decoded by the wire layer into this
// package's representation of type t.
func NormalizeParam(v any, t Type) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int32:
		v = int64(x)
	case int16:
		v = int64(x)
	case int:
		v = int64(x)
	case float32:
		v = float64(x)
	case []byte:
		if t == TBytea {
			return v, nil // v, not x: boxing x again would allocate
		}
		if t == TJSONB || t == TJSON || t.IsText() {
			v = string(x)
		}
	case []any:
		return normalizeArray(x, t)
	}
	switch x := v.(type) {
	case string:
		if t == TBytea {
			return ParseBytea(x)
		}
		return Convert(v, TUnknown, t)
	case int64:
		return Convert(v, TInt8, t)
	case float64:
		return Convert(v, TFloat8, t)
	case bool:
		return Convert(v, TBool, t)
	case time.Time:
		return Convert(v, TTimestamptz, t)
	case time.Duration:
		return Convert(v, TInterval, t)
	case []int64:
		return Convert(v, TInt8Array, t)
	case []string:
		return Convert(v, TTextArray, t)
	case []bool:
		return v, nil
	}
	return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "unsupported parameter value %T for type %s", v, t)
}

func normalizeArray(xs []any, t Type) (any, error) {
	switch t.ElemType() {
	case TInt8, TInt4:
		out := make([]int64, 0, len(xs))
		for _, e := range xs {
			n, err := NormalizeParam(e, TInt8)
			if err != nil {
				return nil, err
			}
			if n == nil {
				return nil, pgerror.New(pgerror.CodeNullValueNotAllowed, "array element must not be NULL")
			}
			out = append(out, n.(int64))
		}
		return out, nil
	case TBool:
		out := make([]bool, 0, len(xs))
		for _, e := range xs {
			b, ok := e.(bool)
			if !ok {
				return nil, pgerror.New(pgerror.CodeNullValueNotAllowed, "array element must not be NULL")
			}
			out = append(out, b)
		}
		return out, nil
	}
	out := make([]string, 0, len(xs))
	for _, e := range xs {
		if e == nil { // not the empty string: topicgate's arrays hold no NULL
			return nil, pgerror.New(pgerror.CodeNullValueNotAllowed, "array element must not be NULL")
		}
		out = append(out, FormatText(e))
	}
	return out, nil
}

// FormatText renders v as PostgreSQL's text output would.
func FormatText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case *apd.Decimal:
		return NumericText(x)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case []byte:
		return `\x` + hex.EncodeToString(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
	case time.Duration:
		return FormatInterval(x)
	case []int64:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = strconv.FormatInt(n, 10)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []string:
		return "{" + strings.Join(x, ",") + "}"
	}
	return fmt.Sprint(v)
}

// FormatInterval renders d like PostgreSQL's IntervalStyle postgres.
func FormatInterval(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	s := d / time.Second
	us := (d - s*time.Second) / time.Microsecond
	clock := fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	if us > 0 {
		clock += strings.TrimRight(fmt.Sprintf(".%06d", us), "0")
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if days > 0 {
		unit := "days"
		if days == 1 {
			unit = "day"
		}
		if h == 0 && m == 0 && s == 0 && us == 0 {
			return fmt.Sprintf("%s%d %s", sign, days, unit)
		}
		return fmt.Sprintf("%s%d %s %s%s", sign, days, unit, sign, clock)
	}
	return sign + clock
}
