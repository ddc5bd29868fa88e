package main

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
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

// fillTopic creates topic name with parts partitions and copies n messages
// into it: message i is the decimal text of i, in partition i % parts (so
// partition p holds p, p+parts, ... at offsets 0, 1, ...).
func fillTopic(t testing.TB, c *pgx.Conn, name string, parts, n int) {
	t.Helper()
	exec(t, c, fmt.Sprintf("CREATE TOPIC %s WITH (min_active_partitions = %d)", name, parts))
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int32(i % parts), []byte(fmt.Sprint(i))}
	}
	copied, err := c.CopyFrom(context.Background(), pgx.Identifier{name}, []string{"partition", "data"}, pgx.CopyFromRows(rows))
	if err != nil || copied != int64(n) {
		t.Fatalf("copy into %s: %d rows, %v", name, copied, err)
	}
}
