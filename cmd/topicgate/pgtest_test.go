package main

import (
	"flag"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"topicgate/wire/pgtest"
)

var rewriteTopicgate = flag.Bool("rewrite-topicgate", false, "rewrite the expected output of topicgate_only blocks of the protocol scripts from topicgate")

// TestPGTest replays the protocol scripts of ../../testdata/pgtest against
// an in-process topicgate; with -rewrite it records them from a real
// PostgreSQL 15 instead (see package wire/pgtest).
func TestPGTest(t *testing.T) {
	files, err := filepath.Glob("../../testdata/pgtest/*.pgtest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	var target pgtest.Target
	if *rewrite {
		target = pgtest.StartPostgres(t)
	} else {
		a := startTestServer(t)
		// The server of "connect server=auth": one that asks for a password.
		auth, err := start(config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError,
			Auth: "password", Users: map[string]string{pgtest.AuthUser: pgtest.AuthPassword}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = auth.Close() })
		target = pgtest.Target{Addr: a.Addr(), AuthAddr: auth.Addr()}
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".pgtest"), func(t *testing.T) {
			pgtest.Run(t, target, f, *rewrite || *rewriteTopicgate)
		})
	}
}
