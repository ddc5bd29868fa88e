package copyio

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"topicgate/planner/plantree"
	"topicgate/sql/values"
)

// readText reads the text format; a date or timestamp of numeric fields
// reads in order, the session's DateStyle order, as a literal does.
func readText(r *bufio.Reader, p *plantree.CopyPlan, order values.DateOrder, pos *copyPos, add func([]any) error) error {
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

// readCSV reads the csv format; dates read as readText's do.
func readCSV(r *bufio.Reader, p *plantree.CopyPlan, order values.DateOrder, pos *copyPos, add func([]any) error) error {
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
