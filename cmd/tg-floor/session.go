package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// state is what the checking queries need: the messages stored since the
// last DROP, and the producers' stored seqnos; and the queue workload's
// messages (queue.go).
type state struct {
	log   interface{ write(msgs [][]byte) } // returns once msgs are durable
	queue queue
	tail  tail

	mu     sync.Mutex
	tables map[string]*table // by name, since the last DROP
	pairs  []pair
	last   map[string]int64
}

// table is what a checking query of one topic needs: how many messages
// it holds, and the bodies of those a transaction published (rpw's
// output, read back whole).
type table struct {
	stored int64
	bodies [][]byte
}

// table returns the named table's state, created on first use; st.mu is
// held.
func (st *state) table(name string) *table {
	if st.tables == nil {
		st.tables = map[string]*table{}
	}
	t := st.tables[name]
	if t == nil {
		t = &table{}
		st.tables[name] = t
	}
	return t
}

// session is one connection's state between statements.
type session struct {
	acks    [][]byte // the pipeline's acknowledgements, made durable at Sync
	claimed int      // the partition it reads as a streaming consumer, or -1
	rowBuf  []byte   // a read's rows, encoded
	tx      *txn     // the open transaction (BEGIN ... COMMIT), or nil
}

// txn is an open transaction (txn.go).
type txn struct {
	from   int      // the read partition's position at its first read, or -1
	pos    []byte   // the position record a read left, written at COMMIT
	table  string   // where the staged bodies go
	staged [][]byte // INSERTed bodies, published at COMMIT
}

// status is the session's ReadyForQuery status: in a transaction or idle.
func (s *session) status() byte {
	if s.tx != nil {
		return 'T'
	}
	return 'I'
}

type pair struct {
	producer string
	seqno    int64
}

// stmt is a prepared statement: an INSERT (cols: its column list), a
// SELECT (cols: its result columns; consumer and limit for a shared
// consumer's read) or a DELETE (an acknowledgement), and its parameters'
// types.
type stmt struct {
	table    string // the topic it names
	insert   bool
	del      bool
	consumer bool
	limit    int
	wait     time.Duration // a streaming consumer's read's WAIT, or 0
	cols     []string
	params   []uint32
}

// portal is a bound statement.
type portal struct {
	stmt
	args    [][]byte
	formats []int16
}

// Type OIDs of the columns the bench names.
const (
	oidInt8  = 20
	oidText  = 25
	oidBytea = 17
)

func oidOf(col string) uint32 {
	switch col {
	case "partition", "offset", "seqno":
		return oidInt8
	case "data":
		return oidBytea
	}
	return oidText
}

func parse(query string) stmt {
	q := strings.TrimSpace(query)
	upper := strings.ToUpper(q)
	s := stmt{table: tableName(q)}
	switch {
	case strings.HasPrefix(upper, "INSERT"):
		s.insert = true
		if i, j := strings.Index(q, "("), strings.Index(q, ")"); i >= 0 && j > i {
			s.cols = splitCols(q[i+1 : j])
		}
		n := strings.Count(q, "$")
		for i := 0; i < n && len(s.cols) > 0; i++ {
			s.params = append(s.params, oidOf(s.cols[i%len(s.cols)]))
		}
	case strings.HasPrefix(upper, "SELECT"):
		if j := strings.Index(upper, " FROM "); j > 0 {
			s.cols = splitCols(q[len("SELECT"):j])
		}
		if strings.Contains(upper, "WITH (CONSUMER") {
			s.consumer = true
			if i := strings.Index(upper, " LIMIT "); i > 0 {
				s.limit, _ = strconv.Atoi(strings.Fields(q[i+len(" LIMIT "):])[0])
			}
			if i := strings.Index(upper, "WAIT = '"); i > 0 {
				v, _, _ := strings.Cut(q[i+len("WAIT = '"):], "'")
				s.wait, _ = time.ParseDuration(v)
			}
		}
	case strings.HasPrefix(upper, "DELETE"):
		s.del = true
		s.params = []uint32{oidInt8, oidInt8Array}
	}
	return s
}

// tableName is the topic a statement names: the word after INTO, FROM or
// COPY, unquoted.
func tableName(q string) string {
	words := strings.Fields(q)
	for i, w := range words[:max(len(words)-1, 0)] {
		switch strings.ToUpper(w) {
		case "INTO", "FROM", "COPY":
			name, _, _ := strings.Cut(words[i+1], "(")
			return strings.Trim(name, `"`)
		}
	}
	return ""
}

// copyArgs copies a Bind's parameters into one buffer.
func copyArgs(params [][]byte) [][]byte {
	n := 0
	for _, a := range params {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(params))
	for i, a := range params {
		if a != nil {
			buf = append(buf, a...)
			out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
		}
	}
	return out
}

func splitCols(list string) []string {
	var cols []string
	for _, c := range strings.Split(list, ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(c), `"`))
	}
	return cols
}

func (s stmt) rowDescription(formats []int16) pgproto3.BackendMessage {
	if s.insert || s.del || len(s.cols) == 0 {
		return &pgproto3.NoData{}
	}
	rd := &pgproto3.RowDescription{}
	for i, c := range s.cols {
		f := pgproto3.FieldDescription{Name: []byte(c), DataTypeOID: oidOf(c), DataTypeSize: -1, TypeModifier: -1}
		if f.DataTypeOID == oidInt8 {
			f.DataTypeSize = 8
		}
		f.Format = format(formats, i)
		rd.Fields = append(rd.Fields, f)
	}
	return rd
}

// format is column i's format under a Bind's result format codes.
func format(formats []int16, i int) int16 {
	switch {
	case len(formats) == 0:
		return 0
	case len(formats) == 1:
		return formats[0]
	case i < len(formats):
		return formats[i]
	}
	return 0
}

func serve(c net.Conn, st *state) {
	defer c.Close()
	be := pgproto3.NewBackend(c, c)
	if !startup(c, be) {
		return
	}
	stmts := map[string]stmt{}
	var p portal
	ss := &session{claimed: -1}
	defer func() {
		st.txnStatement("ROLLBACK", ss) // an open transaction ends with the session
		st.queue.unclaim(ss.claimed)
	}()
	for {
		m, err := be.Receive()
		if err != nil {
			return
		}
		switch m := m.(type) {
		case *pgproto3.Query:
			st.simple(be, m.String, ss)
			be.Send(&pgproto3.ReadyForQuery{TxStatus: ss.status()})
			if be.Flush() != nil {
				return
			}
		case *pgproto3.Parse:
			stmts[m.Name] = parse(m.Query)
			be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Describe:
			if m.ObjectType == 'P' {
				be.Send(p.rowDescription(p.formats))
				continue
			}
			s := stmts[m.Name]
			be.Send(&pgproto3.ParameterDescription{ParameterOIDs: s.params})
			be.Send(s.rowDescription(nil))
		case *pgproto3.Bind:
			// Copied: a Receive's message is only valid until the next
			// Receive, and Execute comes in another.
			p = portal{stmt: stmts[m.PreparedStatement], args: copyArgs(m.Parameters), formats: slices.Clone(m.ResultFormatCodes)}
			be.Send(&pgproto3.BindComplete{})
		case *pgproto3.Execute:
			switch {
			case p.insert && ss.tx != nil:
				n := ss.tx.stage(p)
				be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "INSERT 0 %d", n)})
			case p.insert:
				n := st.insert(p)
				be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("INSERT 0 %d", n))})
			case p.del:
				var n int
				if ss.acks, n, err = ack(p, ss.acks); err != nil {
					be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "22P03", Message: err.Error()})
					continue
				}
				be.Send(&pgproto3.CommandComplete{CommandTag: fmt.Appendf(nil, "DELETE %d", n)})
			case p.consumer && st.queue.shared:
				st.acquire(be, p)
			case p.consumer && p.wait > 0:
				if st.waitRead(c, be, p, ss) != nil {
					return
				}
			case p.consumer:
				if st.consumeRead(c, be, p, ss) != nil {
					return
				}
			default:
				st.selectRows(be, p)
			}
		case *pgproto3.Sync:
			if len(ss.acks) > 0 {
				st.log.write(ss.acks)
				ss.acks = nil
			}
			be.Send(&pgproto3.ReadyForQuery{TxStatus: ss.status()})
			if be.Flush() != nil {
				return
			}
		case *pgproto3.Terminate:
			return
		}
	}
}

// insert stores the portal's rows (a producer's seqno at most once) and
// returns how many it stored, once they are synced.
func (st *state) insert(p portal) int {
	width := len(p.cols)
	if width == 0 {
		return 0
	}
	prod, seq := -1, -1
	for i, c := range p.cols {
		switch c {
		case "producer_id":
			prod = i
		case "seqno":
			seq = i
		}
	}
	var msgs [][]byte
	st.mu.Lock()
	for r := 0; r+width <= len(p.args); r += width {
		row := p.args[r : r+width]
		if prod >= 0 && seq >= 0 && len(row[seq]) == 8 {
			producer, seqno := string(row[prod]), int64(binary.BigEndian.Uint64(row[seq]))
			if seqno <= st.last[producer] {
				continue // a duplicate: acknowledged, not stored
			}
			st.last[producer] = seqno
			st.pairs = append(st.pairs, pair{producer, seqno})
		}
		msgs = append(msgs, row[width-1]) // the data column, last in the bench's lists
	}
	st.table(p.table).stored += int64(len(msgs))
	st.mu.Unlock()
	if len(msgs) > 0 {
		st.log.write(msgs)
		st.tail.appended(p.table, msgs)
	}
	return len(msgs)
}

// selectRows answers a checking query: (producer_id, seqno) pairs, or a
// (partition, offset) row per stored message.
func (st *state) selectRows(be *pgproto3.Backend, p portal) {
	st.mu.Lock()
	t := st.table(p.table)
	stored, bodies, pairs := t.stored, t.bodies, st.pairs
	st.mu.Unlock()
	n := int64(0)
	if len(p.cols) == 1 && p.cols[0] == "data" { // a transaction's output, read back
		for _, b := range bodies {
			be.Send(&pgproto3.DataRow{Values: [][]byte{b}})
		}
		n = int64(len(bodies))
	} else if len(p.cols) > 0 && p.cols[0] == "producer_id" {
		for _, pr := range pairs {
			be.Send(&pgproto3.DataRow{Values: [][]byte{[]byte(pr.producer), int8Value(pr.seqno, format(p.formats, 1))}})
		}
		n = int64(len(pairs))
	} else {
		for i := int64(0); i < stored; i++ {
			vals := make([][]byte, len(p.cols))
			for j, c := range p.cols {
				v := i / 4 // the offset in partition i%4
				if c == "partition" {
					v = i % 4
				}
				vals[j] = int8Value(v, format(p.formats, j))
			}
			be.Send(&pgproto3.DataRow{Values: vals})
		}
		n = stored
	}
	be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("SELECT %d", n))})
}

func int8Value(v int64, f int16) []byte {
	if f == 1 {
		return binary.BigEndian.AppendUint64(nil, uint64(v))
	}
	return strconv.AppendInt(nil, v, 10)
}

// simple answers a simple-protocol statement: a COPY FROM STDIN, a DROP
// (which forgets what was stored), or anything else with its command tag.
func (st *state) simple(be *pgproto3.Backend, q string, ss *session) {
	words := strings.Fields(strings.ToUpper(q))
	if len(words) == 0 {
		be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	switch words[0] {
	case "BEGIN", "COMMIT", "ROLLBACK":
		be.Send(&pgproto3.CommandComplete{CommandTag: []byte(st.txnStatement(words[0], ss))})
		return
	case "COPY":
		n, err := st.copyIn(be, q)
		if err != nil {
			be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "22P04", Message: err.Error()})
			return
		}
		be.Send(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("COPY %d", n))})
		return
	case "DROP":
		st.mu.Lock()
		st.tables, st.pairs, st.last = nil, nil, map[string]int64{}
		st.mu.Unlock()
		st.queue.reset()
		st.tail.reset()
	case "CREATE":
		st.tail.created(q)
		// CREATE TOPIC t (CONSUMER c [WITH (type = 'shared')]) ...
		st.queue.mu.Lock()
		st.queue.shared = strings.Contains(strings.ToLower(q), "'shared'")
		st.queue.mu.Unlock()
	}
	be.Send(&pgproto3.CommandComplete{CommandTag: []byte(strings.Join(words[:min(2, len(words))], " "))})
}

// copyIn receives a binary COPY's data, stores it as one record and
// returns its row count once it is synced.
func (st *state) copyIn(be *pgproto3.Backend, q string) (int, error) {
	cols, partCol := 1, false
	if i, j := strings.Index(q, "("), strings.Index(q, ")"); i >= 0 && j > i {
		list := splitCols(q[i+1 : j])
		cols, partCol = len(list), len(list) == 2 && list[0] == "partition"
	}
	be.Send(&pgproto3.CopyInResponse{OverallFormat: 1, ColumnFormatCodes: make([]uint16, cols)})
	if err := be.Flush(); err != nil {
		return 0, err
	}
	var data []byte
	for {
		m, err := be.Receive()
		if err != nil {
			return 0, err
		}
		switch m := m.(type) {
		case *pgproto3.CopyData:
			data = append(data, m.Data...)
		case *pgproto3.CopyFail:
			return 0, errors.New("COPY failed: " + m.Message)
		case *pgproto3.CopyDone:
			rows, err := binaryRows(data)
			if err != nil {
				return 0, err
			}
			st.mu.Lock()
			st.table(tableName(q)).stored += int64(len(rows))
			st.mu.Unlock()
			st.log.write(rows)
			if partCol { // a drain workload's prefill: (partition, data)
				for _, r := range rows {
					if len(r) < 2+4+8+4 {
						return 0, errors.New("binary COPY: short (partition, data) tuple")
					}
					st.queue.add(int(binary.BigEndian.Uint64(r[6:])), r[2+4+8+4:])
				}
			}
			return len(rows), nil
		}
	}
}

// binaryRows splits binary COPY data into its tuples: a header, the
// tuples, and a trailer that may be left out (pgx leaves it out;
// PostgreSQL takes the end of the data as its end).
func binaryRows(b []byte) ([][]byte, error) {
	const header = 11 + 4 + 4
	if len(b) < header {
		return nil, errors.New("binary COPY: short header")
	}
	b = b[header:]
	var rows [][]byte
	for len(b) > 0 {
		if len(b) < 2 {
			return nil, errors.New("binary COPY: short tuple")
		}
		tuple := b
		fields := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if fields == -1 {
			break
		}
		for range fields {
			if len(b) < 4 {
				return nil, errors.New("binary COPY: short field")
			}
			l := int32(binary.BigEndian.Uint32(b))
			b = b[4:]
			if l > 0 {
				if int(l) > len(b) {
					return nil, errors.New("binary COPY: short field")
				}
				b = b[l:]
			}
		}
		rows = append(rows, tuple[:len(tuple)-len(b)])
	}
	return rows, nil
}

// startup answers the startup exchange (refusing SSL) and reports whether
// the session may go on.
func startup(c net.Conn, be *pgproto3.Backend) bool {
	for {
		m, err := be.ReceiveStartupMessage()
		if err != nil {
			return false
		}
		switch m.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := c.Write([]byte{'N'}); err != nil {
				return false
			}
		case *pgproto3.StartupMessage:
			be.Send(&pgproto3.AuthenticationOk{})
			for _, kv := range [][2]string{{"server_version", "15.0"}, {"client_encoding", "UTF8"}, {"standard_conforming_strings", "on"}} {
				be.Send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
			}
			be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			return be.Flush() == nil
		default:
			return false
		}
	}
}
