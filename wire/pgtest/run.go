package pgtest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Target is a server a script runs against.
type Target struct {
	// Postgres is true for the reference PostgreSQL: blocks marked
	// topicgate_only are skipped, pg_only ones run, and known_diff ones
	// must match.
	Postgres bool
	// Addr is the host:port of the server; every user may connect to it
	// without a password.
	Addr string
	// AuthAddr is where "connect server=auth" goes: a server that asks
	// user AuthUser for a cleartext password (AuthPassword).
	AuthAddr string
}

// The user of "connect server=auth" and the password it has there.
const (
	AuthUser     = "pgtest_pw"
	AuthPassword = "pgtest-secret"
)

// readTimeout bounds every wait for the server: a script that waits for a
// message the server never sends fails instead of hanging.
const readTimeout = 10 * time.Second

// received is one message read, already normalised.
type received struct {
	typ  string // Go type name, "EOF" when the connection ended
	line string
	err  error // a read error other than the connection ending
}

type runner struct {
	t      testing.TB
	target Target
	nc     net.Conn
	br     *bufio.Reader // nc, read ahead only by receive's check for a protocol 2 error
	v2     bool          // nothing received yet on a raw connection: a protocol 2 error may come
	fe     *pgproto3.Frontend
	pid    uint32
	secret []byte
}

// Run runs the script at path against target. With rewrite, the expected
// output of every block target is the reference for (against PostgreSQL:
// every block it runs; against topicgate: the topicgate_only ones) is
// replaced by what the server sent and the file is written back; other
// blocks are compared, and differences fail the test.
func Run(t *testing.T, target Target, path string, rewrite bool) {
	s, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{t: t, target: target}
	defer r.close()
	if err := r.connect(nil); err != nil {
		t.Fatalf("%s: connecting: %v", path, err)
	}
	changed := false
	defer func() {
		// Also when a block failed: what came before it is recorded.
		if rewrite && changed {
			if err := s.Write(); err != nil {
				t.Error(err)
			}
		}
	}()
	for _, b := range s.Blocks {
		if !r.runs(b) {
			continue
		}
		out, err := r.run(b)
		if err != nil {
			t.Fatalf("%s: %v", b.Pos, err)
		}
		got := strings.Join(out, "\n")
		want := strings.Join(b.Output, "\n")
		item, knownDiff := b.Arg("known_diff")
		_, tgOnly := b.Arg("topicgate_only")
		switch {
		case rewrite && (target.Postgres || tgOnly):
			if got != want {
				b.Output, changed = out, true
			}
		case knownDiff && !target.Postgres:
			if got == want {
				t.Errorf("%s: known difference %q is gone: topicgate now answers as PostgreSQL does; drop known_diff=%s", b.Pos, item, item)
			} else {
				t.Logf("%s: known difference %q; topicgate sends:\n%s", b.Pos, item, got)
			}
		case got != want:
			t.Errorf("%s: %s %s:\n%s", b.Pos, b.Cmd, strings.Join(b.Input, " "), lineDiff(b.Output, out))
		}
	}
}

// runs reports whether block b is for r's target.
func (r *runner) runs(b *Block) bool {
	if _, ok := b.Arg("pg_only"); ok {
		return r.target.Postgres
	}
	if _, ok := b.Arg("topicgate_only"); ok {
		return !r.target.Postgres
	}
	return true
}

func (r *runner) close() {
	if r.nc != nil {
		r.nc.Close()
		r.nc = nil
	}
}

func (r *runner) run(b *Block) ([]string, error) {
	switch b.Cmd {
	case "connect":
		return nil, r.connect(b)
	case "send":
		return nil, r.send(b)
	case "until":
		return r.until(b)
	case "cancel":
		return r.cancel(b)
	}
	return nil, fmt.Errorf("unknown command %q", b.Cmd)
}

// connect replaces the connection. Without "raw" it also starts up as
// user postgres (or user=...) on database postgres and reads up to
// ReadyForQuery, checking nothing but that it gets there.
func (r *runner) connect(b *Block) error {
	r.close()
	addr := r.target.Addr
	user := "postgres"
	raw := false
	if b != nil {
		if v, ok := b.Arg("server"); ok {
			if v != "auth" || r.target.AuthAddr == "" {
				return fmt.Errorf("no server %q", v)
			}
			addr = r.target.AuthAddr
		}
		if v, ok := b.Arg("user"); ok {
			user = v
		}
		_, raw = b.Arg("raw")
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	r.nc = nc
	r.br = bufio.NewReader(nc)
	r.fe = pgproto3.NewFrontend(r.br, nc)
	r.pid, r.secret = 0, nil
	if raw {
		r.v2 = true
		return nil
	}
	r.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": user, "database": "postgres"}})
	if err := r.fe.Flush(); err != nil {
		return err
	}
	for {
		m := r.receive()
		switch {
		case m.err != nil:
			return m.err
		case m.typ == "EOF":
			return errors.New("connection closed during startup")
		case m.typ == "ErrorResponse":
			return fmt.Errorf("startup failed: %s", m.line)
		case m.typ == "ReadyForQuery":
			return nil
		}
	}
}

// send writes the block's messages in one write.
func (r *runner) send(b *Block) error {
	if r.nc == nil {
		return errors.New("not connected")
	}
	var buf bytes.Buffer
	fe := pgproto3.NewFrontend(bytes.NewReader(nil), &buf)
	for _, l := range b.Input {
		msg, err := frontendMessage(l)
		if err != nil {
			return err
		}
		if raw, ok := msg.(*Raw); ok {
			if err := fe.Flush(); err != nil {
				return err
			}
			enc, err := raw.encode()
			if err != nil {
				return err
			}
			buf.Write(enc)
			continue
		}
		fe.Send(msg.(pgproto3.FrontendMessage))
	}
	if err := fe.Flush(); err != nil {
		return err
	}
	_ = r.nc.SetWriteDeadline(time.Now().Add(readTimeout))
	_, err := r.nc.Write(buf.Bytes())
	return err
}

// until reads messages until each of the block's message types has come,
// in order; "EOF" waits for the server to close the connection. An
// ignore=Type,Type argument leaves those messages out of the output.
func (r *runner) until(b *Block) ([]string, error) {
	if r.nc == nil {
		return nil, errors.New("not connected")
	}
	ignore := map[string]bool{}
	if v, ok := b.Arg("ignore"); ok {
		for _, typ := range strings.Split(v, ",") {
			ignore[typ] = true
		}
	}
	var out []string
	for _, want := range b.Input {
		if want == "SSLResponse" {
			// The one-byte answer to SSLRequest or GSSENCRequest.
			_ = r.nc.SetReadDeadline(time.Now().Add(readTimeout))
			c, err := r.br.ReadByte()
			if err != nil {
				return nil, fmt.Errorf("waiting for SSLResponse: %v", err)
			}
			out = append(out, fmt.Sprintf(`{"Type":"SSLResponse","Response":%q}`, string(rune(c))))
			continue
		}
		for {
			m := r.receive()
			if m.err != nil {
				return nil, fmt.Errorf("waiting for %s after %q: %v", want, out, m.err)
			}
			if !ignore[m.typ] {
				out = append(out, m.line)
			}
			if m.typ == "EOF" {
				sortParameterStatus(out)
				return out, nil
			}
			if m.typ == want {
				break
			}
		}
	}
	sortParameterStatus(out)
	return out, nil
}

// receive reads and normalises one message, remembering BackendKeyData
// for cancel.
func (r *runner) receive() received {
	_ = r.nc.SetReadDeadline(time.Now().Add(readTimeout))
	if r.v2 {
		// PostgreSQL answers a startup packet it cannot take (a protocol
		// version it does not speak) in protocol 2: 'E', then the text of
		// the error up to a NUL, with no length word.
		r.v2 = false
		if h, err := r.br.Peek(5); err == nil && h[0] == 'E' && binary.BigEndian.Uint32(h[1:]) > 1<<24 {
			text, err := r.br.ReadString(0)
			if err != nil {
				return received{err: err}
			}
			js, _ := json.Marshal(strings.TrimRight(text[1:], "\n\x00"))
			return received{typ: "ErrorResponseV2", line: `{"Type":"ErrorResponseV2","Text":` + string(js) + `}`}
		}
	}
	msg, err := r.fe.Receive()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return received{err: fmt.Errorf("no message within %v", readTimeout)}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset") {
			return received{typ: "EOF", line: `{"Type":"EOF"}`}
		}
		return received{err: err}
	}
	if k, ok := msg.(*pgproto3.BackendKeyData); ok {
		r.pid, r.secret = k.ProcessID, append([]byte(nil), k.SecretKey...)
	}
	line, err := Normalize(msg)
	if err != nil {
		return received{err: err}
	}
	return received{typ: reflect.TypeOf(msg).Elem().Name(), line: line}
}

// cancel sends CancelRequest for the current connection, each on a new
// connection that it waits to be closed (the server has acted on it by
// then), while it reads messages as until does (the block's input lists
// their types): a cancel that arrives before the statement started is
// ignored by the server, so it is sent again, until the reading is done.
// With bad_key it sends one CancelRequest with a wrong secret, waits for
// that connection to close, and reads nothing.
func (r *runner) cancel(b *Block) ([]string, error) {
	if r.pid == 0 {
		return nil, errors.New("cancel: no BackendKeyData on this connection")
	}
	// Copies: the reading goroutine below may update r's.
	addr, pid, secret := r.target.Addr, r.pid, append([]byte(nil), r.secret...)
	send := func(secret []byte) error {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		defer nc.Close()
		buf, err := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret}).Encode(nil)
		if err != nil {
			return err
		}
		_ = nc.SetDeadline(time.Now().Add(readTimeout))
		if _, err := nc.Write(buf); err != nil {
			return err
		}
		n, err := nc.Read(make([]byte, 1))
		if n > 0 {
			return errors.New("cancel: the server answered a CancelRequest")
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return errors.New("cancel: the server did not close the CancelRequest's connection")
		}
		return nil
	}
	if _, ok := b.Arg("bad_key"); ok {
		bad := append([]byte(nil), secret...)
		for i := range bad {
			bad[i] ^= 0x5a
		}
		return nil, send(bad)
	}
	type result struct {
		out []string
		err error
	}
	got := make(chan result, 1)
	go func() {
		out, err := r.until(b)
		got <- result{out, err}
	}()
	for {
		if err := send(secret); err != nil {
			res := <-got
			if res.err == nil {
				res.err = err
			}
			return nil, res.err
		}
		select {
		case res := <-got:
			return res.out, res.err
		case <-time.After(20 * time.Millisecond):
			// Not done yet: perhaps the statement had not started. Again.
		}
	}
}

// lineDiff shows expected and actual lines, marking those that differ.
func lineDiff(want, got []string) string {
	var sb strings.Builder
	n := max(len(want), len(got))
	for i := 0; i < n; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w == g {
			fmt.Fprintf(&sb, "    %s\n", w)
			continue
		}
		if w != "" {
			fmt.Fprintf(&sb, "  - %s\n", w)
		}
		if g != "" {
			fmt.Fprintf(&sb, "  + %s\n", g)
		}
	}
	return sb.String()
}
