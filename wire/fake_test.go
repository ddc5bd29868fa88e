package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// fakeHandler is a tiny engine for tests. Statements (separated by ';'):
//
//	SELECT n          rows 1..n: (n int8, t text "row i")
//	SELECT n FAIL     the same rows, then fails with 22012
//	ECHO $1::type ... one row echoing the parameters with those types
//	TYPES             one row with one value of every supported type
//	ERR code          fails at Execute with SQLSTATE code
//	PARSEERR          fails at Parse with 42601
//	COPY [BINARY]     COPY FROM STDIN, counts lines (text) or tuples (binary)
//	COPYERR           reads one CopyData, then fails with 22P04
//	SLEEP             blocks until the context is canceled
//	LIVE              fails with 57014 if its context is canceled already
//	PANIC             panics
//	NOTICE            sends a notice
//	BEGIN / COMMIT    move TxStatus between 'I' and 'T'
type fakeHandler struct {
	sleeping  chan struct{} // receives when SLEEP starts, if non-nil
	noHazards bool          // fuzzing: SLEEP returns at once, PANIC does nothing
	closed    atomic.Int32
	lastInfo  atomic.Pointer[SessionInfo]
}

type fakeErr struct{ code, msg, detail, hint string }

func (e *fakeErr) Error() string       { return e.msg }
func (e *fakeErr) SQLState() string    { return e.code }
func (e *fakeErr) ErrorDetail() string { return e.detail }
func (e *fakeErr) ErrorHint() string   { return e.hint }

func (h *fakeHandler) NewSession(ctx context.Context, info SessionInfo) (Session, error) {
	if info.Database == "nodb" {
		return nil, &fakeErr{code: "3D000", msg: `database "nodb" does not exist`}
	}
	h.lastInfo.Store(&info)
	return &fakeSession{h: h, tx: 'I'}, nil
}

type fakeSession struct {
	h  *fakeHandler
	tx byte
}

func (s *fakeSession) ParameterStatus() map[string]string {
	return map[string]string{"server_version": "15.4 (topicgate fake)"}
}
func (s *fakeSession) TxStatus() byte                             { return s.tx }
func (s *fakeSession) Sync(ctx context.Context, out Output) error { return nil }
func (s *fakeSession) Close()                                     { s.h.closed.Add(1) }

var fakeTypes = map[string]uint32{
	"int8": OIDInt8, "int4": OIDInt4, "int2": OIDInt2, "bytea": OIDBytea, "text": OIDText,
	"bool": OIDBool, "float8": OIDFloat8, "jsonb": OIDJSONB, "json": OIDJSON,
	"timestamptz": OIDTimestamptz, "timestamp": OIDTimestamp, "interval": OIDInterval,
	"int8[]": OIDInt8Array, "text[]": OIDTextArray, "numeric": OIDNumeric, "unknown": 0,
	"uuid": OIDUUID, "bool[]": OIDBoolArray, "int4[]": OIDInt4Array,
}

func (s *fakeSession) Parse(ctx context.Context, query string, oids []uint32) ([]Statement, error) {
	var out []Statement
	for _, part := range strings.Split(query, ";") {
		q := strings.TrimSpace(part)
		if strings.HasPrefix(q, "--") {
			q = ""
		}
		if q == "" {
			continue
		}
		st := &fakeStmt{s: s, q: q}
		up := strings.ToUpper(q)
		switch {
		case up == "PARSEERR":
			return nil, &fakeErr{code: "42601", msg: "syntax error at or near \"PARSEERR\""}
		case strings.HasPrefix(up, "SELECT "):
			arg, fail := strings.CutSuffix(strings.TrimSpace(q[7:]), " FAIL")
			st.fail = fail
			n, err := strconv.Atoi(arg)
			if err == nil {
				st.n = n
				st.cols = []Column{{Name: "n", TypeOID: OIDInt8}, {Name: "t", TypeOID: OIDText}}
				break
			}
			// pgx CopyFrom describes "select a, b from t": int8 columns, no rows.
			sel, _, ok := strings.Cut(q[7:], " from ")
			if !ok {
				return nil, &fakeErr{code: "42601", msg: "bad SELECT"}
			}
			st.cols = []Column{}
			for _, c := range strings.Split(sel, ",") {
				st.cols = append(st.cols, Column{Name: strings.Trim(strings.TrimSpace(c), `"`), TypeOID: OIDInt8})
			}
		case strings.HasPrefix(up, "ECHO"):
			for i, f := range strings.Split(strings.TrimSpace(q[4:]), ",") {
				_, typ, _ := strings.Cut(strings.TrimSpace(f), "::")
				oid, ok := fakeTypes[typ]
				if !ok {
					return nil, &fakeErr{code: "42704", msg: "type " + typ + " does not exist"}
				}
				if oid == 0 && i < len(oids) {
					oid = oids[i]
				}
				st.params = append(st.params, oid)
				colOID := oid
				if colOID == 0 {
					colOID = OIDText
				}
				st.cols = append(st.cols, Column{Name: fmt.Sprintf("p%d", i+1), TypeOID: colOID})
			}
		case up == "TYPES":
			st.cols = typesCols
		case strings.HasPrefix(up, "COPY"), up == "NOTICE", strings.HasPrefix(up, "ERR"),
			up == "SLEEP", up == "LIVE", up == "PANIC", up == "BEGIN", up == "COMMIT", up == "COPYERR":
		default:
			return nil, &fakeErr{code: "42601", msg: fmt.Sprintf("syntax error at or near %q", q), hint: "fake engine", detail: "fake detail"}
		}
		out = append(out, st)
	}
	return out, nil
}

var typesCols = []Column{
	{Name: "b", TypeOID: OIDBool}, {Name: "i2", TypeOID: OIDInt2}, {Name: "i4", TypeOID: OIDInt4},
	{Name: "f8", TypeOID: OIDFloat8}, {Name: "num", TypeOID: OIDNumeric}, {Name: "txt", TypeOID: OIDText},
	{Name: "by", TypeOID: OIDBytea}, {Name: "j", TypeOID: OIDJSONB}, {Name: "ts", TypeOID: OIDTimestamptz},
	{Name: "tsn", TypeOID: OIDTimestamp}, {Name: "iv", TypeOID: OIDInterval}, {Name: "a8", TypeOID: OIDInt8Array},
	{Name: "at", TypeOID: OIDTextArray}, {Name: "ab", TypeOID: OIDBoolArray}, {Name: "a4", TypeOID: OIDInt4Array},
	{Name: "u", TypeOID: OIDUUID}, {Name: "f4", TypeOID: OIDFloat4}, {Name: "js", TypeOID: OIDJSON},
}

var typesTime = time.Date(2026, 11, 29, 20, 26, 20, 123456000, time.UTC)

var typesRow = []any{
	true, int64(-7), int64(123456), 3.25, "-12345.678900", "héllo", []byte{0, 1, 0xfe},
	[]byte(`{"k": "v"}`), typesTime, typesTime, Interval{Days: 1, Microseconds: 2 * 3600e6},
	[]int64{1, -2, 3}, []string{"a", "b c", `q"x`, ""}, []bool{true, false}, []int64{4, 5},
	"6ba7b810-9dad-11d1-80b4-00c04fd430c8", 1.5, `[1,2]`,
}

type fakeStmt struct {
	s      *fakeSession
	q      string
	n      int
	fail   bool // SELECT n FAIL
	params []uint32
	cols   []Column
}

func (st *fakeStmt) ParamTypes() []uint32 { return st.params }
func (st *fakeStmt) Columns() []Column    { return st.cols }
func (st *fakeStmt) Bind(ctx context.Context, params []any) (Portal, error) {
	return &fakePortal{st: st, params: params}, nil
}

type fakePortal struct {
	st     *fakeStmt
	params []any
	pos    int
}

func (p *fakePortal) Columns() []Column { return p.st.cols }
func (p *fakePortal) Close()            {}

func (p *fakePortal) Execute(ctx context.Context, out Output, maxRows int) (string, bool, error) {
	q := strings.ToUpper(p.st.q)
	h := p.st.s.h
	switch {
	case strings.HasPrefix(q, "SELECT"):
		row := make([]any, 2)
		sent := 0
		for p.pos < p.st.n {
			if maxRows > 0 && sent == maxRows {
				return "", false, nil
			}
			p.pos++
			row[0], row[1] = int64(p.pos), "row "+strconv.Itoa(p.pos)
			if err := out.WriteRow(row); err != nil {
				return "", false, err
			}
			sent++
		}
		if p.st.fail {
			return "", false, &fakeErr{code: "22012", msg: "division by zero"}
		}
		return "SELECT " + strconv.Itoa(sent), true, nil
	case strings.HasPrefix(q, "ECHO"):
		return "SELECT 1", true, out.WriteRow(p.params)
	case q == "TYPES":
		return "SELECT 1", true, out.WriteRow(typesRow)
	case strings.HasPrefix(q, "ERR"):
		code := strings.TrimSpace(p.st.q[3:])
		return "", false, &fakeErr{code: code, msg: "fake error " + code, detail: "some detail", hint: "some hint"}
	case q == "LIVE": // fails if its context was cancelled before it ran
		if ctx.Err() != nil {
			return "", false, &fakeErr{code: "57014", msg: "canceling statement due to user request"}
		}
		return "LIVE", true, nil
	case q == "SLEEP":
		if h.noHazards {
			return "SLEEP", true, nil
		}
		if h.sleeping != nil {
			h.sleeping <- struct{}{}
		}
		<-ctx.Done()
		return "", false, &fakeErr{code: "57014", msg: "canceling statement due to user request"}
	case q == "PANIC":
		if h.noHazards {
			return "PANIC", true, nil
		}
		panic("boom")
	case q == "NOTICE":
		out.Notice("01000", "hello notice")
		return "NOTICE", true, nil
	case q == "BEGIN":
		p.st.s.tx = 'T'
		return "BEGIN", true, nil
	case q == "COMMIT":
		p.st.s.tx = 'I'
		return "COMMIT", true, nil
	case q == "COPYERR":
		r, err := out.CopyIn(0, 1)
		if err != nil {
			return "", false, err
		}
		if _, err := r.Next(); err != nil {
			return "", false, err
		}
		return "", false, &fakeErr{code: "22P04", msg: "bad copy data"}
	case strings.HasPrefix(q, "COPY"):
		bin := strings.Contains(q, "BINARY")
		format := int16(0)
		if bin {
			format = 1
		}
		r, err := out.CopyIn(format, 1)
		if err != nil {
			return "", false, err
		}
		var all bytes.Buffer
		for {
			b, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", false, err
			}
			all.Write(b)
		}
		n, err := countCopy(all.Bytes(), bin)
		if err != nil {
			return "", false, err
		}
		return "COPY " + strconv.Itoa(n), true, nil
	}
	return "", false, errors.New("fake: unknown statement")
}

// countCopy counts text lines or binary tuples.
func countCopy(b []byte, bin bool) (int, error) {
	if !bin {
		return bytes.Count(b, []byte("\n")), nil
	}
	bad := &fakeErr{code: "22P04", msg: "bad binary copy"}
	if len(b) < 19 || string(b[:11]) != "PGCOPY\n\377\r\n\000" {
		return 0, bad
	}
	b = b[19:]
	n := 0
	for {
		if len(b) == 0 {
			return n, nil // pgx omits the trailer
		}
		if len(b) < 2 {
			return 0, bad
		}
		fields := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if fields == -1 {
			return n, nil
		}
		for range fields {
			if len(b) < 4 {
				return 0, bad
			}
			l := int32(binary.BigEndian.Uint32(b))
			b = b[4:]
			if l > 0 {
				if int(l) > len(b) {
					return 0, bad
				}
				b = b[l:]
			}
		}
		n++
	}
}
