package settings

import (
	"errors"
	"testing"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/wire"
)

func newTest(t *testing.T, params map[string]string) *Settings {
	t.Helper()
	info := wire.SessionInfo{User: "alice", Params: params}
	if err := CheckStartup(info); err != nil {
		t.Fatalf("CheckStartup: %v", err)
	}
	return New(info)
}

func want(t *testing.T, s *Settings, name, v string) {
	t.Helper()
	if got, _ := s.Get(name); got != v {
		t.Fatalf("%s = %q, want %q", name, got, v)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("err = %v, want SQLSTATE %s", err, code)
	}
}

// TestScopes: a block's SETs are kept at COMMIT and undone at ROLLBACK,
// its SET LOCALs are undone either way, and a savepoint's snapshot
// restores what was before it.
func TestScopes(t *testing.T) {
	s := newTest(t, nil)
	s.Begin()
	if err := s.Set("statement_timeout", "5s", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("DateStyle", "German", true); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if err := s.Set("TimeZone", "Europe/Berlin", false); err != nil {
		t.Fatal(err)
	}
	s.Restore(snap)
	want(t, s, "timezone", "UTC")
	if s.Location() != time.UTC {
		t.Fatalf("Location = %v after Restore", s.Location())
	}
	s.Commit()
	want(t, s, "statement_timeout", "5s")
	want(t, s, "datestyle", "ISO, MDY")
	if s.StatementTimeout() != 5*time.Second {
		t.Fatalf("StatementTimeout = %v", s.StatementTimeout())
	}

	s.Begin()
	if err := s.Set("statement_timeout", "0", false); err != nil {
		t.Fatal(err)
	}
	s.Rollback()
	want(t, s, "statement_timeout", "5s")

	// SET LOCAL outside a transaction only checks its value.
	if err := s.Set("statement_timeout", "1min", true); err != nil {
		t.Fatal(err)
	}
	want(t, s, "statement_timeout", "5s")
	wantCode(t, s.Set("statement_timeout", "soon", true), pgerror.CodeInvalidParameterValue)
}

// TestRefusals: PostgreSQL's SQLSTATEs for an unknown name, a read-only
// parameter, a bad value and one topicgate cannot honour.
func TestRefusals(t *testing.T) {
	s := newTest(t, nil)
	wantCode(t, s.Set("no_such_thing", "1", false), pgerror.CodeUndefinedObject)
	wantCode(t, s.Set("server_version", "16", false), pgerror.CodeCantChangeRuntimeParam)
	wantCode(t, s.Set("extra_float_digits", "9", false), pgerror.CodeInvalidParameterValue)
	wantCode(t, s.Set("IntervalStyle", "iso_8601", false), pgerror.CodeFeatureNotSupported)
	if err := s.Set("myapp.flag", "x", false); err != nil {
		t.Fatalf("placeholder: %v", err)
	}
	if v, err := s.Show("MyApp.Flag"); err != nil || v != "x" {
		t.Fatalf("Show placeholder = %q, %v", v, err)
	}
	_, err := s.Show("other.flag")
	wantCode(t, err, pgerror.CodeUndefinedObject)
}

// TestStartup: the options parameter's -c settings come first and the
// packet's own win; RESET goes back to them; a zone we do not know falls
// back to UTC instead of refusing the login.
func TestStartup(t *testing.T) {
	s := newTest(t, map[string]string{
		"options":            `-c statement_timeout=2s --extra-float-digits=2`,
		"extra_float_digits": "3",
		"TimeZone":           "Nowhere/Atlantis",
	})
	want(t, s, "statement_timeout", "2s")
	want(t, s, "extra_float_digits", "3")
	want(t, s, "timezone", "UTC")
	want(t, s, "session_authorization", "alice")
	if err := s.Set("statement_timeout", "0", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset("statement_timeout", false); err != nil {
		t.Fatal(err)
	}
	want(t, s, "statement_timeout", "2s")

	for _, params := range []map[string]string{
		{"options": "-x"},
		{"server_version": "16"},
		{"statement_timeout": "soon"},
	} {
		if err := CheckStartup(wire.SessionInfo{User: "alice", Params: params}); err == nil {
			t.Errorf("CheckStartup(%v) accepted", params)
		}
	}
}

// TestReported: the client hears a reported parameter's change once, and
// nothing of one that is not reported.
func TestReported(t *testing.T) {
	s := newTest(t, map[string]string{"application_name": "app"})
	if got := s.Startup()["application_name"]; got != "app" {
		t.Fatalf("Startup application_name = %q", got)
	}
	if ch := s.Changes(); len(ch) != 0 {
		t.Fatalf("Changes after Startup = %v", ch)
	}
	if err := s.Set("application_name", "other", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("statement_timeout", "1s", false); err != nil {
		t.Fatal(err)
	}
	ch := s.Changes()
	if len(ch) != 1 || ch[0] != (wire.ParamStatus{Name: "application_name", Value: "other"}) {
		t.Fatalf("Changes = %v", ch)
	}
	if ch := s.Changes(); len(ch) != 0 {
		t.Fatalf("Changes again = %v", ch)
	}
}

// TestIdentityHook: role and session_authorization tell the session when
// they take a value, a rollback's restore too; SET refuses them.
func TestIdentityHook(t *testing.T) {
	s := newTest(t, nil)
	var told []string
	s.OnIdentity(func(name, value string) { told = append(told, name+"="+value) })
	wantCode(t, s.Set("role", "bob", false), pgerror.CodeCantChangeRuntimeParam)
	s.Begin()
	if err := s.SetTrusted("role", "bob", false); err != nil {
		t.Fatal(err)
	}
	s.Rollback()
	if len(told) != 2 || told[0] != "role=bob" || told[1] != "role=none" {
		t.Fatalf("told %v", told)
	}
}
