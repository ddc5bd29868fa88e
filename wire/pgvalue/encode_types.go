package pgvalue

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"topicgate/sql/values"

	"github.com/cockroachdb/apd/v3"
)

// pgEpochUnix is 2000-01-01 00:00:00 UTC in Unix seconds.
const pgEpochUnix = 946684800

func appendPad(buf []byte, n int, width int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for n > 0 || i == len(tmp) {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
	}
	for w := len(tmp) - i; w < width; w++ {
		buf = append(buf, '0')
	}
	return append(buf, tmp[i:]...)
}

// unixMicros returns the microseconds since the Unix epoch of the wall
// clock of t read in UTC, rounded to the microsecond.
func unixMicros(t time.Time) int64 {
	return t.Unix()*1_000_000 + int64(t.Nanosecond()+500)/1000
}

// appendTimestamp encodes t. For timestamptz the instant is shown in UTC;
// for timestamp the wall clock of t is used as is.
func appendTimestamp(buf []byte, t time.Time, tz bool, bin bool) []byte {
	// A timestamptz prints in its own zone with that zone's offset: the
	// session layer puts values in the session's TimeZone (UTC unless SET).
	off := 0
	if tz {
		_, off = t.Zone()
	} else if t.Location() != time.UTC {
		y, mo, d := t.Date()
		h, mi, s := t.Clock()
		t = time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
	}
	if bin {
		return binary.BigEndian.AppendUint64(buf, uint64(unixMicros(t)-pgEpochUnix*1_000_000))
	}
	t = t.Round(time.Microsecond)
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	buf = appendPad(buf, y, 4)
	buf = append(buf, '-')
	buf = appendPad(buf, int(mo), 2)
	buf = append(buf, '-')
	buf = appendPad(buf, d, 2)
	buf = append(buf, ' ')
	buf = appendPad(buf, h, 2)
	buf = append(buf, ':')
	buf = appendPad(buf, mi, 2)
	buf = append(buf, ':')
	buf = appendPad(buf, s, 2)
	buf = appendFraction(buf, t.Nanosecond()/1000)
	if tz {
		buf = appendUTCOffset(buf, off)
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendUTCOffset appends an offset as PostgreSQL prints it: +HH, then
// :MM and :SS only when not zero.
func appendUTCOffset(buf []byte, off int) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	buf = append(buf, sign)
	buf = appendPad(buf, off/3600, 2)
	if m, sec := off/60%60, off%60; m != 0 || sec != 0 {
		buf = append(buf, ':')
		buf = appendPad(buf, m, 2)
		if sec != 0 {
			buf = append(buf, ':')
			buf = appendPad(buf, sec, 2)
		}
	}
	return buf
}

// appendFraction appends ".ffffff" without trailing zeros, nothing for 0.
func appendFraction(buf []byte, us int) []byte {
	if us == 0 {
		return buf
	}
	buf = append(buf, '.')
	start := len(buf)
	buf = appendPad(buf, us, 6)
	for buf[len(buf)-1] == '0' && len(buf) > start {
		buf = buf[:len(buf)-1]
	}
	return buf
}

// appendIntervalText formats iv in IntervalStyle postgres.
func appendIntervalText(buf []byte, iv Interval) []byte {
	zero, before := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !zero {
			buf = append(buf, ' ')
		}
		if before && v > 0 {
			buf = append(buf, '+')
		}
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, ' ')
		buf = append(buf, unit...)
		if v != 1 {
			buf = append(buf, 's')
		}
		before, zero = v < 0, false
	}
	part(int64(iv.Months/12), "year")
	part(int64(iv.Months%12), "mon")
	part(int64(iv.Days), "day")
	us := iv.Microseconds
	if zero || us != 0 {
		if !zero {
			buf = append(buf, ' ')
		}
		neg := us < 0
		u := uint64(us)
		if neg {
			u = -u
			buf = append(buf, '-')
		} else if before {
			buf = append(buf, '+')
		}
		hours := u / 3_600_000_000
		rest := u % 3_600_000_000
		buf = appendPad(buf, int(hours), 2)
		buf = append(buf, ':')
		buf = appendPad(buf, int(rest/60_000_000), 2)
		buf = append(buf, ':')
		rest %= 60_000_000
		buf = appendPad(buf, int(rest/1_000_000), 2)
		buf = appendFraction(buf, int(rest%1_000_000))
	}
	return buf
}

// appendNumeric encodes a numeric given as decimal text, int64 or float64.
func appendNumeric(buf []byte, v any, bin bool) ([]byte, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case *apd.Decimal:
		s = x.Text('f') // plain notation, Infinity, NaN: PostgreSQL's text
	case float64:
		s = numericText(x)
	case float32:
		s = strconv.FormatFloat(float64(x), 'f', -1, 32)
	default:
		n, ok := toInt64(v)
		if !ok {
			return appendFallback(buf, values.OIDNumeric, bin, v)
		}
		if !bin {
			return strconv.AppendInt(buf, n, 10), nil
		}
		s = strconv.FormatInt(n, 10)
	}
	if !bin {
		return append(buf, s...), nil
	}
	return appendNumericBinary(buf, s)
}

// numericText prints a numeric computed in binary floating point: to the
// 15 significant digits a float64 carries exactly, without an exponent, so
// 0.1 + 0.2 prints 0.3 as PostgreSQL's decimal numeric does (float8
// columns keep the shortest exact form, 0.30000000000000004).
func numericText(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 15, 64), 64)
	if err != nil {
		r = x
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// appendNumericBinary encodes decimal text in PostgreSQL's binary numeric
// format: ndigits, weight, sign, dscale, then base-10000 digits.
func appendNumericBinary(buf []byte, s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "nan":
		return append(buf, 0, 0, 0, 0, 0xC0, 0, 0, 0), nil
	case "infinity", "+infinity", "inf":
		return append(buf, 0, 0, 0, 0, 0xD0, 0, 0, 0), nil
	case "-infinity", "-inf":
		return append(buf, 0, 0, 0, 0, 0xF0, 0, 0, 0), nil
	}
	bad := newError("22P02", fmt.Sprintf("invalid input syntax for type numeric: %q", s))
	sign := uint16(0)
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = 0x4000
		}
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return buf, bad
	}
	for _, p := range [2]string{intPart, frac} {
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return buf, bad
			}
		}
	}
	intPart = strings.TrimLeft(intPart, "0")
	dscale := len(frac)
	lead := (4 - len(intPart)%4) % 4
	digits := strings.Repeat("0", lead) + intPart + frac + strings.Repeat("0", (4-len(frac)%4)%4)
	weight := (lead+len(intPart))/4 - 1
	groups := make([]int16, 0, len(digits)/4)
	for i := 0; i < len(digits); i += 4 {
		g := int16(digits[i]-'0')*1000 + int16(digits[i+1]-'0')*100 + int16(digits[i+2]-'0')*10 + int16(digits[i+3]-'0')
		groups = append(groups, g)
	}
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	if len(groups) == 0 {
		weight, sign = 0, 0
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(groups)))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	for _, g := range groups {
		buf = binary.BigEndian.AppendUint16(buf, uint16(g))
	}
	return buf, nil
}

func arrayElemOID(oid uint32) uint32 {
	switch oid {
	case values.OIDInt8Array:
		return values.OIDInt8
	case values.OIDOidArray:
		return values.OIDOid
	case values.OIDInt4Array:
		return values.OIDInt4
	case values.OIDInt2Array:
		return values.OIDInt2
	case values.OIDTextArray:
		return values.OIDText
	case values.OIDBoolArray:
		return values.OIDBool
	}
	return 0
}

// appendArray encodes a one-dimensional array.
func appendArray(buf []byte, oid uint32, bin bool, v any) ([]byte, error) {
	var elems []any
	switch x := v.(type) {
	case []int64:
		elems = make([]any, len(x))
		for i, e := range x {
			elems[i] = e
		}
	case []int32:
		elems = make([]any, len(x))
		for i, e := range x {
			elems[i] = e
		}
	case []string:
		elems = make([]any, len(x))
		for i, e := range x {
			elems[i] = e
		}
	case []bool:
		elems = make([]any, len(x))
		for i, e := range x {
			elems[i] = e
		}
	case []any:
		elems = x
	default:
		return appendFallback(buf, oid, bin, v)
	}
	elemOID := arrayElemOID(oid)
	var err error
	if bin {
		hasNull := uint32(0)
		for _, e := range elems {
			if e == nil {
				hasNull = 1
			}
		}
		if len(elems) == 0 {
			buf = binary.BigEndian.AppendUint32(buf, 0)
			buf = binary.BigEndian.AppendUint32(buf, 0)
			return binary.BigEndian.AppendUint32(buf, elemOID), nil
		}
		buf = binary.BigEndian.AppendUint32(buf, 1)
		buf = binary.BigEndian.AppendUint32(buf, hasNull)
		buf = binary.BigEndian.AppendUint32(buf, elemOID)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(elems)))
		buf = binary.BigEndian.AppendUint32(buf, 1)
		for _, e := range elems {
			if e == nil {
				buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
				continue
			}
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			if buf, err = Append(buf, elemOID, 1, e); err != nil {
				return buf, err
			}
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
		return buf, nil
	}
	buf = append(buf, '{')
	var tmp []byte
	for i, e := range elems {
		if i > 0 {
			buf = append(buf, ',')
		}
		if e == nil {
			buf = append(buf, "NULL"...)
			continue
		}
		if tmp, err = Append(tmp[:0], elemOID, 0, e); err != nil {
			return buf, err
		}
		buf = appendArrayElemText(buf, tmp)
	}
	return append(buf, '}'), nil
}

// appendArrayElemText quotes an array element when PostgreSQL would.
func appendArrayElemText(buf, e []byte) []byte {
	quote := len(e) == 0 || strings.EqualFold(string(e), "null")
	for _, c := range e {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			quote = true
		}
	}
	if !quote {
		return append(buf, e...)
	}
	buf = append(buf, '"')
	for _, c := range e {
		if c == '"' || c == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, c)
	}
	return append(buf, '"')
}

// appendDate encodes the date of t's UTC instant: YYYY-MM-DD, or in binary
// the days since 2000-01-01 as an int32.
func appendDate(buf []byte, t time.Time, bin bool) []byte {
	y, m, d := t.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if bin {
		days := day.Sub(time.Unix(pgEpochUnix, 0).UTC()) / (24 * time.Hour)
		return binary.BigEndian.AppendUint32(buf, uint32(int32(days)))
	}
	return day.AppendFormat(buf, "2006-01-02")
}
