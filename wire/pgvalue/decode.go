package pgvalue

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"topicgate/sql/values"
	"unicode/utf8"
)

// DecodeParam decodes Bind parameter n (1-based) of type oid. data is only
// valid during the call: the result never aliases it. nil data is NULL.
// An error is an *Error whose Where is empty, for the caller to fill.
func DecodeParam(n int, oid uint32, format int16, data []byte) (any, error) {
	if data == nil {
		return nil, nil
	}
	var v any
	var err error
	if format == 1 {
		v, err = decodeBinary(oid, data)
	} else {
		v, err = decodeText(oid, string(data))
	}
	if err != nil {
		if e, ok := err.(*Error); ok {
			if e == errBinaryTooLong {
				// PostgreSQL's words when a receive function leaves bytes over.
				return nil, newError("22P03", fmt.Sprintf("incorrect binary data format in bind parameter %d", n))
			}
			c := *e
			return nil, &c
		}
		code := "22P02"
		if format == 1 {
			code = "22P03"
		}
		return nil, newError(code, fmt.Sprintf("invalid %s value for parameter $%d of type %s: %v", formatName(format), n, typeName(oid), err))
	}
	return v, nil
}

// Errors of a binary value of the wrong size, as PostgreSQL's receive
// functions report them: too short runs off the end of the value (a
// protocol error), too long leaves bytes over.
var (
	errBinaryTooShort = newError("08P01", "insufficient data left in message")
	errBinaryTooLong  = newError("22P03", "incorrect binary data format")
)

func formatName(f int16) string {
	if f == 1 {
		return "binary"
	}
	return "text"
}

func typeName(oid uint32) string {
	switch oid {
	case values.OIDBool:
		return "boolean"
	case values.OIDBytea:
		return "bytea"
	case values.OIDInt8:
		return "bigint"
	case values.OIDInt2:
		return "smallint"
	case values.OIDInt4:
		return "integer"
	case values.OIDText:
		return "text"
	case values.OIDJSON:
		return "json"
	case values.OIDJSONB:
		return "jsonb"
	case values.OIDFloat4:
		return "real"
	case values.OIDFloat8:
		return "double precision"
	case values.OIDTimestamptz:
		return "timestamp with time zone"
	case values.OIDTimestamp:
		return "timestamp without time zone"
	case values.OIDDate:
		return "date"
	case values.OIDInterval:
		return "interval"
	case values.OIDNumeric:
		return "numeric"
	case values.OIDInt8Array:
		return "bigint[]"
	case values.OIDOidArray:
		return "oid[]"
	case values.OIDInt4Array:
		return "integer[]"
	case values.OIDTextArray:
		return "text[]"
	case values.OIDBoolArray:
		return "boolean[]"
	}
	return fmt.Sprintf("OID %d", oid)
}

func wantLen(data []byte, n int) error {
	switch {
	case len(data) < n:
		return errBinaryTooShort
	case len(data) > n:
		return errBinaryTooLong
	}
	return nil
}

func decodeBinary(oid uint32, data []byte) (any, error) {
	switch oid {
	case values.OIDInt8:
		if err := wantLen(data, 8); err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint64(data)), nil
	case values.OIDInt4:
		if err := wantLen(data, 4); err != nil {
			return nil, err
		}
		return int64(int32(binary.BigEndian.Uint32(data))), nil
	case values.OIDInt2:
		if err := wantLen(data, 2); err != nil {
			return nil, err
		}
		return int64(int16(binary.BigEndian.Uint16(data))), nil
	case values.OIDOid:
		if err := wantLen(data, 4); err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint32(data)), nil
	case values.OIDBool:
		if err := wantLen(data, 1); err != nil {
			return nil, err
		}
		return data[0] != 0, nil
	case values.OIDFloat8:
		if err := wantLen(data, 8); err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(data)), nil
	case values.OIDFloat4:
		if err := wantLen(data, 4); err != nil {
			return nil, err
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(data))), nil
	case values.OIDText, values.OIDVarchar, values.OIDName, values.OIDBpchar, values.OIDChar:
		return checkText(data)
	case values.OIDBytea:
		return bytes.Clone(data), nil
	case values.OIDJSON:
		return checkJSON(data)
	case values.OIDJSONB:
		if len(data) == 0 || data[0] != 1 {
			return nil, fmt.Errorf("unsupported jsonb version number")
		}
		return checkJSON(data[1:])
	case values.OIDDate:
		if err := wantLen(data, 4); err != nil {
			return nil, err
		}
		days := int32(binary.BigEndian.Uint32(data))
		return time.Unix(pgEpochUnix, 0).UTC().AddDate(0, 0, int(days)), nil
	case values.OIDTimestamptz, values.OIDTimestamp:
		if err := wantLen(data, 8); err != nil {
			return nil, err
		}
		us := int64(binary.BigEndian.Uint64(data))
		return time.Unix(pgEpochUnix, 0).UTC().Add(time.Duration(us) * time.Microsecond), nil
	case values.OIDInterval:
		if err := wantLen(data, 16); err != nil {
			return nil, err
		}
		return Interval{Microseconds: int64(binary.BigEndian.Uint64(data)), Days: int32(binary.BigEndian.Uint32(data[8:])), Months: int32(binary.BigEndian.Uint32(data[12:]))}, nil
	case values.OIDNumeric:
		return decodeNumericBinary(data)
	case values.OIDUUID:
		if err := wantLen(data, 16); err != nil {
			return nil, err
		}
		b, _ := appendUUID(nil, data, false)
		return string(b), nil
	case values.OIDInt8Array, values.OIDInt4Array, values.OIDInt2Array, values.OIDTextArray, values.OIDBoolArray, values.OIDOidArray:
		return decodeArrayBinary(oid, data)
	}
	return bytes.Clone(data), nil
}

func checkText(data []byte) (any, error) {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, newError("22021", "invalid byte sequence for encoding \"UTF8\"")
	}
	return string(data), nil
}

func checkJSON(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, newError("22P02", "invalid input syntax for type json")
	}
	return bytes.Clone(data), nil
}

func decodeText(oid uint32, s string) (any, error) {
	switch oid {
	case values.OIDInt8, values.OIDInt4, values.OIDInt2, values.OIDOid:
		bits := map[uint32]int{values.OIDInt8: 64, values.OIDInt4: 32, values.OIDInt2: 16, values.OIDOid: 33}[oid]
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, newError("22003", fmt.Sprintf("value %q is out of range for type %s", s, typeName(oid)))
			}
			return nil, newError("22P02", fmt.Sprintf("invalid input syntax for type %s: %q", typeName(oid), s))
		}
		if oid == values.OIDOid && (n < 0 || n > math.MaxUint32) {
			return nil, newError("22003", fmt.Sprintf("value %q is out of range for type oid", s))
		}
		return n, nil
	case values.OIDBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "tr", "tru", "true", "y", "ye", "yes", "on", "1":
			return true, nil
		case "f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0":
			return false, nil
		}
		return nil, newError("22P02", fmt.Sprintf("invalid input syntax for type boolean: %q", s))
	case values.OIDFloat8, values.OIDFloat4:
		t := strings.TrimSpace(s)
		switch strings.ToLower(t) {
		case "infinity", "+infinity", "inf", "+inf":
			return math.Inf(1), nil
		case "-infinity", "-inf":
			return math.Inf(-1), nil
		case "nan":
			return math.NaN(), nil
		}
		bits := 64
		if oid == values.OIDFloat4 {
			bits = 32
		}
		f, err := strconv.ParseFloat(t, bits)
		if err != nil || strings.ContainsAny(t, "_xXpP") {
			return nil, newError("22P02", fmt.Sprintf("invalid input syntax for type %s: %q", typeName(oid), s))
		}
		return f, nil
	case values.OIDNumeric:
		t := strings.TrimSpace(s)
		if _, err := appendNumericBinary(nil, t); err != nil {
			if _, ferr := strconv.ParseFloat(t, 64); ferr != nil || strings.ContainsAny(t, "_xXpP") {
				return nil, newError("22P02", fmt.Sprintf("invalid input syntax for type numeric: %q", s))
			}
		}
		return t, nil
	case values.OIDText, values.OIDVarchar, values.OIDName, values.OIDBpchar, values.OIDChar:
		return checkText([]byte(s))
	case values.OIDBytea:
		return decodeByteaText(s)
	case values.OIDJSON, values.OIDJSONB:
		return checkJSON([]byte(s))
	case values.OIDTimestamptz, values.OIDTimestamp, values.OIDDate:
		if values.DateOrderMatters(s) {
			// '01/02/2024' reads in the session's DateStyle: the
			// session parses it (values.ParseTextIn).
			return s, nil
		}
		if oid != values.OIDDate {
			return parseTimestamp(s, oid == values.OIDTimestamptz)
		}
		t, err := parseTimestamp(s, false)
		if err != nil {
			return nil, newError("22007", fmt.Sprintf("invalid input syntax for type date: %q", s))
		}
		y, m, d := t.(time.Time).UTC().Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	case values.OIDInterval:
		return parseInterval(s)
	case values.OIDUUID:
		u, err := parseUUID(s)
		if err != nil {
			return nil, err
		}
		b, _ := appendUUID(nil, u, false)
		return string(b), nil
	case values.OIDInt8Array, values.OIDInt4Array, values.OIDInt2Array, values.OIDTextArray, values.OIDBoolArray, values.OIDOidArray:
		return decodeArrayText(oid, s)
	}
	return s, nil
}

// decodeByteaText accepts hex ("\x00ff") and escape format.
func decodeByteaText(s string) (any, error) {
	if strings.HasPrefix(s, `\x`) {
		h := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s[2:])
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, newError("22P02", "invalid hexadecimal data in bytea input")
		}
		return b, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(s) && isOct(s[i+1]) && isOct(s[i+2]) && isOct(s[i+3]) && s[i+1] <= '3':
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
		default:
			return nil, newError("22P02", "invalid input syntax for type bytea")
		}
	}
	return out, nil
}

func isOct(c byte) bool { return c >= '0' && c <= '7' }

func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "{"), "}")
	t = strings.ReplaceAll(t, "-", "")
	if len(t) != 32 {
		return u, newError("22P02", fmt.Sprintf("invalid input syntax for type uuid: %q", s))
	}
	if _, err := hex.Decode(u[:], []byte(t)); err != nil {
		return u, newError("22P02", fmt.Sprintf("invalid input syntax for type uuid: %q", s))
	}
	return u, nil
}

// decodeNumericBinary turns PostgreSQL's binary numeric into decimal text.
func decodeNumericBinary(data []byte) (any, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("numeric too short")
	}
	nd := int(binary.BigEndian.Uint16(data))
	weight := int(int16(binary.BigEndian.Uint16(data[2:])))
	sign := binary.BigEndian.Uint16(data[4:])
	dscale := int(binary.BigEndian.Uint16(data[6:]))
	switch sign {
	case 0xC000:
		return "NaN", nil
	case 0xD000:
		return "Infinity", nil
	case 0xF000:
		return "-Infinity", nil
	case 0, 0x4000:
	default:
		return nil, fmt.Errorf("invalid numeric sign")
	}
	if len(data) != 8+2*nd || dscale > 0x3FFF {
		return nil, fmt.Errorf("invalid numeric length")
	}
	var sb strings.Builder
	if sign == 0x4000 {
		sb.WriteByte('-')
	}
	digit := func(i int) int {
		if i < 0 || i >= nd {
			return 0
		}
		return int(binary.BigEndian.Uint16(data[8+2*i:]))
	}
	for i := 0; i < nd; i++ {
		if d := digit(i); d > 9999 {
			return nil, fmt.Errorf("invalid numeric digit")
		}
	}
	if weight < 0 {
		sb.WriteByte('0')
	} else {
		for i := 0; i <= weight; i++ {
			if i == 0 {
				sb.WriteString(strconv.Itoa(digit(i)))
			} else {
				fmt.Fprintf(&sb, "%04d", digit(i))
			}
		}
	}
	if dscale > 0 {
		var frac strings.Builder
		for i := weight + 1; frac.Len() < dscale; i++ {
			fmt.Fprintf(&frac, "%04d", digit(i))
		}
		sb.WriteByte('.')
		sb.WriteString(frac.String()[:dscale])
	}
	return sb.String(), nil
}
