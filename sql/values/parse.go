package values

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"topicgate/sql/pgerror"
)

// Values during planning and execution are Go values:
//
//	NULL nil; bool; integers int64; float8 float64; numeric *apd.Decimal
//	(immutable, see numeric.go);
//	text string; bytea []byte; json/jsonb string (JSON text);
//	timestamptz time.Time; interval time.Duration;
//	int8[] []int64; text[] []string; bool[] []bool.

// ParseText converts the text form of a value (a string literal, a text
// parameter, a COPY text field) to type t, with PostgreSQL's input rules.
func ParseText(s string, t Type) (any, error) {
	switch t {
	case TText, TUnknown, TName, TChar:
		return s, nil
	case TBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "yes", "on", "1", "y":
			return true, nil
		case "f", "false", "no", "off", "0", "n":
			return false, nil
		}
	case TInt2, TInt4, TInt8, TOid:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, pgerror.Newf(pgerror.CodeNumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, t)
			}
			break
		}
		return CheckIntRange(n, t)
	case TFloat8:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err == nil {
			return f, nil
		}
	case TNumeric:
		return ParseNumeric(s)
	case TBytea:
		return ParseBytea(s)
	case TJSONB, TJSON:
		if json.Valid([]byte(s)) {
			if t == TJSONB {
				return NormalizeJSONB(s)
			}
			return s, nil
		}
		return nil, pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "invalid input syntax for type %s: %q", t, s)
	case TTimestamptz, TDate: // a date reads as a timestamp whose day is taken
		return ParseTextIn(s, t, MDY)
	case TInterval:
		return ParseInterval(s)
	case TInt8Array, TInt4Array, TTextArray, TBoolArray, TOidArray:
		return parseArray(s, t)
	}
	return nil, pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "invalid input syntax for type %s: %q", t, s)
}

// CheckIntRange checks n fits integer type t.
func CheckIntRange(n int64, t Type) (any, error) {
	switch t {
	case TInt2:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return nil, pgerror.New(pgerror.CodeNumericValueOutOfRange, "smallint out of range")
		}
	case TInt4:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, pgerror.New(pgerror.CodeNumericValueOutOfRange, "integer out of range")
		}
	}
	return n, nil
}

// ParseBytea accepts PostgreSQL's hex format (\x...) and escape format.
func ParseBytea(s string) ([]byte, error) {
	if strings.HasPrefix(s, `\x`) || strings.HasPrefix(s, `\X`) {
		b, err := hex.DecodeString(s[2:])
		var bad hex.InvalidByteError
		switch {
		case errors.As(err, &bad):
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid hexadecimal digit: \"%c\"", rune(bad))
		case err != nil:
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		return b, nil
	}
	if !strings.Contains(s, `\`) {
		return []byte(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		// \ooo is a byte only up to \377: PostgreSQL refuses \777 (22P02).
		if i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOct(s[i+2]) && isOct(s[i+3]) {
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
			continue
		}
		return nil, pgerror.New(pgerror.CodeInvalidTextRepresentation, "invalid input syntax for type bytea")
	}
	return out, nil
}

func isOct(c byte) bool { return c >= '0' && c <= '7' }

var tsLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04Z07",
	"2006-01-02 15:04",
	"2006-01-02",
}

// ParseTimestamp parses a timestamp; values without a zone are UTC.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "epoch":
		return time.Unix(0, 0).UTC(), nil
	}
	for _, l := range tsLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, pgerror.Newf(pgerror.CodeInvalidDatetimeFormat, "invalid input syntax for type timestamp with time zone: %q", s)
}

// ParseInterval parses ISO 8601 durations (PT30S, P2D, P1DT2H) and
// PostgreSQL interval text ("30 seconds", "1 day 02:00:00", "5m", "1h30m").
// A month counts as 30 days, a year as 365 days.
func ParseInterval(s string) (time.Duration, error) {
	orig := s
	s = strings.TrimSpace(strings.ToLower(s))
	bad := pgerror.Newf(pgerror.CodeInvalidDatetimeFormat, "invalid input syntax for type interval: %q", orig)
	if s == "" {
		return 0, bad
	}
	neg := false
	if strings.HasPrefix(s, "-p") {
		neg, s = true, s[1:]
	}
	if strings.HasPrefix(s, "p") {
		d, ok := parseISODuration(s[1:])
		if !ok {
			return 0, bad
		}
		if neg {
			d = -d
		}
		return d, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	var total time.Duration
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			d, ok := parseClock(f)
			if !ok {
				return 0, bad
			}
			total += d
			continue
		}
		if f == "ago" {
			total = -total
			continue
		}
		num, unit := f, ""
		if j := strings.IndexFunc(f, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' }); j > 0 {
			num, unit = f[:j], f[j:]
		} else if i+1 < len(fields) {
			unit = fields[i+1]
			i++
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, bad
		}
		u, ok := intervalUnit(unit)
		if !ok {
			return 0, bad
		}
		total += time.Duration(v * float64(u))
	}
	return total, nil
}

func intervalUnit(u string) (time.Duration, bool) {
	switch strings.TrimSuffix(u, "s") {
	case "microsecond", "us", "usec":
		return time.Microsecond, true
	case "millisecond", "m", "msec":
		if u == "m" {
			return time.Minute, true
		}
		return time.Millisecond, true
	case "second", "sec", "":
		return time.Second, true
	case "minute", "min":
		return time.Minute, true
	case "hour", "h", "hr":
		return time.Hour, true
	case "day", "d":
		return 24 * time.Hour, true
	case "week", "w":
		return 7 * 24 * time.Hour, true
	case "mon", "month":
		return 30 * 24 * time.Hour, true
	case "year", "y":
		return 365 * 24 * time.Hour, true
	}
	if u == "ms" {
		return time.Millisecond, true
	}
	return 0, false
}

func parseClock(f string) (time.Duration, bool) {
	neg := strings.HasPrefix(f, "-")
	f = strings.TrimPrefix(f, "-")
	parts := strings.Split(f, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, false
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if len(parts) == 3 {
		sec, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			return 0, false
		}
		d += time.Duration(sec * float64(time.Second))
	}
	if neg {
		d = -d
	}
	return d, true
}

func parseISODuration(s string) (time.Duration, bool) {
	var d time.Duration
	inTime := false
	num := ""
	any := false
	for _, r := range s {
		switch {
		case r == 't':
			inTime = true
		case (r >= '0' && r <= '9') || r == '.':
			num += string(r)
		default:
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, false
			}
			num = ""
			any = true
			var u time.Duration
			switch {
			case r == 'y' && !inTime:
				u = 365 * 24 * time.Hour
			case r == 'm' && !inTime:
				u = 30 * 24 * time.Hour
			case r == 'w' && !inTime:
				u = 7 * 24 * time.Hour
			case r == 'd' && !inTime:
				u = 24 * time.Hour
			case r == 'h' && inTime:
				u = time.Hour
			case r == 'm' && inTime:
				u = time.Minute
			case r == 's' && inTime:
				u = time.Second
			default:
				return 0, false
			}
			d += time.Duration(v * float64(u))
		}
	}
	return d, any && num == ""
}

// NormalizeJSONB re-renders JSON text the way PostgreSQL prints jsonb
// (keys sorted, ", " and ": " separators).
func NormalizeJSONB(s string) (string, error) {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "invalid input syntax for type jsonb: %q", s)
	}
	var b strings.Builder
	writeJSONB(&b, v)
	return b.String(), nil
}

func writeJSONB(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortJSONKeys(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(": ")
			writeJSONB(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONB(b, e)
		}
		b.WriteByte(']')
	default:
		eb, _ := json.Marshal(x)
		b.Write(eb)
	}
}

// sortJSONKeys orders keys as jsonb does: shorter keys first, then bytewise.
func sortJSONKeys(keys []string) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && jsonKeyLess(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

func jsonKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func parseArray(s string, t Type) (any, error) {
	s = strings.TrimSpace(s)
	bad := pgerror.Newf(pgerror.CodeInvalidTextRepresentation, "malformed array literal: %q", s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, bad
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	var parts []string
	if inner != "" {
		parts = strings.Split(inner, ",")
	}
	elem := t.ElemType()
	switch elem {
	case TInt8, TInt4, TOid:
		out := make([]int64, len(parts))
		for i, p := range parts {
			v, err := ParseText(strings.TrimSpace(p), elem)
			if err != nil {
				return nil, err
			}
			out[i] = v.(int64)
		}
		return out, nil
	case TBool:
		out := make([]bool, len(parts))
		for i, p := range parts {
			v, err := ParseText(strings.TrimSpace(p), TBool)
			if err != nil {
				return nil, err
			}
			out[i] = v.(bool)
		}
		return out, nil
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = strings.Trim(strings.TrimSpace(p), `"`)
	}
	return out, nil
}

// DateOf is the date of t's UTC instant, as a TDate value.
func DateOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
