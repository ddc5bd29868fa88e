package wire

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

func TestPreparedBinaryParams(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)
	ts := time.Date(2026, 1, 2, 3, 4, 5, 678000, time.UTC)
	q := "ECHO $1::int8, $2::bytea, $3::text, $4::timestamptz, $5::int8[], $6::bool, $7::float8, $8::jsonb, $9::interval, $10::int2, $11::int4, $12::text[], $13::unknown"
	var (
		i8   int64
		by   []byte
		tx   string
		tz   time.Time
		arr  []int64
		b    bool
		f8   float64
		js   map[string]any
		iv   pgtype.Interval
		i2   int16
		i4   int32
		tarr []string
		unk  string
	)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		err := c.QueryRow(ctx, q, mode, int64(-42), []byte{0, 0xff}, "héllo", ts, []int64{3, 1, 2}, true, 2.5,
			map[string]any{"k": "v"}, 90*time.Second, int16(7), int32(-9), []string{"a", "b c"}, "raw").
			Scan(&i8, &by, &tx, &tz, &arr, &b, &f8, &js, &iv, &i2, &i4, &tarr, &unk)
		require.NoError(t, err, mode)
		require.Equal(t, int64(-42), i8)
		require.Equal(t, []byte{0, 0xff}, by)
		require.Equal(t, "héllo", tx)
		require.True(t, ts.Equal(tz), tz)
		require.Equal(t, []int64{3, 1, 2}, arr)
		require.True(t, b)
		require.Equal(t, 2.5, f8)
		require.Equal(t, map[string]any{"k": "v"}, js)
		require.Equal(t, int64(90e6), iv.Microseconds)
		require.Equal(t, int16(7), i2)
		require.Equal(t, int32(-9), i4)
		require.Equal(t, []string{"a", "b c"}, tarr)
		require.Equal(t, "raw", unk)
	}
}

var typesText = []string{"t", "-7", "123456", "3.25", "-12345.678900", "héllo", `\x0001fe`, `{"k": "v"}`,
	"2026-11-29 20:26:20.123456+00", "2026-11-29 20:26:20.123456", "1 day 02:00:00", "{1,-2,3}",
	`{a,"b c","q\"x",""}`, "{t,f}", "{4,5}", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "1.5", "[1,2]"}

func TestTypesTextAndBinary(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)

	// Text results, raw.
	res := c.PgConn().ExecParams(ctx, "TYPES", nil, nil, nil, nil).Read()
	require.NoError(t, res.Err)
	require.Len(t, res.Rows, 1)
	for i, v := range res.Rows[0] {
		require.Equal(t, typesText[i], string(v), typesCols[i].Name)
	}
	// Binary results, decoded by pgx; and text results decoded by pgx.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var (
			b   bool
			i2  int16
			i4  int32
			f8  float64
			num pgtype.Numeric
			txt string
			by  []byte
			j   map[string]any
			ts  time.Time
			tsn time.Time
			iv  pgtype.Interval
			a8  []int64
			at  []string
			ab  []bool
			a4  []int32
			u   string
			f4  float32
			js  []any
		)
		err := c.QueryRow(ctx, "TYPES", mode).Scan(&b, &i2, &i4, &f8, &num, &txt, &by, &j, &ts, &tsn, &iv, &a8, &at, &ab, &a4, &u, &f4, &js)
		require.NoError(t, err, mode)
		require.True(t, b)
		require.Equal(t, int16(-7), i2)
		require.Equal(t, int32(123456), i4)
		require.Equal(t, 3.25, f8)
		nv, err := num.Value()
		require.NoError(t, err)
		require.Equal(t, "-12345.678900", nv)
		require.Equal(t, "héllo", txt)
		require.Equal(t, []byte{0, 1, 0xfe}, by)
		require.Equal(t, map[string]any{"k": "v"}, j)
		require.True(t, typesTime.Equal(ts), ts)
		require.Equal(t, typesTime, tsn.UTC())
		require.Equal(t, pgtype.Interval{Days: 1, Microseconds: 2 * 3600e6, Valid: true}, iv)
		require.Equal(t, []int64{1, -2, 3}, a8)
		require.Equal(t, []string{"a", "b c", `q"x`, ""}, at)
		require.Equal(t, []bool{true, false}, ab)
		require.Equal(t, []int32{4, 5}, a4)
		require.Equal(t, "6ba7b810-9dad-11d1-80b4-00c04fd430c8", u)
		require.Equal(t, float32(1.5), f4)
		require.Equal(t, []any{float64(1), float64(2)}, js)
	}
}

func TestTextParams(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)
	q := "ECHO $1::int8, $2::bytea, $3::timestamptz, $4::interval, $5::int8[], $6::bool, $7::jsonb, $8::numeric, $9::timestamp, $10::bytea"
	params := [][]byte{[]byte(" 42 "), []byte(`\x00ff`), []byte("2026-01-02 04:04:05.5+01"), []byte("1 day 30 seconds"),
		[]byte("{1, 2,3}"), []byte("yes"), []byte(`{"a":1}`), []byte("1.50"), []byte("2026-01-02T03:04:05"), []byte(`a\\b\001`)}
	res := c.PgConn().ExecParams(ctx, q, params, nil, nil, nil).Read()
	require.NoError(t, res.Err)
	want := []string{"42", `\x00ff`, "2026-01-02 03:04:05.5+00", "1 day 00:00:30", "{1,2,3}", "t", `{"a":1}`, "1.50", "2026-01-02 03:04:05", `\x615c6201`}
	for i, v := range res.Rows[0] {
		require.Equal(t, want[i], string(v), i)
	}
	// Bad text and binary parameters.
	res = c.PgConn().ExecParams(ctx, "ECHO $1::int8", [][]byte{[]byte("abc")}, nil, nil, nil).Read()
	require.Equal(t, "22P02", pgCode(res.Err))
	require.Equal(t, "unnamed portal parameter $1 = '...'", pgWhere(res.Err))
	// A binary value too short is a protocol error in PostgreSQL.
	res = c.PgConn().ExecParams(ctx, "ECHO $1::text, $2::int8", [][]byte{[]byte("x"), {1, 2, 3}}, nil, []int16{1}, nil).Read()
	require.Equal(t, "08P01", pgCode(res.Err))
	require.Equal(t, "unnamed portal parameter $2", pgWhere(res.Err))
	res = c.PgConn().ExecParams(ctx, "ECHO $1::int2", [][]byte{{1, 2, 3}}, nil, []int16{1}, nil).Read()
	require.Equal(t, "22P03", pgCode(res.Err))
	require.ErrorContains(t, res.Err, "incorrect binary data format in bind parameter 1")
	res = c.PgConn().ExecParams(ctx, "ECHO $1::int2", [][]byte{[]byte("70000")}, nil, nil, nil).Read()
	require.Equal(t, "22003", pgCode(res.Err))
	res = c.PgConn().ExecParams(ctx, "ECHO $1::int8[]", [][]byte{{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 9}}, nil, []int16{1}, nil).Read()
	require.Equal(t, "22P03", pgCode(res.Err))
	// NULL parameter.
	res = c.PgConn().ExecParams(ctx, "ECHO $1::int8", [][]byte{nil}, nil, nil, []int16{1}).Read()
	require.NoError(t, res.Err)
	require.True(t, res.Rows[0][0] == nil)
}

// rawConn is a low-level protocol client for exact message sequences.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	f  *pgproto3.Frontend
}

func rawConnect(t testing.TB, addr string) *rawConn {
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	require.NoError(t, nc.SetDeadline(time.Now().Add(20*time.Second)))
	r := &rawConn{t: t, nc: nc, f: pgproto3.NewFrontend(nc, nc)}
	r.f.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u", "database": "db"}})
	require.NoError(t, r.f.Flush())
	r.expect("AuthenticationOk")
	for {
		msg, err := r.f.Receive()
		require.NoError(t, err)
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return r
		}
	}
}

func (r *rawConn) send(msgs ...pgproto3.FrontendMessage) {
	for _, m := range msgs {
		r.f.Send(m)
	}
	require.NoError(r.t, r.f.Flush())
}

// expect receives one message per name (the type name without package,
// with "Error:CODE" for an ErrorResponse and "RFQ:S" for ReadyForQuery).
func (r *rawConn) expect(names ...string) []pgproto3.BackendMessage {
	r.t.Helper()
	var got []pgproto3.BackendMessage
	for _, want := range names {
		msg, err := r.f.Receive()
		require.NoError(r.t, err, "waiting for ", want)
		name := strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3.")
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			name = "Error:" + m.Code
		case *pgproto3.ReadyForQuery:
			name = "RFQ:" + string(m.TxStatus)
		case *pgproto3.DataRow:
			m2 := *m
			m2.Values = append([][]byte(nil), m.Values...)
			msg = &m2
		}
		require.Equal(r.t, want, name)
		got = append(got, msg)
	}
	return got
}

func TestRowLimitPortal(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	r := rawConnect(t, addr)
	r.send(&pgproto3.Parse{Query: "SELECT 5"}, &pgproto3.Bind{ResultFormatCodes: []int16{1, 0}},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Sync{})
	msgs := r.expect("ParseComplete", "BindComplete", "RowDescription", "DataRow", "DataRow", "PortalSuspended",
		"DataRow", "DataRow", "PortalSuspended", "DataRow", "CommandComplete", "RFQ:I")
	rd := msgs[2].(*pgproto3.RowDescription)
	require.Equal(t, int16(1), rd.Fields[0].Format)
	require.Equal(t, int16(0), rd.Fields[1].Format)
	require.Equal(t, int16(8), rd.Fields[0].DataTypeSize)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 5}, msgs[9].(*pgproto3.DataRow).Values[0])
	require.Equal(t, "row 5", string(msgs[9].(*pgproto3.DataRow).Values[1]))
	// The portal is gone after Sync.
	r.send(&pgproto3.Execute{}, &pgproto3.Sync{})
	r.expect("Error:34000", "RFQ:I")
}

func TestFlushWithoutSync(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	r := rawConnect(t, addr)
	r.send(&pgproto3.Parse{Name: "s", Query: "SELECT 3"}, &pgproto3.Bind{PreparedStatement: "s"}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Flush{})
	r.expect("ParseComplete", "BindComplete", "DataRow", "PortalSuspended")
	r.send(&pgproto3.Execute{}, &pgproto3.Flush{})
	r.expect("DataRow", "DataRow", "CommandComplete")
	r.send(&pgproto3.Sync{})
	r.expect("RFQ:I")
}

func TestPipelineDiscardUntilSync(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	r := rawConnect(t, addr)
	r.send(&pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "ERR 22012"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "SELECT 2"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Query{String: "SELECT 1"},
		&pgproto3.Sync{},
		&pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	r.expect("ParseComplete", "BindComplete", "DataRow", "CommandComplete",
		"ParseComplete", "BindComplete", "Error:22012", "RFQ:I",
		"ParseComplete", "BindComplete", "DataRow", "CommandComplete", "RFQ:I")

	// pgx batch: the statement after the failing one is not run.
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)
	b := &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("ERR 22012")
	b.Queue("SELECT 2")
	br := c.SendBatch(ctx, b)
	_, err := br.Exec()
	require.NoError(t, err)
	_, err = br.Exec()
	require.Equal(t, "22012", pgCode(err))
	_, err = br.Exec()
	require.Error(t, err)
	br.Close()
	var n int64
	require.NoError(t, c.QueryRow(ctx, "SELECT 1").Scan(&n, new(string)))
	require.Equal(t, int64(1), n)
}

func TestExtendedErrors(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	r := rawConnect(t, addr)
	r.send(&pgproto3.Parse{Name: "s1", Query: "SELECT 1"}, &pgproto3.Parse{Name: "s1", Query: "SELECT 1"}, &pgproto3.Sync{})
	r.expect("ParseComplete", "Error:42P05", "RFQ:I")
	r.send(&pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Sync{})
	r.expect("Error:26000", "RFQ:I")
	r.send(&pgproto3.Describe{ObjectType: 'P', Name: "nope"}, &pgproto3.Sync{})
	r.expect("Error:34000", "RFQ:I")
	r.send(&pgproto3.Parse{Query: "SELECT 1; SELECT 2"}, &pgproto3.Sync{})
	r.expect("Error:42601", "RFQ:I")
	r.send(&pgproto3.Parse{Query: "PARSEERR"}, &pgproto3.Sync{})
	r.expect("Error:42601", "RFQ:I")
	r.send(&pgproto3.Parse{Name: "e", Query: "ECHO $1::int8, $2::text"}, &pgproto3.Describe{ObjectType: 'S', Name: "e"},
		&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("1")}}, &pgproto3.Sync{})
	msgs := r.expect("ParseComplete", "ParameterDescription", "RowDescription", "Error:08P01", "RFQ:I")
	require.Equal(t, []uint32{OIDInt8, OIDText}, msgs[1].(*pgproto3.ParameterDescription).ParameterOIDs)
	r.send(&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("1"), []byte("x")}, ResultFormatCodes: []int16{1, 1, 1}}, &pgproto3.Sync{})
	r.expect("Error:08P01", "RFQ:I")
	r.send(&pgproto3.Close{ObjectType: 'S', Name: "e"}, &pgproto3.Bind{PreparedStatement: "e"}, &pgproto3.Sync{})
	r.expect("CloseComplete", "Error:26000", "RFQ:I")
	// Named portals, a statement without rows, an empty query.
	r.send(&pgproto3.Parse{Name: "b", Query: "BEGIN"}, &pgproto3.Bind{PreparedStatement: "b", DestinationPortal: "p"},
		&pgproto3.Describe{ObjectType: 'S', Name: "b"}, &pgproto3.Describe{ObjectType: 'P', Name: "p"}, &pgproto3.Execute{Portal: "p"},
		&pgproto3.Parse{Query: ""}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	r.expect("ParseComplete", "BindComplete", "ParameterDescription", "NoData", "NoData", "CommandComplete",
		"ParseComplete", "BindComplete", "NoData", "EmptyQueryResponse", "RFQ:T")
	// In a transaction the named portal survives Sync; duplicate -> 42P03.
	r.send(&pgproto3.Bind{PreparedStatement: "b", DestinationPortal: "p"}, &pgproto3.Sync{})
	r.expect("Error:42P03", "RFQ:T")
	r.send(&pgproto3.Close{ObjectType: 'P', Name: "p"}, &pgproto3.Sync{})
	r.expect("CloseComplete", "RFQ:T")
	// Simple query with an empty string.
	r.send(&pgproto3.Query{String: ""})
	r.expect("EmptyQueryResponse", "RFQ:T")
	r.send(&pgproto3.Terminate{})
	_, err := r.f.Receive()
	require.Error(t, err)
}
