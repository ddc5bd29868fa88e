package copyio

import (
	"encoding/binary"

	"topicgate/planner/plantree"
	"topicgate/wire"
)

// Encoder formats the rows of one COPY ... TO STDOUT in its format
// (text, csv or binary): values have the representations a DataRow gives
// them (wire.AppendValue), escaped or quoted as PostgreSQL's COPY TO does.
type Encoder struct {
	format     string // "text", "csv" or "binary"
	cols       []wire.Column
	names      []string
	delim      byte
	null       string
	quote, esc byte
	wantHeader bool
	scratch    []byte
}

// NewEncoder encodes the rows of p, whose columns are cols.
func NewEncoder(p *plantree.CopyOutPlan, cols []wire.Column) *Encoder {
	o := p.Opts
	f := &Encoder{format: o.Format, cols: cols, wantHeader: o.Header}
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

// Code is the format code of CopyOutResponse.
func (f *Encoder) Code() int16 { return FormatCode(f.format) }

// Header appends what precedes the rows to buf: the binary signature
// (pgcopySig, as Decoder reads it) or the CSV/text HEADER line.
func (f *Encoder) Header(buf []byte) []byte {
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

// Trailer appends what follows the rows to buf: the binary format's
// end marker.
func (f *Encoder) Trailer(buf []byte) []byte {
	if f.format == "binary" {
		return append(buf, 0xFF, 0xFF)
	}
	return buf
}

// Row appends one row of values to buf.
func (f *Encoder) Row(buf []byte, vals []any) ([]byte, error) {
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
func (f *Encoder) textField(buf, v []byte) []byte {
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
func (f *Encoder) csvField(buf, v []byte) []byte {
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
