package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseClasses(t *testing.T) {
	for in, want := range map[string]Classes{
		"":                 0,
		"read, Write":      Classes(Read | Write),
		"all":              AllClasses,
		"all,-misc":        DefaultClasses,
		"ALL, -MISC,-auth": DefaultClasses &^ Classes(Auth),
	} {
		got, err := ParseClasses(in)
		if err != nil || got != want {
			t.Errorf("ParseClasses(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseClasses("read,select"); err == nil {
		t.Error("ParseClasses accepted an unknown class")
	}
	if s := DefaultClasses.String(); s != "READ,WRITE,CONSUME,DDL,ROLE,AUTH" {
		t.Errorf("DefaultClasses = %s", s)
	}
}

func TestRecordJSON(t *testing.T) {
	r := Record{Time: time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600)), Role: "app", SessionUser: "bob",
		Remote: "127.0.0.1:5000", Session: 7, Class: Role, Command: "CREATE ROLE", Outcome: OK,
		Statement: "CREATE ROLE a PASSWORD '<redacted>'"}
	got := string(r.AppendJSON(nil))
	want := `{"time":"2024-05-06T06:08:09.123456Z","role":"app","session_user":"bob","remote":"127.0.0.1:5000","session":7,` +
		`"class":"ROLE","command":"CREATE ROLE","objects":[],"outcome":"ok","statement":"CREATE ROLE a PASSWORD '<redacted>'"}` + "\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLoggedWhateverTheClasses(t *testing.T) {
	cs := Classes(Read)
	for _, c := range []struct {
		class   Class
		outcome string
		want    bool
	}{
		{Read, OK, true}, {Write, OK, false}, {Misc, Denied, true}, {Write, "23505", false},
		{Auth, OK, false}, {Auth, "28P01", true},
	} {
		if got := Logged(cs, c.class, c.outcome); got != c.want {
			t.Errorf("Logged(READ, %v, %s) = %v", c.class, c.outcome, got)
		}
	}
}

// TestLogConcurrentAndReopen writes from many goroutines while the file
// is moved away and reopened: every line is whole and in one of the two
// files.
func TestLogConcurrentAndReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := Open(path, Options{Classes: AllClasses})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	half := make(chan struct{})
	var halfOnce sync.WaitGroup
	halfOnce.Add(writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if i == each/2 {
					halfOnce.Done()
					<-half
				}
				l.Write(&Record{Class: Read, Outcome: OK, Command: "SELECT", Statement: fmt.Sprintf("w%d i%d %s", w, i, strings.Repeat("x", 500))})
			}
		}()
	}
	halfOnce.Wait()
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	close(half)
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Write(&Record{Class: Read, Outcome: OK}) // closed: nothing
	old, cur := readLines(t, path+".1"), readLines(t, path)
	if len(old) != writers*each/2 || len(cur) != writers*each/2 {
		t.Fatalf("%d lines before the reopen, %d after; want %d each", len(old), len(cur), writers*each/2)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("reopened file: %v, %v", fi.Mode(), err)
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: a line is not JSON: %v: %q", path, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestStderrAndFilter(t *testing.T) {
	var buf bytes.Buffer
	l, err := Open("-", Options{Stderr: &buf})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(&Record{Class: Misc, Outcome: OK, Command: "SET"})
	l.Write(&Record{Class: Misc, Outcome: Denied, Command: "SET"})
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.Contains(buf.String(), `"outcome":"42501"`) {
		t.Errorf("stderr got %q; want the denial only", buf.String())
	}
}
