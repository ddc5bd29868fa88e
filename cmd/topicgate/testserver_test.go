package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"topicgate/topicstore/jetstream/natsnode"
)

// testStoreEnv selects the backend the front-door tests run on: unset or
// "pebble" the embedded store, "nats" a gateway on a real local NATS
// JetStream cluster that the test binary starts once (testCluster), each
// test server on a stream of its own.
const testStoreEnv = "TOPICGATE_TEST_STORE"

// onCluster reports whether the tests run on the cluster store.
func onCluster() bool { return os.Getenv(testStoreEnv) == "nats" }

var (
	clusterOnce sync.Once
	clusterDir  string
	cluster     *natsnode.Cluster
	clusterErr  error
	streams     atomic.Int64
)

// testCluster starts the test binary's cluster: three nodes, so that the
// streams are R3 as in production. TestMain stops it.
func testCluster() (*natsnode.Cluster, error) {
	clusterOnce.Do(func() {
		clusterDir, clusterErr = os.MkdirTemp("", "tg-cluster-")
		if clusterErr != nil {
			return
		}
		cluster, clusterErr = natsnode.Start(context.Background(), natsnode.Config{Dir: filepath.Join(clusterDir, "nodes"), Nodes: 3})
	})
	return cluster, clusterErr
}

// stopTestCluster stops the cluster, if one was started.
func stopTestCluster() {
	if cluster != nil {
		_ = cluster.Stop()
	}
	if clusterDir != "" {
		os.RemoveAll(clusterDir)
	}
}

// testConfig is a test server's configuration on the selected backend.
func testConfig(t testing.TB) config {
	if onCluster() {
		return clusterConfig(t)
	}
	return config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError}
}

// clusterConfig is a gateway's configuration on the test binary's
// cluster, with a stream of its own.
func clusterConfig(t testing.TB) config {
	c, err := testCluster()
	if err != nil {
		t.Fatal(err)
	}
	return config{Listen: "127.0.0.1:0", LogLevel: slog.LevelError,
		Store: c.URL(), // every node, comma-separated
		NATS:  natsConfig{Replicas: 3, Stream: fmt.Sprintf("TGTEST%d", streams.Add(1))}}
}

// startServer starts a server with cfg; it stops when the test ends.
func startServer(t testing.TB, cfg config) *app {
	t.Helper()
	a, err := start(cfg)
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

// startTestServer starts an in-process server on 127.0.0.1:0 with a fresh
// data directory (or, on the cluster, a fresh stream); it stops when the
// test ends.
func startTestServer(t testing.TB) *app {
	t.Helper()
	return startServer(t, testConfig(t))
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
