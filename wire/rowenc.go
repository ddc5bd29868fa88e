package wire

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"

	"topicgate/wire/pgvalue"
)

// RowEncoder accumulates the DataRow messages of one result in a buffer
// the caller owns, in the result's column types and formats. It lets an
// executor encode rows straight from storage memory while that memory is
// valid, without boxing each value or copying bodies, and decide later
// whether to send them (Output.WriteRows) or drop them (Reset), e.g. when
// a consumer read must be retried. A RowEncoder is not safe for concurrent
// use; its columns and formats are those of the Output that made it.
type RowEncoder struct {
	cols    []Column
	formats []int16
	buf     []byte
	row     int // offset of the current DataRow, -1 outside a row
	col     int // next column of the current row
	rows    int
	err     error
}

func newRowEncoder(cols []Column, formats []int16) *RowEncoder {
	return &RowEncoder{cols: cols, formats: formats, row: -1}
}

// Rows returns the number of complete rows held.
func (e *RowEncoder) Rows() int { return e.rows }

// Reset drops every row held; the buffer is kept for reuse.
func (e *RowEncoder) Reset() {
	e.buf, e.row, e.col, e.rows, e.err = e.buf[:0], -1, 0, 0, nil
}

// StartRow begins a row; its values follow in column order.
func (e *RowEncoder) StartRow() {
	e.row, e.col = len(e.buf), 0
	e.buf = append(e.buf, 'D', 0, 0, 0, 0)
	e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(len(e.cols)))
}

// EndRow completes the row. It returns the first encoding error of the row
// (for instance a value out of its column's range); the row is then
// dropped.
func (e *RowEncoder) EndRow() error {
	if e.err == nil && e.col != len(e.cols) {
		e.err = newError("XX000", fmt.Sprintf("internal error: row has %d values, but the result has %d columns", e.col, len(e.cols)))
	}
	if e.err != nil {
		err := e.err
		e.buf, e.row, e.err = e.buf[:e.row], -1, nil
		return err
	}
	binary.BigEndian.PutUint32(e.buf[e.row+1:], uint32(len(e.buf)-e.row-1))
	e.row = -1
	e.rows++
	return nil
}

// next returns the type and format of the next column and reserves its
// length word, or ok=false if the row already has all its columns.
func (e *RowEncoder) next() (oid uint32, bin bool, at int, ok bool) {
	if e.col >= len(e.cols) {
		if e.err == nil {
			e.err = newError("XX000", fmt.Sprintf("internal error: row has more than %d values", len(e.cols)))
		}
		return 0, false, 0, false
	}
	i := e.col
	e.col++
	at = len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	return e.cols[i].TypeOID, e.formats != nil && e.formats[i] == 1, at, true
}

func (e *RowEncoder) finish(at int) {
	binary.BigEndian.PutUint32(e.buf[at:], uint32(len(e.buf)-at-4))
}

// Null appends SQL NULL.
func (e *RowEncoder) Null() {
	if e.col >= len(e.cols) {
		e.next()
		return
	}
	e.col++
	e.buf = append(e.buf, 0xFF, 0xFF, 0xFF, 0xFF)
}

// Int appends an integer value.
func (e *RowEncoder) Int(v int64) {
	oid, bin, at, ok := e.next()
	if !ok {
		return
	}
	switch {
	case oid == OIDInt8 && bin:
		e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v))
	case oid == OIDInt8 || oid == OIDInt4 || oid == OIDInt2:
		if !bin {
			e.buf = strconv.AppendInt(e.buf, v, 10)
			break
		}
		fallthrough
	default:
		e.appendAny(oid, bin, v)
	}
	e.finish(at)
}

// Bytes appends a byte string (bytea, or text for text columns). b is only
// read during the call.
func (e *RowEncoder) Bytes(b []byte) {
	oid, bin, at, ok := e.next()
	if !ok {
		return
	}
	switch oid {
	case OIDBytea:
		if bin {
			e.buf = append(e.buf, b...)
		} else {
			e.buf = append(e.buf, '\\', 'x')
			e.buf = hex.AppendEncode(e.buf, b)
		}
	case OIDText, OIDVarchar, OIDName, OIDBpchar, OIDUnknown:
		e.buf = append(e.buf, b...)
	default:
		e.appendAny(oid, bin, b)
	}
	e.finish(at)
}

// Text appends a string (text columns; bytea gets its bytes).
func (e *RowEncoder) Text(s string) {
	oid, bin, at, ok := e.next()
	if !ok {
		return
	}
	switch oid {
	case OIDText, OIDVarchar, OIDName, OIDBpchar, OIDUnknown:
		e.buf = append(e.buf, s...)
	default:
		e.appendAny(oid, bin, s)
	}
	e.finish(at)
}

// Value appends any value the way Output.WriteRow encodes it.
func (e *RowEncoder) Value(v any) {
	if v == nil {
		e.Null()
		return
	}
	oid, bin, at, ok := e.next()
	if !ok {
		return
	}
	e.appendAny(oid, bin, v)
	e.finish(at)
}

func (e *RowEncoder) appendAny(oid uint32, bin bool, v any) {
	var f int16
	if bin {
		f = 1
	}
	buf, err := pgvalue.Append(e.buf, oid, f, v)
	e.buf = buf
	if err != nil && e.err == nil {
		e.err = err
	}
}
