package console

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"topicgate/wire"
)

// noSessions opens no session: the requests below never need one.
type noSessions struct{}

func (noSessions) NewSession(context.Context, wire.SessionInfo) (wire.Session, error) {
	panic("no session expected")
}

func newTest(t *testing.T, now *time.Time) *Console {
	c, err := New(Config{Sessions: noSessions{}, Verifier: func(string) (string, bool) { return "", false },
		Clock: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPlainHTTPBeyondLoopback: plain HTTP that came in on an address
// other than loopback is refused; on loopback it is served.
func TestPlainHTTPBeyondLoopback(t *testing.T) {
	now := time.Now()
	c := newTest(t, &now)
	for _, tc := range []struct {
		local string
		want  int
	}{{"10.1.2.3:8080", http.StatusForbidden}, {"[2001:db8::1]:8080", http.StatusForbidden},
		{"127.0.0.1:8080", http.StatusOK}, {"[::1]:8080", http.StatusOK}} {
		addr, err := net.ResolveTCPAddr("tcp", tc.local)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/login", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.local, w.Code, tc.want)
		}
	}
}

// TestCookies: a cookie verifies until it expires or is logged out; a
// changed byte, another key or a CSRF token of another session fail.
func TestCookies(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s, err := newSigner(nil)
	if err != nil {
		t.Fatal(err)
	}
	ss := session{user: "alice", expires: now.Add(time.Hour), nonce: "n1"}
	v := s.encode(ss)
	got, err := s.decode(v, now)
	if err != nil || got != ss {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	if _, err := s.decode(v, now.Add(time.Hour)); err == nil {
		t.Error("an expired cookie verified")
	}
	for i := range v {
		b := []byte(v)
		b[i] ^= 1
		if _, err := s.decode(string(b), now); err == nil {
			t.Errorf("a cookie changed at byte %d verified", i)
		}
	}
	other, _ := newSigner(nil)
	if _, err := other.decode(v, now); err == nil {
		t.Error("another process's key verified the cookie")
	}
	if !s.checkCSRF("n1", s.csrf("n1")) || s.checkCSRF("n2", s.csrf("n1")) || s.checkCSRF("", s.csrf("")) {
		t.Error("CSRF tokens are not tied to their session")
	}
	s.logout(ss, now)
	if _, err := s.decode(v, now); err == nil {
		t.Error("a logged-out cookie verified")
	}
}

// TestShowBody: bodies as text, JSON, hex and auto.
func TestShowBody(t *testing.T) {
	for _, tc := range []struct {
		body, view, want, kind string
	}{
		{`{"a":1}`, "auto", "{\n  \"a\": 1\n}", "json"},
		{`{"a":1}`, "text", `{"a":1}`, "text"},
		{"plain", "json", "plain", "text"},
		{"\x00\xff", "auto", "00ff", "hex"},
		{"hi", "hex", "6869", "hex"},
	} {
		got, kind := showBody([]byte(tc.body), tc.view)
		if got != tc.want || kind != tc.kind {
			t.Errorf("showBody(%q, %s) = %q, %s; want %q, %s", tc.body, tc.view, got, kind, tc.want, tc.kind)
		}
	}
}
