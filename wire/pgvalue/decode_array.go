package pgvalue

import (
	"encoding/binary"
	"fmt"
	"strings"
	"topicgate/sql/values"
)

// decodeArrayBinary decodes a one-dimensional binary array.
func decodeArrayBinary(oid uint32, data []byte) (any, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("array header too short")
	}
	ndim := int32(binary.BigEndian.Uint32(data))
	elemOID := binary.BigEndian.Uint32(data[8:])
	if ndim == 0 {
		return makeArray(oid, nil, false), nil
	}
	if ndim != 1 {
		return nil, newError("0A000", "multidimensional array parameters are not supported")
	}
	if len(data) < 20 {
		return nil, fmt.Errorf("array header too short")
	}
	n := int(int32(binary.BigEndian.Uint32(data[12:])))
	if n < 0 || n > (len(data)-20)/4 {
		return nil, fmt.Errorf("invalid array length %d", n)
	}
	p := data[20:]
	if ints, ok := intArrayBinary(oid, elemOID, n, p); ok {
		return ints, nil
	}
	return decodeArrayElems(oid, elemOID, n, p)
}

// decodeArrayElems decodes the n elements p holds of a one-dimensional
// array of type oid whose elements the client sent as elemOID.
func decodeArrayElems(oid, elemOID uint32, n int, p []byte) (any, error) {
	elems := make([]any, n)
	hasNull := false
	for i := range n {
		if len(p) < 4 {
			return nil, fmt.Errorf("array element %d truncated", i+1)
		}
		l := int(int32(binary.BigEndian.Uint32(p)))
		p = p[4:]
		if l == -1 {
			hasNull = true
			continue
		}
		if l < 0 || l > len(p) {
			return nil, fmt.Errorf("array element %d truncated", i+1)
		}
		v, err := decodeBinary(elemOID, p[:l])
		if err != nil {
			return nil, err
		}
		if !arrayElemOK(oid, v) {
			return nil, fmt.Errorf("array element type OID %d does not match %s", elemOID, typeName(oid))
		}
		elems[i] = v
		p = p[l:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("trailing bytes after array")
	}
	return makeArray(oid, elems, hasNull), nil
}

// intArrayBinary decodes the n elements p holds of an integer array
// straight into the []int64 makeArray would build, without an interface
// value per element (a pipeline of acknowledgements binds one array of
// offsets per statement). It reports false for anything else, a NULL or a
// malformed element included, leaving those to the general decoder and
// its errors.
func intArrayBinary(oid, elemOID uint32, n int, p []byte) ([]int64, bool) {
	var size int
	switch elemOID {
	case values.OIDInt8:
		size = 8
	case values.OIDInt4, values.OIDOid:
		size = 4
	case values.OIDInt2:
		size = 2
	default:
		return nil, false
	}
	if !arrayElemOK(oid, int64(0)) || len(p) != n*(4+size) {
		return nil, false
	}
	out := make([]int64, n)
	for i := range out {
		if int(int32(binary.BigEndian.Uint32(p))) != size {
			return nil, false
		}
		e := p[4 : 4+size]
		switch elemOID {
		case values.OIDInt8:
			out[i] = int64(binary.BigEndian.Uint64(e))
		case values.OIDInt4:
			out[i] = int64(int32(binary.BigEndian.Uint32(e)))
		case values.OIDOid:
			out[i] = int64(binary.BigEndian.Uint32(e))
		case values.OIDInt2:
			out[i] = int64(int16(binary.BigEndian.Uint16(e)))
		}
		p = p[4+size:]
	}
	return out, true
}

func arrayElemOK(oid uint32, v any) bool {
	switch v.(type) {
	case int64:
		return oid == values.OIDInt8Array || oid == values.OIDInt4Array || oid == values.OIDInt2Array || oid == values.OIDOidArray
	case string:
		return oid == values.OIDTextArray
	case bool:
		return oid == values.OIDBoolArray
	}
	return false
}

// makeArray converts decoded elements to the typed slice ([]int64,
// []string, []bool), or []any when there are NULLs.
func makeArray(oid uint32, elems []any, hasNull bool) any {
	if hasNull {
		return elems
	}
	switch oid {
	case values.OIDTextArray:
		out := make([]string, len(elems))
		for i, e := range elems {
			out[i] = e.(string)
		}
		return out
	case values.OIDBoolArray:
		out := make([]bool, len(elems))
		for i, e := range elems {
			out[i] = e.(bool)
		}
		return out
	}
	out := make([]int64, len(elems))
	for i, e := range elems {
		out[i] = e.(int64)
	}
	return out
}

// decodeArrayText parses a one-dimensional array literal like {1,2,"a b",NULL}.
func decodeArrayText(oid uint32, s string) (any, error) {
	bad := newError("22P02", fmt.Sprintf("malformed array literal: %q", s))
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, bad
	}
	body := t[1 : len(t)-1]
	var elems []any
	hasNull := false
	elemOID := arrayElemOID(oid)
	if strings.TrimSpace(body) == "" {
		return makeArray(oid, nil, false), nil
	}
	i := 0
	for {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var sb strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for {
				if i >= len(body) {
					return nil, bad
				}
				c := body[i]
				if c == '\\' && i+1 < len(body) {
					sb.WriteByte(body[i+1])
					i += 2
					continue
				}
				i++
				if c == '"' {
					break
				}
				sb.WriteByte(c)
			}
			for i < len(body) && body[i] == ' ' {
				i++
			}
		} else {
			for i < len(body) && body[i] != ',' {
				c := body[i]
				if c == '{' || c == '}' || c == '"' {
					return nil, bad
				}
				if c == '\\' && i+1 < len(body) {
					i++
					c = body[i]
				}
				sb.WriteByte(c)
				i++
			}
		}
		e := sb.String()
		if !quoted {
			e = strings.TrimSpace(e)
			if e == "" {
				return nil, bad
			}
		}
		if !quoted && strings.EqualFold(e, "null") {
			elems = append(elems, nil)
			hasNull = true
		} else {
			v, err := decodeText(elemOID, e)
			if err != nil {
				return nil, err
			}
			elems = append(elems, v)
		}
		if i >= len(body) {
			break
		}
		if body[i] != ',' {
			return nil, bad
		}
		i++
	}
	return makeArray(oid, elems, hasNull), nil
}
