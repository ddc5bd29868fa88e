package pgtest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestParseAndText(t *testing.T) {
	src := `# a comment

send
Query {"String": "SELECT 1"}
----

until ignore=NoticeResponse
ReadyForQuery
----
{"Type":"ReadyForQuery","TxStatus":"I"}
`
	s, err := Parse("x.pgtest", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Blocks) != 2 || s.Blocks[0].Cmd != "send" || s.Blocks[1].Cmd != "until" {
		t.Fatalf("blocks: %+v", s.Blocks)
	}
	if v, ok := s.Blocks[1].Arg("ignore"); !ok || v != "NoticeResponse" {
		t.Fatalf("ignore = %q, %v", v, ok)
	}
	if got := s.Text(); got != src {
		t.Fatalf("Text changed the script:\n%s", got)
	}
	s.Blocks[0].Output = []string{"x"}
	s.Blocks[1].Output = nil
	want := "# a comment\n\nsend\nQuery {\"String\": \"SELECT 1\"}\n----\nx\n\nuntil ignore=NoticeResponse\nReadyForQuery\n----\n"
	if got := s.Text(); got != want {
		t.Fatalf("rewritten:\n%q\nwant\n%q", got, want)
	}
	for _, bad := range []string{"sned\n----\n", "send pgonly\n----\n", "until pg_only known_diff=x\n----\n", "until\nReadyForQuery\n"} {
		if _, err := Parse("y", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		msg  pgproto3.BackendMessage
		want string
	}{
		{&pgproto3.BackendKeyData{ProcessID: 42, SecretKey: []byte{1, 2, 3, 4}}, `{"Type":"BackendKeyData"}`},
		{&pgproto3.ParameterStatus{Name: "server_version", Value: "15.4 (Debian)"}, `{"Type":"ParameterStatus","Name":"server_version","Value":"15.x"}`},
		{&pgproto3.ErrorResponse{Severity: "ERROR", Code: "22012", Message: "division by zero", File: "int.c", Line: 1, Routine: "int4div"},
			`{"Type":"ErrorResponse","Severity":"ERROR","Code":"22012","Message":"division by zero"}`},
		{&pgproto3.NoticeResponse{Severity: "WARNING", Code: "25P01", Message: "there is no transaction in progress", Line: 7},
			`{"Type":"NoticeResponse","Severity":"WARNING","Code":"25P01","Message":"there is no transaction in progress"}`},
		{&pgproto3.ReadyForQuery{TxStatus: 'T'}, `{"Type":"ReadyForQuery","TxStatus":"T"}`},
	} {
		got, err := Normalize(c.msg)
		if err != nil || got != c.want {
			t.Errorf("Normalize(%T) = %s, %v; want %s", c.msg, got, err, c.want)
		}
	}
}

func TestFrontendMessage(t *testing.T) {
	m, err := frontendMessage(`Raw {"Type": "Q", "Body": "SELECT '\u00ff'\u0000"}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.(*Raw).encode()
	if err != nil {
		t.Fatal(err)
	}
	if want := "Q\x00\x00\x00\x0fSELECT '\xff'\x00"; string(b) != want {
		t.Fatalf("Raw = %q, want %q", b, want)
	}
	if _, err := frontendMessage(`Query {"Strin": "x"}`); err == nil {
		t.Fatal("unknown field accepted")
	}
	if m, err := frontendMessage(`Sync`); err != nil || m == nil {
		t.Fatalf("Sync: %v", err)
	}
}
