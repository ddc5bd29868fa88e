package wire

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

func TestCopyFrom(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	c := connect(t, addr, "u", "", "")
	ctx := testCtx(t)

	// Binary COPY through pgx CopyFrom (it runs "copy ... from stdin binary").
	rows := make([][]any, 2500)
	for i := range rows {
		rows[i] = []any{int64(i)}
	}
	n, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"a"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	require.Equal(t, int64(2500), n)

	// Text COPY through pgconn.
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader("a\nb\nc\n"), "COPY t FROM STDIN")
	require.NoError(t, err)
	require.Equal(t, "COPY 3", tag.String())

	// The portal fails after the first CopyData: the rest is drained, the
	// error reported, and the connection stays usable.
	big := strings.Repeat("some line of copy data\n", 100000)
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader(big), "COPYERR")
	require.Equal(t, "22P04", pgCode(err))
	require.NoError(t, c.Ping(ctx))
}

func TestCopyRaw(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	r := rawConnect(t, addr)
	// CopyFail reaches the portal as 57014; Flush and Sync inside COPY are ignored.
	r.send(&pgproto3.Query{String: "COPY t"})
	r.expect("CopyInResponse")
	r.send(&pgproto3.CopyData{Data: []byte("x\n")}, &pgproto3.Flush{}, &pgproto3.Sync{}, &pgproto3.CopyFail{Message: "client gave up"})
	msgs := r.expect("Error:57014", "RFQ:I")
	require.Contains(t, msgs[0].(*pgproto3.ErrorResponse).Message, "client gave up")

	// COPY in the extended protocol.
	r.send(&pgproto3.Parse{Query: "COPY t"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Flush{})
	r.expect("ParseComplete", "BindComplete", "CopyInResponse")
	r.send(&pgproto3.CopyData{Data: []byte("x\ny\n")}, &pgproto3.CopyDone{}, &pgproto3.Sync{})
	msgs = r.expect("CommandComplete", "RFQ:I")
	require.Equal(t, "COPY 2", string(msgs[0].(*pgproto3.CommandComplete).CommandTag))

	// CopyData outside COPY is ignored; another message inside COPY is an
	// ERROR, then FATAL: the framing is lost (as PostgreSQL does).
	r.send(&pgproto3.CopyData{Data: []byte("stray")}, &pgproto3.Query{String: "COPY t"})
	r.expect("CopyInResponse")
	r.send(&pgproto3.Query{String: "SELECT 1"})
	er := *r.expect("Error:08P01")[0].(*pgproto3.ErrorResponse) // the Frontend reuses its messages
	require.Equal(t, "unexpected message type 0x51 during COPY from stdin", er.Message)
	require.Equal(t, "ERROR", er.Severity)
	er = *r.expect("Error:08P01")[0].(*pgproto3.ErrorResponse)
	require.Equal(t, "FATAL", er.Severity)
	_, err := r.f.Receive()
	require.Error(t, err)
}
