package wire

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"topicgate/wire/pgvalue"
)

// TestRowEncoderMatchesWriteRow checks that the typed RowEncoder appends
// produce the same DataRow bytes as pgvalue.Append (what WriteRow sends) for
// every column type and format it has a fast path for, and for the
// fallbacks.
func TestRowEncoderMatchesWriteRow(t *testing.T) {
	type val struct {
		put func(e *RowEncoder)
		v   any
	}
	cols := []Column{{TypeOID: OIDInt8}, {TypeOID: OIDInt4}, {TypeOID: OIDInt2}, {TypeOID: OIDNumeric},
		{TypeOID: OIDBytea}, {TypeOID: OIDText}, {TypeOID: OIDBytea}, {TypeOID: OIDText}, {TypeOID: OIDInt8}}
	vals := []val{
		{func(e *RowEncoder) { e.Int(-1 << 40) }, int64(-1 << 40)},
		{func(e *RowEncoder) { e.Int(123456) }, int64(123456)},
		{func(e *RowEncoder) { e.Int(-7) }, int64(-7)},
		{func(e *RowEncoder) { e.Int(99) }, int64(99)},
		{func(e *RowEncoder) { e.Bytes([]byte{0, 0xff, 'a'}) }, []byte{0, 0xff, 'a'}},
		{func(e *RowEncoder) { e.Bytes([]byte("héllo")) }, []byte("héllo")},
		{func(e *RowEncoder) { e.Text("as bytes") }, "as bytes"},
		{func(e *RowEncoder) { e.Text("text") }, "text"},
		{func(e *RowEncoder) { e.Null() }, nil},
	}
	for _, formats := range [][]int16{nil, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {0, 1, 0, 1, 0, 1, 0, 1, 0}} {
		e := newRowEncoder(cols, formats)
		for r := 0; r < 2; r++ {
			e.StartRow()
			for _, v := range vals {
				v.put(e)
			}
			if err := e.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		var want []byte
		for r := 0; r < 2; r++ {
			row := []byte{'D', 0, 0, 0, 0}
			row = binary.BigEndian.AppendUint16(row, uint16(len(cols)))
			for i, v := range vals {
				if v.v == nil {
					row = append(row, 0xFF, 0xFF, 0xFF, 0xFF)
					continue
				}
				var f int16
				if formats != nil {
					f = formats[i]
				}
				at := len(row)
				row = append(row, 0, 0, 0, 0)
				var err error
				if row, err = pgvalue.Append(row, cols[i].TypeOID, f, v.v); err != nil {
					t.Fatal(err)
				}
				binary.BigEndian.PutUint32(row[at:], uint32(len(row)-at-4))
			}
			binary.BigEndian.PutUint32(row[1:], uint32(len(row)-1))
			want = append(want, row...)
		}
		if e.Rows() != 2 || !bytes.Equal(e.buf, want) {
			t.Fatalf("formats %v: rows %d\n got %x\nwant %x", formats, e.Rows(), e.buf, want)
		}
	}
}

// TestRowEncoderErrors checks that a bad row is dropped with its error and
// the rows before it survive.
func TestRowEncoderErrors(t *testing.T) {
	e := newRowEncoder([]Column{{TypeOID: OIDInt2}}, []int16{1})
	e.StartRow()
	e.Int(5)
	if err := e.EndRow(); err != nil {
		t.Fatal(err)
	}
	good := len(e.buf)
	e.StartRow()
	e.Int(math.MaxInt32)
	if err := e.EndRow(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("smallint out of range")) {
		t.Fatalf("out of range: %v", err)
	}
	e.StartRow()
	e.Int(1)
	e.Int(2)
	if err := e.EndRow(); err == nil {
		t.Fatal("a row with too many values was accepted")
	}
	e.StartRow()
	if err := e.EndRow(); err == nil {
		t.Fatal("a row with too few values was accepted")
	}
	if e.Rows() != 1 || len(e.buf) != good {
		t.Fatalf("after errors: %d rows, %d bytes; want 1 row, %d bytes", e.Rows(), len(e.buf), good)
	}
	e.Reset()
	if e.Rows() != 0 || len(e.buf) != 0 {
		t.Fatal("Reset kept rows")
	}
}
