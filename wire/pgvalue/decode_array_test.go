package pgvalue

import (
	"encoding/binary"
	"reflect"
	"testing"

	"topicgate/sql/values"
)

// arrayOIDs are the array types a fuzzed input picks from.
var arrayOIDs = []uint32{values.OIDInt8Array, values.OIDInt4Array, values.OIDInt2Array, values.OIDOidArray,
	values.OIDTextArray, values.OIDBoolArray}

// FuzzIntArrayBinary checks the integer arrays' fast path against the
// general decoder: whatever it accepts, the general decoder decodes to
// the same value.
func FuzzIntArrayBinary(f *testing.F) {
	elems := func(size int, vs ...int64) []byte {
		var p []byte
		for _, v := range vs {
			if v < 0 && size == 0 {
				p = binary.BigEndian.AppendUint32(p, 0xffffffff) // NULL
				continue
			}
			p = binary.BigEndian.AppendUint32(p, uint32(size))
			switch size {
			case 8:
				p = binary.BigEndian.AppendUint64(p, uint64(v))
			case 4:
				p = binary.BigEndian.AppendUint32(p, uint32(v))
			case 2:
				p = binary.BigEndian.AppendUint16(p, uint16(v))
			}
		}
		return p
	}
	f.Add(uint8(0), values.OIDInt8, 3, elems(8, 1, -2, 1<<40))
	f.Add(uint8(1), values.OIDInt4, 2, elems(4, 7, -1))
	f.Add(uint8(2), values.OIDInt2, 2, elems(2, 300, -300))
	f.Add(uint8(3), values.OIDOid, 1, elems(4, 1<<31+5))
	f.Add(uint8(0), values.OIDInt8, 2, append(elems(8, 5), elems(0, -1)...))
	f.Add(uint8(4), values.OIDInt8, 1, elems(8, 5))
	f.Fuzz(func(t *testing.T, which uint8, elemOID uint32, n int, p []byte) {
		oid := arrayOIDs[int(which)%len(arrayOIDs)]
		if n < 0 || n > len(p)/4 {
			return // decodeArrayBinary refuses these before either decoder
		}
		fast, ok := intArrayBinary(oid, elemOID, n, p)
		if !ok {
			return
		}
		want, err := decodeArrayElems(oid, elemOID, n, p)
		if err != nil {
			t.Fatalf("the fast path decoded %v where the general decoder failed: %v", fast, err)
		}
		if !reflect.DeepEqual(any(fast), want) {
			t.Fatalf("fast path %#v, general decoder %#v", fast, want)
		}
	})
}

// TestIntArrayBinaryDeclines: what the fast path leaves to the general
// decoder (NULLs, a wrong element length, trailing bytes, non-integer
// arrays) is still decoded or refused as before.
func TestIntArrayBinaryDeclines(t *testing.T) {
	hdr := func(elemOID uint32, n int) []byte {
		b := binary.BigEndian.AppendUint32(nil, 1) // ndim
		b = binary.BigEndian.AppendUint32(b, 0)    // flags
		b = binary.BigEndian.AppendUint32(b, elemOID)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		return binary.BigEndian.AppendUint32(b, 1) // lower bound
	}
	withNull := append(hdr(values.OIDInt8, 2), 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff)
	v, err := decodeArrayBinary(values.OIDInt8Array, withNull)
	if err != nil || !reflect.DeepEqual(v, []any{int64(9), nil}) {
		t.Fatalf("array with a NULL: %#v, %v", v, err)
	}
	short := append(hdr(values.OIDInt8, 1), 0, 0, 0, 4, 0, 0, 0, 9)
	if _, err := decodeArrayBinary(values.OIDInt8Array, short); err == nil {
		t.Fatalf("an int8 element of 4 bytes was accepted")
	}
	trailing := append(hdr(values.OIDInt4, 1), 0, 0, 0, 4, 0, 0, 0, 9, 1)
	if _, err := decodeArrayBinary(values.OIDInt4Array, trailing); err == nil {
		t.Fatalf("trailing bytes were accepted")
	}
	ints := append(hdr(values.OIDInt4, 2), 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 4, 0, 0, 0, 3)
	v, err = decodeArrayBinary(values.OIDInt8Array, ints)
	if err != nil || !reflect.DeepEqual(v, []int64{-2, 3}) {
		t.Fatalf("int4 elements of an int8 array: %#v, %v", v, err)
	}
}
