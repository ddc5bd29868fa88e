package pgvalue

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"
	"topicgate/sql/values"
)

// Append appends the encoding of v (non-nil) as type oid in format
// (0 text, 1 binary) to buf. It allocates nothing for the common types.
func Append(buf []byte, oid uint32, format int16, v any) ([]byte, error) {
	bin := format == 1
	switch oid {
	case values.OIDInt8, values.OIDInt4, values.OIDInt2, values.OIDOid:
		n, ok := toInt64(v)
		if !ok {
			break
		}
		if !bin {
			return strconv.AppendInt(buf, n, 10), nil
		}
		switch oid {
		case values.OIDInt8:
			return binary.BigEndian.AppendUint64(buf, uint64(n)), nil
		case values.OIDInt2:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return buf, newError("22003", "smallint out of range")
			}
			return binary.BigEndian.AppendUint16(buf, uint16(n)), nil
		case values.OIDOid:
			if n < 0 || n > math.MaxUint32 {
				return buf, newError("22003", "OID out of range")
			}
			return binary.BigEndian.AppendUint32(buf, uint32(n)), nil
		default:
			if n < math.MinInt32 || n > math.MaxInt32 {
				return buf, newError("22003", "integer out of range")
			}
			return binary.BigEndian.AppendUint32(buf, uint32(n)), nil
		}
	case values.OIDBytea:
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case string:
			if bin {
				return append(buf, x...), nil
			}
			buf = append(buf, '\\', 'x')
			return hexAppendString(buf, x), nil
		default:
			return appendFallback(buf, oid, bin, v)
		}
		if bin {
			return append(buf, b...), nil
		}
		buf = append(buf, '\\', 'x')
		return hex.AppendEncode(buf, b), nil
	case values.OIDText, values.OIDVarchar, values.OIDName, values.OIDBpchar, values.OIDChar, values.OIDUnknown:
		switch x := v.(type) {
		case string:
			return append(buf, x...), nil
		case []byte:
			return append(buf, x...), nil
		}
	case values.OIDTimestamptz, values.OIDTimestamp:
		t, ok := v.(time.Time)
		if !ok {
			if st, styled := v.(values.StyledTime); styled {
				if bin {
					return appendTimestamp(buf, st.T, oid == values.OIDTimestamptz, true), nil
				}
				return values.AppendTimestamp(buf, st.T, oid == values.OIDTimestamptz, st.Style), nil
			}
			break
		}
		return appendTimestamp(buf, t, oid == values.OIDTimestamptz, bin), nil
	case values.OIDDate:
		t, ok := v.(time.Time)
		if !ok {
			if st, styled := v.(values.StyledTime); styled {
				if bin {
					return appendDate(buf, st.T, true), nil
				}
				return values.AppendDate(buf, st.T.UTC(), st.Style), nil
			}
			break
		}
		return appendDate(buf, t, bin), nil
	case values.OIDBool:
		b, ok := v.(bool)
		if !ok {
			break
		}
		if bin {
			if b {
				return append(buf, 1), nil
			}
			return append(buf, 0), nil
		}
		if b {
			return append(buf, 't'), nil
		}
		return append(buf, 'f'), nil
	case values.OIDFloat8, values.OIDFloat4:
		f, ok := toFloat64(v)
		if !ok {
			break
		}
		if bin {
			if oid == values.OIDFloat4 {
				return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(f))), nil
			}
			if math.IsNaN(f) { // PostgreSQL's NaN bits, not Go's 0x7FF8000000000001
				return binary.BigEndian.AppendUint64(buf, 0x7FF8000000000000), nil
			}
			return binary.BigEndian.AppendUint64(buf, math.Float64bits(f)), nil
		}
		return appendFloatText(buf, f, oid == values.OIDFloat4), nil
	case values.OIDJSON, values.OIDJSONB:
		if bin && oid == values.OIDJSONB {
			buf = append(buf, 1)
		}
		switch x := v.(type) {
		case []byte:
			return append(buf, x...), nil
		case string:
			return append(buf, x...), nil
		}
		if bin && oid == values.OIDJSONB {
			buf = buf[:len(buf)-1]
		}
	case values.OIDNumeric:
		return appendNumeric(buf, v, bin)
	case values.OIDInterval:
		var iv Interval
		switch x := v.(type) {
		case Interval:
			iv = x
		case time.Duration:
			iv = Interval{Microseconds: x.Microseconds()}
		default:
			return appendFallback(buf, oid, bin, v)
		}
		if bin {
			buf = binary.BigEndian.AppendUint64(buf, uint64(iv.Microseconds))
			buf = binary.BigEndian.AppendUint32(buf, uint32(iv.Days))
			return binary.BigEndian.AppendUint32(buf, uint32(iv.Months)), nil
		}
		return appendIntervalText(buf, iv), nil
	case values.OIDUUID:
		return appendUUID(buf, v, bin)
	case values.OIDInt8Array, values.OIDInt4Array, values.OIDInt2Array, values.OIDTextArray, values.OIDBoolArray, values.OIDOidArray:
		return appendArray(buf, oid, bin, v)
	}
	return appendFallback(buf, oid, bin, v)
}

// CanBinary reports whether results of type oid can be sent in binary.
func CanBinary(oid uint32) bool {
	switch oid {
	case values.OIDBool, values.OIDBytea, values.OIDName, values.OIDInt8, values.OIDInt2, values.OIDInt4, values.OIDText, values.OIDOid,
		values.OIDJSON, values.OIDFloat4, values.OIDFloat8, values.OIDUnknown, values.OIDBoolArray, values.OIDInt2Array,
		values.OIDInt4Array, values.OIDTextArray, values.OIDInt8Array, values.OIDOidArray, values.OIDBpchar, values.OIDVarchar,
		values.OIDTimestamp, values.OIDTimestamptz, values.OIDDate, values.OIDInterval, values.OIDNumeric, values.OIDUUID, values.OIDJSONB, values.OIDChar:
		return true
	}
	return false
}

// appendFallback encodes a value whose Go type does not match its column
// type: text format gets a best-effort rendering, binary is an error.
func appendFallback(buf []byte, oid uint32, bin bool, v any) ([]byte, error) {
	if bin {
		return buf, newError("XX000", fmt.Sprintf("internal error: cannot encode %T as binary value of type OID %d", v, oid))
	}
	switch x := v.(type) {
	case string:
		return append(buf, x...), nil
	case []byte:
		return append(buf, x...), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case time.Time:
		return appendTimestamp(buf, x, true, false), nil
	case time.Duration:
		return appendIntervalText(buf, Interval{Microseconds: x.Microseconds()}), nil
	case Interval:
		return appendIntervalText(buf, x), nil
	case float64:
		return appendFloatText(buf, x, false), nil
	case float32:
		return appendFloatText(buf, float64(x), true), nil
	}
	if n, ok := toInt64(v); ok {
		return strconv.AppendInt(buf, n, 10), nil
	}
	if s, ok := v.(fmt.Stringer); ok {
		return append(buf, s.String()...), nil
	}
	return fmt.Appendf(buf, "%v", v), nil
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if n, ok := toInt64(v); ok {
		return float64(n), true
	}
	return 0, false
}

const hexDigits = "0123456789abcdef"

func hexAppendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		buf = append(buf, hexDigits[s[i]>>4], hexDigits[s[i]&15])
	}
	return buf
}

// appendFloatText formats like PostgreSQL 12+: shortest round-trip digits,
// exponent notation outside [1e-4, 1e15) (1e6 for float4).
func appendFloatText(buf []byte, f float64, single bool) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	}
	bits, limit := 64, 15
	if single {
		bits, limit = 32, 6
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(buf, "-0"...)
		}
		return append(buf, '0')
	}
	start := len(buf)
	buf = strconv.AppendFloat(buf, f, 'e', -1, bits)
	// Find the exponent after 'e'.
	i := len(buf) - 1
	for buf[i] != 'e' {
		i--
	}
	exp, neg := 0, false
	for _, ch := range buf[i+1:] {
		switch {
		case ch == '-':
			neg = true
		case ch >= '0' && ch <= '9':
			exp = exp*10 + int(ch-'0')
		}
	}
	if neg {
		exp = -exp
	}
	if exp < -4 || exp >= limit {
		return buf
	}
	buf = buf[:start]
	return strconv.AppendFloat(buf, f, 'f', -1, bits)
}

func appendUUID(buf []byte, v any, bin bool) ([]byte, error) {
	var u [16]byte
	switch x := v.(type) {
	case [16]byte:
		u = x
	case []byte:
		if len(x) != 16 {
			return appendFallback(buf, values.OIDUUID, bin, v)
		}
		copy(u[:], x)
	case string:
		if !bin {
			return append(buf, x...), nil
		}
		p, err := parseUUID(x)
		if err != nil {
			return buf, err
		}
		u = p
	default:
		return appendFallback(buf, values.OIDUUID, bin, v)
	}
	if bin {
		return append(buf, u[:]...), nil
	}
	for i, b := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			buf = append(buf, '-')
		}
		buf = append(buf, hexDigits[b>>4], hexDigits[b&15])
	}
	return buf, nil
}
