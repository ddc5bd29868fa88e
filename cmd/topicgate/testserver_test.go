package main

import (
	"fmt"
	"log/slog"
	"testing"
)

// startTestServer starts an in-process server on 127.0.0.1:0 with a fresh
// data directory; it stops when the test ends.
func startTestServer(t testing.TB) *app {
	t.Helper()
	a, err := start(config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return a
}

// dsn is a connection string for the test server.
func (a *app) dsn() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", a.Addr())
}
