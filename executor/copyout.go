package executor

import (
	"context"
	"encoding/binary"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql/pgerror"
	"topicgate/wire"
)

// execCopyOut runs COPY ... TO STDOUT: the rows of the plan's query, one
// CopyData message per row, in PostgreSQL's text, csv or binary COPY
// format. Values have the representations a DataRow gives them
// (wire.AppendValue). A consumer read in the query moves the consumer's
// position as the same SELECT would: in autocommit once the last row was
// flushed to the client (the portal's delivery, delivery.go).
func (s *Session) execCopyOut(ctx context.Context, ec *rowexec.EvalCtx, p *plantree.CopyOutPlan, out wire.Output) (int64, error) {
	it, err := rowexec.Run(ctx, ec, p.Select, nil)
	if err != nil {
		return 0, err
	}
	cols := wireColumns(p.Select.Cols)
	f := newCopyFormatter(p, cols)
	w, err := out.CopyOut(f.code(), len(cols))
	if err != nil {
		return 0, err
	}
	var buf []byte
	if buf = f.header(buf[:0]); len(buf) > 0 {
		if err := w.Write(buf); err != nil {
			return 0, err
		}
	}
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		r, err := it.Next(ctx)
		if err != nil {
			return n, err
		}
		if r == nil {
			break
		}
		r = r[:len(cols)] // hidden sort columns
		presentRow(r, cols, s.settings)
		if buf, err = f.row(buf[:0], r); err != nil {
			return n, err
		}
		if err := w.Write(buf); err != nil {
			return n, err
		}
		n++
	}
	if buf = f.trailer(buf[:0]); len(buf) > 0 {
		if err := w.Write(buf); err != nil {
			return n, err
		}
	}
	return n, w.Done()
}

// copyFormatter formats rows in one COPY format.
type copyFormatter struct {
	format     string // "text", "csv" or "binary"
	cols       []wire.Column
	names      []string
	delim      byte
	null       string
	quote, esc byte
	wantHeader bool
	scratch    []byte
}

func newCopyFormatter(p *plantree.CopyOutPlan, cols []wire.Column) *copyFormatter {
	o := p.Opts
	f := &copyFormatter{format: o.Format, cols: cols, wantHeader: o.Header}
	if f.format == "" {
		f.format = "text"
	}
	for _, c := range p.Select.Cols {
		f.names = append(f.names, c.Name)
	}
	switch f.format {
	case "csv":
		f.delim, f.quote, f.null = ',', '"', ""
		if o.Quote != "" {
			f.quote = o.Quote[0]
		}
		f.esc = f.quote
		if o.Escape != "" {
			f.esc = o.Escape[0]
		}
	case "text":
		f.delim, f.null = '\t', `\N`
	}
	if o.Delimiter != "" {
		f.delim = o.Delimiter[0]
	}
	if o.NullSet {
		f.null = o.Null
	}
	return f
}

func (f *copyFormatter) code() int16 {
	if f.format == "binary" {
		return 1
	}
	return 0
}

// header is what precedes the rows: the binary signature (pgcopySig, as
// copy.go reads it) or the CSV/text HEADER line.
func (f *copyFormatter) header(buf []byte) []byte {
	switch {
	case f.format == "binary":
		buf = append(buf, pgcopySig...)
		return append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // flags, header extension length
	case f.wantHeader:
		for i, name := range f.names {
			if i > 0 {
				buf = append(buf, f.delim)
			}
			if f.format == "csv" {
				buf = f.csvField(buf, []byte(name))
			} else {
				buf = f.textField(buf, []byte(name))
			}
		}
		return append(buf, '\n')
	}
	return buf
}

func (f *copyFormatter) trailer(buf []byte) []byte {
	if f.format == "binary" {
		return append(buf, 0xFF, 0xFF)
	}
	return buf
}

func (f *copyFormatter) row(buf []byte, vals []any) ([]byte, error) {
	if f.format == "binary" {
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(vals)))
	}
	for i, v := range vals {
		if f.format == "binary" {
			if v == nil {
				buf = append(buf, 0xFF, 0xFF, 0xFF, 0xFF)
				continue
			}
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			var err error
			if buf, err = wire.AppendValue(buf, f.cols[i].TypeOID, true, v); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
			continue
		}
		if i > 0 {
			buf = append(buf, f.delim)
		}
		if v == nil {
			buf = append(buf, f.null...)
			continue
		}
		var err error
		if f.scratch, err = wire.AppendValue(f.scratch[:0], f.cols[i].TypeOID, false, v); err != nil {
			return nil, err
		}
		if f.format == "csv" {
			buf = f.csvField(buf, f.scratch)
		} else {
			buf = f.textField(buf, f.scratch)
		}
	}
	if f.format != "binary" {
		buf = append(buf, '\n')
	}
	return buf, nil
}

// textField escapes a value for the text format as PostgreSQL's COPY TO
// does: backslash, the delimiter and control characters.
func (f *copyFormatter) textField(buf, v []byte) []byte {
	for _, c := range v {
		switch c {
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\v':
			buf = append(buf, '\\', 'v')
		default:
			if c == f.delim {
				buf = append(buf, '\\')
			}
			buf = append(buf, c)
		}
	}
	return buf
}

// csvField quotes a value when it holds the delimiter, the quote or a line
// break, or would read back as something else: the NULL marker, or (in a
// one-column export) the end-of-data marker \. ; quotes inside are doubled
// (or escaped with ESCAPE).
func (f *copyFormatter) csvField(buf, v []byte) []byte {
	need := string(v) == f.null || (len(f.cols) == 1 && string(v) == `\.`)
	for _, c := range v {
		if c == f.delim || c == f.quote || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return append(buf, v...)
	}
	buf = append(buf, f.quote)
	for _, c := range v {
		if c == f.quote || c == f.esc {
			buf = append(buf, f.esc)
		}
		buf = append(buf, c)
	}
	return append(buf, f.quote)
}
