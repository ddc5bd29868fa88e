package copyio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"strconv"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/wire"
)

// FormatCode is the wire's format code of a COPY format (CopyInResponse,
// CopyOutResponse): 1 for binary, 0 for text and csv ("" is text).
func FormatCode(format string) int16 {
	if format == "binary" {
		return 1
	}
	return 0
}

// Decoder reads the data of one COPY ... FROM STDIN: rows of the plan's
// columns in its format (text, csv or binary), each field parsed to its
// column's type.
type Decoder struct {
	r     *bufio.Reader
	p     *plantree.CopyPlan
	order values.DateOrder
	pos   copyPos
}

// NewDecoder reads the COPY data src yields for plan p. A date or
// timestamp field of numeric fields ('03/04/2026') in the text and csv
// formats reads in order, the session's DateStyle order, as a literal
// does.
func NewDecoder(src wire.CopyReader, p *plantree.CopyPlan, order values.DateOrder) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(&copyReader{src: src}, 64<<10), p: p, order: order,
		pos: copyPos{topic: p.Topic}}
}

// Decode reads rows up to the end of the data and hands each to row (the
// slice is reused for the next row). On an error, row's included, it
// reads and drops the rest of the data, so that the connection stays in
// step with the client, and returns it; the client's CopyFail (57014) and
// a message out of place (08P01) get the line they came at as their
// context, as PostgreSQL gives it.
func (d *Decoder) Decode(row func(vals []any) error) error {
	var err error
	switch d.p.Opts.Format {
	case "binary":
		err = readBinary(d.r, d.p.Cols, &d.pos, row)
	case "csv":
		err = readCSV(d.r, d.p, d.order, &d.pos, row)
	default:
		err = readText(d.r, d.p, d.order, &d.pos, row)
	}
	if err != nil {
		// Drain the rest so the connection stays in sync with the client.
		_, _ = io.Copy(io.Discard, d.r)
		switch pgerror.Code(err) {
		case pgerror.CodeQueryCanceled, "08P01":
			// The client's CopyFail, or another message during COPY:
			// PostgreSQL says at which line (binary: tuple) it came.
			err = d.pos.wrap(err, "")
		}
	}
	return err
}

// Wrap gives err, an error of the row being read (building its message,
// say), the context of its line: "COPY t, line 3". Its code and message
// stay.
func (d *Decoder) Wrap(err error) error { return d.pos.wrap(err, "") }

// copyReader adapts wire.CopyReader to io.Reader.
type copyReader struct {
	src wire.CopyReader
	buf []byte
}

func (r *copyReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		b, err := r.src.Next()
		if err != nil {
			return 0, err
		}
		r.buf = b
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// pgcopySig is the binary format's signature, which Encoder writes and
// Decoder reads.
var pgcopySig = []byte("PGCOPY\n\xff\r\n\x00")

// copyPos is where a COPY is in its data, for the context (Where) of its
// errors, as PostgreSQL gives it: "COPY t, line 3", then the column, or the
// line's text for an error of the line as a whole.
type copyPos struct {
	topic string
	line  int // 1-based: the line (text, csv) or tuple (binary) being read
}

// where is the context of an error at the current line: with the column
// (and its value, when it has one) or with the whole line's text.
func (p *copyPos) where(col, value string, hasValue bool, lineText *string) string {
	w := "COPY " + p.topic + ", line " + strconv.Itoa(p.line)
	switch {
	case col != "" && hasValue:
		w += ", column " + col + ": \"" + value + "\""
	case col != "":
		w += ", column " + col
	case lineText != nil:
		w += ": \"" + *lineText + "\""
	}
	return w
}

// formatErr is a malformed COPY stream: 22P04, bad_copy_file_format.
func (p *copyPos) formatErr(msg, where string) error {
	return &pgerror.Error{Code: pgerror.CodeBadCopyFileFormat, Message: msg, Where: where}
}

// wrap gives err (a value's or a row's error, or the client's CopyFail)
// the context where: its code and message stay. where "" is the line.
func (p *copyPos) wrap(err error, where string) error {
	if where == "" {
		where = p.where("", "", false, nil)
	}
	code := pgerror.Code(err)
	var pe *pgerror.Error
	if errors.As(err, &pe) {
		c := *pe
		if c.Where == "" {
			c.Where = where
		}
		return &c
	}
	return &pgerror.Error{Code: code, Message: err.Error(), Where: where}
}

func readBinary(r *bufio.Reader, cols []plantree.MsgCol, pos *copyPos, add func([]any) error) error {
	// Header errors have no line: PostgreSQL reads the header before its
	// error context is set up.
	sig := make([]byte, len(pgcopySig))
	if _, err := io.ReadFull(r, sig); err != nil || string(sig) != string(pgcopySig) {
		if err != nil {
			if e := eofErr(err, nil); e != nil {
				return e
			}
		}
		return pos.formatErr("COPY file signature not recognized", "")
	}
	var b4 [4]byte
	if _, err := io.ReadFull(r, b4[:]); err != nil {
		return eofErr(err, pos.formatErr("invalid COPY file header (missing flags)", ""))
	}
	if flags := binary.BigEndian.Uint32(b4[:]); flags&(1<<16) != 0 {
		return pos.formatErr("invalid COPY file header (WITH OIDS)", "")
	} else if flags&^(1<<16)>>16 != 0 {
		return pos.formatErr("unrecognized critical flags in COPY file header", "")
	}
	if _, err := io.ReadFull(r, b4[:]); err != nil {
		return eofErr(err, pos.formatErr("invalid COPY file header (missing length)", ""))
	}
	ext := int32(binary.BigEndian.Uint32(b4[:]))
	if ext < 0 {
		return pos.formatErr("invalid COPY file header (bad length)", "")
	}
	if _, err := r.Discard(int(ext)); err != nil {
		return eofErr(err, pos.formatErr("invalid COPY file header (wrong length)", ""))
	}
	vals := make([]any, len(cols))
	var fields fieldArena
	for {
		pos.line++
		var b2 [2]byte
		if _, err := io.ReadFull(r, b2[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return eofErr(err, pos.formatErr("unexpected EOF in COPY data", pos.where("", "", false, nil)))
		}
		n := int16(binary.BigEndian.Uint16(b2[:]))
		if n == -1 {
			return nil
		}
		if int(n) != len(cols) {
			return pos.formatErr("row field count is "+strconv.Itoa(int(n))+", expected "+strconv.Itoa(len(cols)), pos.where("", "", false, nil))
		}
		for i, c := range cols {
			name := plantree.MsgColumns[c].Name
			if _, err := io.ReadFull(r, b4[:]); err != nil {
				return eofErr(err, pos.formatErr("unexpected EOF in COPY data", pos.where(name, "", false, nil)))
			}
			l := int32(binary.BigEndian.Uint32(b4[:]))
			if l == -1 {
				vals[i] = nil
				continue
			}
			if l < -1 {
				return pos.formatErr("invalid field size", pos.where(name, "", false, nil))
			}
			if l > topicstore.MaxMessageSize+1<<20 {
				return pgerror.Newf(pgerror.CodeProgramLimitExceeded, "COPY binary: field of %d bytes is too large", l)
			}
			buf := fields.take(int(l))
			if _, err := io.ReadFull(r, buf); err != nil {
				return eofErr(err, pos.formatErr("unexpected EOF in COPY data", pos.where(name, "", false, nil)))
			}
			v, err := values.ParseBinary(buf, plantree.MsgColumns[c].Type)
			if err != nil {
				return pos.wrap(err, pos.where(name, "", false, nil))
			}
			vals[i] = v
		}
		if err := add(vals); err != nil {
			return err
		}
	}
}

// eofErr is err when it carries a SQLSTATE (the client's CopyFail, a lost
// connection), else def.
func eofErr(err error, def error) error {
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		return err
	}
	return def
}

// fieldArena hands out the byte slices of COPY binary fields from shared
// chunks: one allocation per 64 KiB of small fields instead of one per
// field. The slices stay referenced by the messages built from them.
type fieldArena struct{ buf []byte }

func (a *fieldArena) take(n int) []byte {
	if n > 8<<10 {
		return make([]byte, n)
	}
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, 64<<10)
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start+n : start+n]
}
