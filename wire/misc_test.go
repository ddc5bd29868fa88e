package wire

import (
	"encoding/binary"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestMaxMessageSize(t *testing.T) {
	_, addr := startServer(t, Config{MaxMessageSize: 1024}, &fakeHandler{})
	r := rawConnect(t, addr)
	r.send(&pgproto3.Query{String: "SELECT 1; -- " + strings.Repeat("x", 900)})
	r.expect("RowDescription", "DataRow", "CommandComplete", "RFQ:I")
	r.send(&pgproto3.Query{String: "SELECT 1; -- " + strings.Repeat("x", 2000)})
	msgs := r.expect("Error:54000")
	require.Equal(t, "FATAL", msgs[0].(*pgproto3.ErrorResponse).Severity)
	_, err := r.f.Receive()
	require.Error(t, err)
}

// In the simple protocol RowDescription goes out with the first row or the
// CommandComplete: an error before any row comes without one, as
// PostgreSQL's errors at plan time do.
func TestLazyRowDescription(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	r := rawConnect(t, addr)
	r.send(&pgproto3.Query{String: "SELECT 0 FAIL"})
	r.expect("Error:22012", "RFQ:I")
	r.send(&pgproto3.Query{String: "SELECT 1 FAIL"})
	r.expect("RowDescription", "DataRow", "Error:22012", "RFQ:I")
	r.send(&pgproto3.Query{String: "SELECT 0; SELECT 2"})
	r.expect("RowDescription", "CommandComplete", "RowDescription", "DataRow", "DataRow", "CommandComplete", "RFQ:I")
}

func TestProtocolGarbage(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	// What PostgreSQL does: a message type it does not know is FATAL; a
	// length below 4 closes without a word; a body that does not decode
	// is an ERROR, and the connection goes on after the Sync.
	for _, garbage := range [][]byte{
		{'Z', 0, 0, 0, 4},           // unknown message type
		{'Q', 0, 0, 0, 2},           // length below 4
		{'B', 0, 0, 0, 6, 'x', 'y'}, // malformed Bind
		{'D', 0, 0, 0, 6, 'Q', 0},   // bad Describe subtype
		{'E', 0, 0, 0, 5, 0},        // truncated Execute
	} {
		r := rawConnect(t, addr)
		_, err := r.nc.Write(append(garbage, 'S', 0, 0, 0, 4))
		require.NoError(t, err)
		msg, err := r.f.Receive()
		if garbage[1] == 0 && garbage[4] < 4 {
			require.Error(t, err, msg)
			continue
		}
		require.NoError(t, err)
		er, ok := msg.(*pgproto3.ErrorResponse)
		require.True(t, ok, msg)
		require.Equal(t, "08P01", er.Code, garbage)
		if garbage[0] == 'Z' {
			require.Equal(t, "FATAL", er.Severity)
			require.Equal(t, "invalid frontend message type 90", er.Message)
			_, err = r.f.Receive()
			require.Error(t, err)
			continue
		}
		require.Equal(t, "ERROR", er.Severity, garbage)
		msg, err = r.f.Receive()
		require.NoError(t, err)
		_, ok = msg.(*pgproto3.ReadyForQuery)
		require.True(t, ok, msg)
	}
}

func TestStartupEdgeCases(t *testing.T) {
	_, addr := startServer(t, Config{}, &fakeHandler{})
	dial := func() net.Conn {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
		require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
		return nc
	}
	// GSSENCRequest gets 'N', then a normal startup with protocol 3.2 and a
	// _pq_ option is negotiated down to 3.0.
	nc := dial()
	_, err := nc.Write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30})
	require.NoError(t, err)
	b := make([]byte, 1)
	_, err = io.ReadFull(nc, b)
	require.NoError(t, err)
	require.Equal(t, byte('N'), b[0])
	f := pgproto3.NewFrontend(nc, nc)
	f.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32, Parameters: map[string]string{"user": "u", "_pq_.foo": "1"}})
	require.NoError(t, f.Flush())
	msg, err := f.Receive()
	require.NoError(t, err)
	npv, ok := msg.(*pgproto3.NegotiateProtocolVersion)
	require.True(t, ok, msg)
	require.Equal(t, []string{"_pq_.foo"}, npv.UnrecognizedOptions)
	msg, err = f.Receive()
	require.NoError(t, err)
	_, ok = msg.(*pgproto3.AuthenticationOk)
	require.True(t, ok, msg)

	// No user name.
	nc = dial()
	f = pgproto3.NewFrontend(nc, nc)
	f.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"database": "x"}})
	require.NoError(t, f.Flush())
	msg, err = f.Receive()
	require.NoError(t, err)
	require.Equal(t, "28000", msg.(*pgproto3.ErrorResponse).Code)

	// Protocol 2 is refused in protocol 2, as PostgreSQL does: 'E' and
	// the text up to a NUL.
	nc = dial()
	_, err = nc.Write([]byte{0, 0, 0, 8, 0, 2, 0, 0})
	require.NoError(t, err)
	v2, err := io.ReadAll(nc)
	require.NoError(t, err)
	require.Equal(t, "EFATAL:  unsupported frontend protocol 2.0: server supports 3.0 to 3.0\n\x00", string(v2))
	// An absurd length: closed without a word (PostgreSQL only logs it).
	nc = dial()
	_, err = nc.Write([]byte{0x7f, 0, 0, 0, 0, 3, 0, 0})
	require.NoError(t, err)
	n, err := nc.Read(b)
	require.Error(t, err) // EOF, or a reset for the bytes left unread
	require.Equal(t, 0, n)

	// A cancel request for an unknown process just closes.
	nc = dial()
	req := binary.BigEndian.AppendUint32(nil, 16)
	req = binary.BigEndian.AppendUint32(req, cancelRequestCode)
	req = binary.BigEndian.AppendUint32(req, 12345)
	req = binary.BigEndian.AppendUint32(req, 678)
	_, err = nc.Write(req)
	require.NoError(t, err)
	_, err = nc.Read(b)
	require.Equal(t, io.EOF, err)
}

func TestPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Fatalf("psql is required (.ci/run installs postgresql-client): %v", err)
	}
	_, addr := startServer(t, Config{Auth: "scram-sha-256", Users: map[string]string{"u": "pw"}}, &fakeHandler{})
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(psql, "-X", "-h", "127.0.0.1", "-p", port, "-U", "u", "-d", "db", "-c", "SELECT 3")
	cmd.Env = append(cmd.Environ(), "PGPASSWORD=pw", "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	s := string(out)
	for _, want := range []string{" n | ", "row 3", "(3 rows)"} {
		require.Contains(t, s, want)
	}
	// An error is printed with its SQLSTATE message and exit code 1.
	cmd = exec.Command(psql, "-X", "-h", "127.0.0.1", "-p", port, "-U", "u", "-d", "db", "-v", "ON_ERROR_STOP=1", "-c", "ERR 22012")
	cmd.Env = append(cmd.Environ(), "PGPASSWORD=pw")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "fake error 22012")
	_ = strconv.Itoa
}
