package executor

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

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

var pgcopySig = []byte("PGCOPY\n\xff\r\n\x00")

// execCopy runs COPY topic FROM STDIN through the write route
// (insert.go). A COPY is all or nothing: in autocommit it runs as one
// transaction of its own, and inside a block it stages into the block.
// Rows are handed to the transaction in slices of copySlice bytes, so a
// huge COPY spills to the store instead of being held in memory; the
// transaction's size limit applies (54000 beyond it).
func (s *Session) execCopy(ctx context.Context, p *plantree.CopyPlan, out wire.Output) (int, error) {
	return s.inWriteTxn(ctx, out, func(tx *txn.Txn, _ bool) (int, error) { return s.copyIn(ctx, tx, p, out) })
}

// copyIn reads COPY's data and stages its messages in tx, slice by slice.
func (s *Session) copyIn(ctx context.Context, tx *txn.Txn, p *plantree.CopyPlan, out wire.Output) (int, error) {
	format := p.Opts.Format
	if format == "" {
		format = "text"
	}
	var fc int16
	if format == "binary" {
		fc = 1
	}
	cr, err := out.CopyIn(fc, len(p.Cols))
	if err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(&copyReader{src: cr}, 64<<10)
	b := &msgBuilder{topic: p.Topic, cols: p.Cols, now: s.eng.opts.Clock().UTC()}
	msgs := make([]topicstore.Message, 0, 1024)
	var size int64
	pos := &copyPos{topic: p.Topic}
	total := 0
	flush := func() error {
		n, err := s.stage(tx, p.Topic, msgs, false)
		total += n
		msgs, size = make([]topicstore.Message, 0, 1024), 0
		return err
	}
	add := func(vals []any) error {
		msgs = append(msgs, topicstore.Message{})
		if err := b.build(&msgs[len(msgs)-1], vals, nil); err != nil {
			return pos.wrap(err, "")
		}
		size += int64(len(msgs[len(msgs)-1].Body)) + 64
		if size >= copySlice {
			return flush()
		}
		return nil
	}
	switch format {
	case "binary":
		err = copyBinary(r, p.Cols, pos, add)
	case "csv":
		err = copyCSV(r, p, s.settings.dateStyle.Order, pos, add)
	default:
		err = copyText(r, p, s.settings.dateStyle.Order, pos, add)
	}
	if err != nil {
		// Drain the rest so the connection stays in sync with the client.
		_, _ = io.Copy(io.Discard, r)
		switch pgerror.Code(err) {
		case pgerror.CodeQueryCanceled, "08P01":
			// The client's CopyFail, or another message during COPY:
			// PostgreSQL says at which line (binary: tuple) it came.
			err = pos.wrap(err, "")
		}
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return total, nil
}

// copySlice is how many bytes of rows a COPY collects before staging them.
const copySlice = 4 << 20

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
	w := "COPY " + p.topic + ", line " + itoa(p.line)
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

func copyBinary(r *bufio.Reader, cols []plantree.MsgCol, pos *copyPos, add func([]any) error) error {
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
			return pos.formatErr("row field count is "+itoa(int(n))+", expected "+itoa(len(cols)), pos.where("", "", false, nil))
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

// copyText reads the text format; a date or timestamp of numeric fields
// reads in order, the session's DateStyle order, as a literal does.
func copyText(r *bufio.Reader, p *plantree.CopyPlan, order values.DateOrder, pos *copyPos, add func([]any) error) error {
	delim := p.Opts.Delimiter
	if delim == "" {
		delim = "\t"
	}
	null := `\N`
	if p.Opts.NullSet {
		null = p.Opts.Null
	}
	vals := make([]any, len(p.Cols))
	first := true
	for {
		pos.line++
		line, err := r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return pos.wrap(err, "")
		}
		if line == "" && err != nil {
			return nil
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == `\.` {
			return nil
		}
		if first && p.Opts.Header {
			first = false
			continue
		}
		first = false
		fields := strings.Split(line, delim)
		if err := fieldCount(pos, p.Cols, len(fields), line); err != nil {
			return err
		}
		for i, f := range fields {
			if f == null {
				vals[i] = nil
				continue
			}
			col := plantree.MsgColumns[p.Cols[i]]
			f = unescapeCopy(f)
			v, perr := values.ParseTextIn(f, col.Type, order)
			if perr != nil {
				return pos.wrap(perr, pos.where(col.Name, f, true, nil))
			}
			vals[i] = v
		}
		if aerr := add(vals); aerr != nil {
			return aerr
		}
		if err != nil {
			return nil
		}
	}
}

// fieldCount checks the number of fields of a line, with PostgreSQL's
// errors (22P04) for too many and too few.
func fieldCount(pos *copyPos, cols []plantree.MsgCol, n int, line string) error {
	switch {
	case n > len(cols):
		return pos.formatErr("extra data after last expected column", pos.where("", "", false, &line))
	case n < len(cols):
		return pos.formatErr("missing data for column \""+plantree.MsgColumns[cols[n]].Name+"\"", pos.where("", "", false, &line))
	}
	return nil
}

// unescapeCopy undoes COPY text format backslash escapes.
func unescapeCopy(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(s) && isHex(s[i+1]) {
				i++
				v = v*16 + hexVal(s[i])
				n++
			}
			b.WriteByte(byte(v))
		default:
			if s[i] >= '0' && s[i] <= '7' {
				v, n := 0, 0
				for n < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7' {
					v = v*8 + int(s[i]-'0')
					i++
					n++
				}
				i--
				b.WriteByte(byte(v))
			} else {
				b.WriteByte(s[i])
			}
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// copyCSV reads the csv format; dates read as copyText's do.
func copyCSV(r *bufio.Reader, p *plantree.CopyPlan, order values.DateOrder, pos *copyPos, add func([]any) error) error {
	delim := byte(',')
	if p.Opts.Delimiter != "" {
		delim = p.Opts.Delimiter[0]
	}
	quote := byte('"')
	if p.Opts.Quote != "" {
		quote = p.Opts.Quote[0]
	}
	escape := quote
	if p.Opts.Escape != "" {
		escape = p.Opts.Escape[0]
	}
	null := ""
	if p.Opts.NullSet {
		null = p.Opts.Null
	}
	vals := make([]any, len(p.Cols))
	first := true
	for {
		pos.line++
		fields, quoted, raw, err := readCSVRecord(r, delim, quote, escape)
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				return nil
			case errors.Is(err, errUnterminatedCSV):
				return pos.formatErr("unterminated CSV quoted field", pos.where("", "", false, &raw))
			}
			return pos.wrap(err, "")
		}
		if len(fields) == 1 && fields[0] == `\.` && !quoted[0] {
			return nil
		}
		if first && p.Opts.Header {
			first = false
			continue
		}
		first = false
		line := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		if err := fieldCount(pos, p.Cols, len(fields), line); err != nil {
			return err
		}
		for i, f := range fields {
			if f == null && !quoted[i] {
				vals[i] = nil
				continue
			}
			col := plantree.MsgColumns[p.Cols[i]]
			v, perr := values.ParseTextIn(f, col.Type, order)
			if perr != nil {
				return pos.wrap(perr, pos.where(col.Name, f, true, nil))
			}
			vals[i] = v
		}
		if err := add(vals); err != nil {
			return err
		}
	}
}

// errUnterminatedCSV is a quoted CSV field still open at the end.
var errUnterminatedCSV = errors.New("unterminated CSV quoted field")

// readCSVRecord reads one CSV record; quoted fields may span lines. raw is
// the record's text as read, for the context of errors.
func readCSVRecord(r *bufio.Reader, delim, quote, escape byte) (fields []string, quoted []bool, raw string, err error) {
	var cur, text strings.Builder
	inQuotes, wasQuoted, any := false, false, false
	for {
		c, err := r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && any {
				if inQuotes {
					return nil, nil, text.String(), errUnterminatedCSV
				}
				return append(fields, cur.String()), append(quoted, wasQuoted), text.String(), nil
			}
			return nil, nil, text.String(), err
		}
		any = true
		text.WriteByte(c)
		switch {
		case inQuotes && c == escape && escape != quote:
			n, err := r.ReadByte()
			if err != nil {
				return nil, nil, text.String(), errUnterminatedCSV
			}
			text.WriteByte(n)
			cur.WriteByte(n)
		case inQuotes && c == quote:
			if nb, err := r.Peek(1); err == nil && nb[0] == quote && escape == quote {
				_, _ = r.ReadByte()
				text.WriteByte(quote)
				cur.WriteByte(quote)
			} else {
				inQuotes = false
			}
		case inQuotes:
			cur.WriteByte(c)
		case c == quote:
			inQuotes, wasQuoted = true, true
		case c == delim:
			fields = append(fields, cur.String())
			quoted = append(quoted, wasQuoted)
			cur.Reset()
			wasQuoted = false
		case c == '\n':
			s := strings.TrimSuffix(cur.String(), "\r")
			return append(fields, s), append(quoted, wasQuoted), text.String(), nil
		default:
			cur.WriteByte(c)
		}
	}
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
