package wire

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// panicRecorder is a slog handler that counts records mentioning a panic.
type panicRecorder struct{ n *atomic.Int32 }

func (p panicRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (p panicRecorder) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		p.n.Add(1)
	}
	return nil
}
func (p panicRecorder) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p panicRecorder) WithGroup(string) slog.Handler      { return p }

func encodeMsgs(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		b, _ = m.Encode(b)
	}
	return b
}

// FuzzWireDecoder feeds random bytes as a client stream after a valid
// startup: the server must neither panic nor hang.
func FuzzWireDecoder(f *testing.F) {
	f.Add(encodeMsgs(&pgproto3.Query{String: "SELECT 3"}))
	f.Add(encodeMsgs(&pgproto3.Parse{Name: "s", Query: "ECHO $1::int8, $2::bytea, $3::int8[]", ParameterOIDs: []uint32{20}},
		&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 0, 0, 0, 0, 1}, {1, 2}, {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 9}}, ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Flush{}, &pgproto3.Sync{}))
	f.Add(encodeMsgs(&pgproto3.Parse{Query: "TYPES"}, &pgproto3.Bind{ResultFormatCodes: []int16{1}}, &pgproto3.Execute{}, &pgproto3.Sync{},
		&pgproto3.Query{String: "TYPES"}))
	f.Add(encodeMsgs(&pgproto3.Query{String: "COPY t"}, &pgproto3.CopyData{Data: []byte("a\nb\n")}, &pgproto3.CopyDone{},
		&pgproto3.Query{String: "COPYERR"}, &pgproto3.CopyData{Data: []byte("a\n")}, &pgproto3.CopyData{Data: []byte("b\n")}, &pgproto3.CopyFail{Message: "x"}))
	f.Add(encodeMsgs(&pgproto3.Parse{Query: "ERR 22012"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Sync{}, &pgproto3.Terminate{}))
	f.Add(encodeMsgs(&pgproto3.Parse{Name: "e", Query: "ECHO $1::timestamptz, $2::interval, $3::numeric, $4::jsonb, $5::text[]"},
		&pgproto3.Bind{PreparedStatement: "e", Parameters: [][]byte{[]byte("2026-01-01 00:00:00+02"), []byte("1 day 01:00:00"), []byte("-1.5"), []byte(`{"a":1}`), []byte(`{a,"b",NULL}`)}},
		&pgproto3.Execute{}, &pgproto3.Sync{}))
	f.Add([]byte{'Z', 0, 0, 0, 4})
	f.Add([]byte{'Q', 0xff, 0xff, 0xff, 0xff})

	var panics atomic.Int32
	logger := slog.New(panicRecorder{&panics})
	startup := encodeMsgs(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "u"}})

	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := NewServer(Config{Logger: logger, MaxMessageSize: 1 << 16}, &fakeHandler{noHazards: true})
		if err != nil {
			t.Fatal(err)
		}
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { s.serveConn(server); close(done) }()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_ = client.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = client.Write(startup)
		_, _ = client.Write(data)
		client.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("server did not finish the connection: hang")
		}
		if n := panics.Load(); n != 0 {
			t.Fatalf("server logged %d panics", n)
		}
	})
}
