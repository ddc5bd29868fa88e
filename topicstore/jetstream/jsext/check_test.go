package jsext_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/jstest"
)

func checkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCheckAcceptsCluster(t *testing.T) {
	c := jstest.Start(t, 3)
	nc, err := jsext.Connect(checkCtx(t), c.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if v := nc.ConnectedServerVersion(); v != "2.15.2" {
		t.Errorf("server version %q, want the module's 2.15.2", v)
	}
}

func TestCheckRefusesNoJetStream(t *testing.T) {
	c := jstest.Start(t, 1, jstest.WithoutJetStream())
	_, err := jsext.Connect(checkCtx(t), c.URLs())
	if !errors.Is(err, jsext.ErrNoJetStream) {
		t.Fatalf("err = %v, want jsext.ErrNoJetStream", err)
	}
	for _, want := range []string{c.URLs()[0], "-js", "2.15.2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	t.Log(err)
}

func TestCheckRefusesUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	urls := []string{"nats://tg:secret@" + addr, "nats://" + addr}
	t0 := time.Now()
	_, err = jsext.Connect(checkCtx(t), urls)
	if !errors.Is(err, jsext.ErrUnreachable) {
		t.Fatalf("err = %v, want jsext.ErrUnreachable", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "nats://tg:xxxxx@"+addr+",nats://"+addr) || strings.Contains(msg, "secret") {
		t.Errorf("message %q should name both URLs with the password redacted", msg)
	}
	t.Logf("%v (after %v)", err, time.Since(t0))
}

// TestCheckRefusesOldServer runs Debian's nats-server (2.9, no atomic batch
// publish) when it is installed ($TG_OLD_NATS_SERVER, or /usr/sbin/nats-server
// from `apt-get install nats-server`); TestVersionAtLeast covers the
// comparison everywhere.
func TestCheckRefusesOldServer(t *testing.T) {
	bin := os.Getenv("TG_OLD_NATS_SERVER")
	if bin == "" {
		bin = "/usr/sbin/nats-server"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Skipf("no old nats-server to run (%s: %v)", bin, err)
	}
	reported := strings.TrimPrefix(strings.TrimSpace(string(out)), "nats-server: ")
	if ok, err := jsext.VersionAtLeast(reported, jsext.MinServerMajor, jsext.MinServerMinor); err != nil || ok {
		t.Skipf("%s is %s, not older than %d.%d", bin, reported, jsext.MinServerMajor, jsext.MinServerMinor)
	}
	c := jstest.Start(t, 1, jstest.WithBinary(bin))
	_, err = jsext.Connect(checkCtx(t), c.URLs())
	if !errors.Is(err, jsext.ErrServerTooOld) {
		t.Fatalf("err = %v, want jsext.ErrServerTooOld", err)
	}
	for _, want := range []string{strings.TrimPrefix(reported, "v"), "2.12", "go tool nats-server"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	t.Log(err)
}

func TestVersionAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"2.15.2", true}, // what the module's server reports (TestCheckAcceptsCluster)
		{"2.12.0", true},
		{"2.12.0-RC.1", true},
		{"v2.14.0", true},
		{"3.0.0", true},
		{"2.11.9", false},
		{"2.9.10", false}, // Debian bookworm's package
		{"1.4.1", false},
	} {
		got, err := jsext.VersionAtLeast(tc.v, jsext.MinServerMajor, jsext.MinServerMinor)
		if err != nil || got != tc.want {
			t.Errorf("jsext.VersionAtLeast(%q) = %v, %v; want %v", tc.v, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "2", "x.y.z"} {
		if _, err := jsext.VersionAtLeast(bad, 2, 12); err == nil {
			t.Errorf("jsext.VersionAtLeast(%q): no error", bad)
		}
	}
}
