package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore/jetstream"
	"topicgate/topicstore/jetstream/jstest"
)

// The cluster tests (TestCluster*) each start a three-node JetStream
// cluster of their own (real nats-server processes, so they can kill
// nodes) and gateways on it, whatever TOPICGATE_TEST_STORE says, and drive
// the gateways through the front door with pgx.

// gwCluster is a test's cluster and its in-process gateways.
type gwCluster struct {
	t       *testing.T
	nodes   *jstest.Cluster
	timeout time.Duration // each gateway's --nats-timeout
	// commitTimeout is each gateway's --nats-commit-timeout (0: the
	// default) for the gateways started after it is set.
	commitTimeout time.Duration
	gws           []*app
}

// startGateways starts a three-node cluster and n gateways on it, each on
// 127.0.0.1:0, with requests to the cluster bounded by timeout.
func startGateways(t *testing.T, n int, timeout time.Duration) *gwCluster {
	t.Helper()
	g := &gwCluster{t: t, nodes: jstest.Start(t, 3), timeout: timeout}
	for range n {
		g.gws = append(g.gws, g.startGateway())
	}
	return g
}

// gatewayConfig is a gateway's configuration on the test's cluster: the
// default stream (TOPICGATE), R3, every node's URL.
func (g *gwCluster) gatewayConfig() config {
	return config{Listen: "127.0.0.1:0", Store: g.nodes.URL(), LogLevel: slog.LevelError,
		// A gateway started right after a node restarted waits for it, as
		// with the command's default --nats-start-timeout.
		NATS: natsConfig{Replicas: 3, Stream: jetstream.DefaultStream, Timeout: g.timeout, CommitTimeout: g.commitTimeout,
			StartTimeout: 30 * time.Second}}
}

func (g *gwCluster) startGateway() *app {
	g.t.Helper()
	a, err := start(g.gatewayConfig())
	require.NoError(g.t, err)
	g.t.Cleanup(func() { a.Close() })
	return a
}

// streamLeader is the node leading the store's stream (waiting for one).
func (g *gwCluster) streamLeader() int { return g.nodes.StreamLeader(jetstream.DefaultStream) }

// query returns a statement's rows as text, one string per row.
func queryText(t testing.TB, c *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), sql, args...)
	require.NoError(t, err, sql)
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		require.NoError(t, err)
		f := make([]string, len(vals))
		for i, v := range vals {
			f[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(f, " "))
	}
	require.NoError(t, rows.Err(), sql)
	return out
}

// clusterViews is what sys.topics, sys.partitions, sys.consumers and
// sys.producers say about the cluster's state (not about a gateway's
// sessions: sys.sessions and sys.transactions, and
// sys.consumers.read_session, are the gateway's), sorted.
func clusterViews(t testing.TB, c *pgx.Conn) []string {
	t.Helper()
	out := queryText(t, c, "SELECT 'p', topic, partition, active, start_offset, end_offset, messages, bytes, last_write_at, state FROM sys.partitions")
	out = append(out, queryText(t, c, "SELECT 'c', topic, consumer, partition, committed_offset, end_offset, lag_messages FROM sys.consumers")...)
	out = append(out, queryText(t, c, "SELECT 't', topic, partitions, active_partitions, consumers, messages, bytes, created_at FROM sys.topics")...)
	out = append(out, queryText(t, c, "SELECT 'r', topic, producer_id, partition, max_seqno, last_write_at FROM sys.producers")...)
	sort.Strings(out)
	return out
}

// TestClusterTwoGateways: two gateways on one cluster behave as one
// server. A topic created through A is usable through B at once; a
// producer deduplicated through A is deduplicated when it retries through
// B; a WAIT read on B wakes on an INSERT through A; a transaction on A that
// read as consumer c conflicts at COMMIT after B moved c; the system views
// agree.
func TestClusterTwoGateways(t *testing.T) {
	g := startGateways(t, 2, 5*time.Second)
	ctx := context.Background()
	a, aN := connectNotices(t, g.gws[0])
	b, bN := connectNotices(t, g.gws[1])

	t.Run("DDLAtOnce", func(t *testing.T) {
		// Each topic is used through B right after A's CREATE returned,
		// with no wait: B must not answer 42P01.
		for i := range 20 {
			name := fmt.Sprintf("ddl%d", i)
			exec(t, a, fmt.Sprintf("CREATE TOPIC %s (CONSUMER c) WITH (min_active_partitions = 2)", name))
			tag := exec(t, b, fmt.Sprintf("INSERT INTO %s (partition, data) VALUES (1, 'via b')", name))
			require.Equal(t, "INSERT 0 1", tag.String())
			// Read right after B's ack, with no wait: each statement
			// waits at its read point (topicstore.ReadBarrier), so it
			// sees every write acknowledged before it began.
			require.Equal(t, []string{"1 0 [118 105 97 32 98]"}, queryText(t, a, fmt.Sprintf("SELECT partition, offset, data FROM %s", name)),
				"A reads what B acknowledged")
			exec(t, b, fmt.Sprintf("DROP TOPIC %s", name))
			_, err := a.Exec(ctx, fmt.Sprintf("INSERT INTO %s (data) VALUES ('gone')", name))
			require.Equal(t, "42P01", pgCode(err), "a topic dropped through B is gone through A: %v", err)
		}
	})

	t.Run("DedupAcrossGateways", func(t *testing.T) {
		exec(t, a, "CREATE TOPIC dd WITH (min_active_partitions = 4)")
		ins := "INSERT INTO dd (producer_id, seqno, data) VALUES ($1, $2, $3)"
		for seq := int64(1); seq <= 30; seq++ {
			first, retry, fn, rn := a, b, aN, bN
			if seq%2 == 0 {
				first, retry, fn, rn = b, a, bN, aN
			}
			fn.take()
			require.Equal(t, "INSERT 0 1", exec(t, first, ins, "p1", seq, []byte(fmt.Sprint("m", seq))).String())
			require.Empty(t, fn.take())
			// The retry through the other gateway, at once.
			require.Equal(t, "INSERT 0 0", exec(t, retry, ins, "p1", seq, []byte(fmt.Sprint("m", seq))).String(), "seqno %d retried", seq)
			notices := rn.take()
			require.Len(t, notices, 1, "seqno %d", seq)
			require.Contains(t, notices[0], "skipped 1 duplicate message(s)")
		}
		want := make([]string, 30)
		for i := range want {
			want[i] = fmt.Sprintf("p1 %d", i+1)
		}
		for _, c := range []*pgx.Conn{a, b} {
			require.Equal(t, want, queryText(t, c, "SELECT producer_id, seqno FROM dd ORDER BY seqno"))
			require.Len(t, queryText(t, c, "SELECT DISTINCT partition FROM dd"), 1, "one producer, one partition")
			require.Equal(t, []string{"p1 30"}, queryText(t, c, "SELECT producer_id, max_seqno FROM sys.producers WHERE topic = 'dd'"))
		}
	})

	t.Run("WaitWakesAcrossGateways", func(t *testing.T) {
		exec(t, a, "CREATE TOPIC w (CONSUMER c)")
		var lat []time.Duration
		for i := range 10 {
			type res struct {
				data []byte
				at   time.Time
				err  error
			}
			done := make(chan res, 1)
			go func() {
				var r res
				r.err = b.QueryRow(ctx, "SELECT data FROM w WITH (CONSUMER = c, WAIT = '10s') LIMIT 1").Scan(&r.data)
				r.at = time.Now()
				done <- r
			}()
			time.Sleep(100 * time.Millisecond) // let B's read start waiting
			sent := time.Now()
			exec(t, a, "INSERT INTO w (data) VALUES ($1)", []byte(fmt.Sprint("w", i)))
			acked := time.Since(sent)
			r := <-done
			require.NoError(t, r.err)
			require.Equal(t, fmt.Sprint("w", i), string(r.data))
			require.Less(t, r.at.Sub(sent), 5*time.Second, "the WAIT read must wake on the INSERT, not at its timeout")
			lat = append(lat, r.at.Sub(sent))
			t.Logf("wake %d: %v after the INSERT was sent through A (its ack took %v)", i, r.at.Sub(sent).Round(time.Microsecond), acked.Round(time.Microsecond))
		}
		slices.Sort(lat)
		t.Logf("WAIT on B woken by INSERT on A: median %v, max %v", lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	})

	t.Run("ConflictAcrossGateways", func(t *testing.T) {
		exec(t, a, "CREATE TOPIC x (CONSUMER c)")
		for i := range 10 {
			exec(t, a, "INSERT INTO x (data) VALUES ($1)", []byte(fmt.Sprint("x", i)))
		}
		exec(t, a, "BEGIN")
		require.Len(t, queryText(t, a, "SELECT offset FROM x WITH (CONSUMER = c) LIMIT 5"), 5)
		exec(t, b, "UPDATE sys.consumers SET committed_offset = 3 WHERE topic = 'x' AND consumer = 'c' AND partition = 0")
		_, err := a.Exec(ctx, "COMMIT")
		require.Equal(t, "40001", pgCode(err), "COMMIT after B moved the position: %v", err)
		for _, c := range []*pgx.Conn{a, b} {
			require.Equal(t, []string{"3"}, queryText(t, c, "SELECT committed_offset FROM sys.consumers WHERE topic = 'x' AND consumer = 'c'"))
		}
		// Retried, the transaction reads from where B put c, and commits.
		exec(t, a, "BEGIN")
		require.Equal(t, []string{"3", "4"}, queryText(t, a, "SELECT offset FROM x WITH (CONSUMER = c) LIMIT 2"))
		exec(t, a, "COMMIT")
		require.Equal(t, []string{"5"}, queryText(t, b, "SELECT committed_offset FROM sys.consumers WHERE topic = 'x' AND consumer = 'c'"),
			"B shows the position A committed, at once")
	})

	t.Run("ViewsAgree", func(t *testing.T) {
		// Read right after the last write through A: B's views match A's.
		exec(t, a, "INSERT INTO x (data) VALUES ('last')")
		va, vb := clusterViews(t, a), clusterViews(t, b)
		require.Equal(t, va, vb, "the system views agree")
		require.True(t, slices.ContainsFunc(va, func(s string) bool { return strings.HasPrefix(s, "p x 0 true 0 11 11 ") }), "%v", va)
		require.True(t, slices.Contains(va, "c x c 0 5 11 6"), "%v", va)
		require.True(t, slices.ContainsFunc(va, func(s string) bool { return strings.HasPrefix(s, "r ") }), "a producer in sys.producers: %v", va)
	})
}

// within polls f until it returns nil and returns how long that took,
// failing the test with f's last error after timeout.
func within(t testing.TB, timeout time.Duration, f func() error) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		err := f()
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("after %v: %v", timeout, err)
		}
		time.Sleep(time.Millisecond)
	}
}
