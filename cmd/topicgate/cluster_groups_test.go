package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream"
)

// groupGateways waits, on the group's change channel, until the gateway's
// store shows exactly the given members of (topic t, consumer c).
func groupGateways(t *testing.T, a *app, want ...*app) {
	t.Helper()
	st := a.store.(*jetstream.Store)
	var ids []string
	for _, w := range want {
		ids = append(ids, w.store.(topicstore.GroupCoordinator).GatewayID())
	}
	slices.Sort(ids)
	timeout := time.After(15 * time.Second)
	for {
		v, ch, err := st.Members("t", "c")
		require.NoError(t, err)
		var got []string
		for _, m := range v.Members {
			got = append(got, m.Gateway)
		}
		if slices.Equal(got, ids) {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("gateway %s sees members %v, want %v", st.GatewayID(), got, ids)
		}
	}
}

// readPartitions reads as consumer c (waiting up to 5s for a first
// message) and counts the messages returned per partition.
func readPartitions(t *testing.T, c *pgx.Conn) map[int32]int {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT partition FROM t WITH (CONSUMER = c, WAIT = '5s') LIMIT 100")
	require.NoError(t, err)
	out := map[int32]int{}
	for rows.Next() {
		var p int32
		require.NoError(t, rows.Scan(&p))
		out[p]++
	}
	require.NoError(t, rows.Err())
	return out
}

// fillPartitions writes n messages into each of t's 4 partitions.
func fillPartitions(t *testing.T, c *pgx.Conn, n int) {
	t.Helper()
	for p := range 4 {
		for range n {
			exec(t, c, fmt.Sprintf("INSERT INTO t (partition, data) VALUES (%d, 'x')", p))
		}
	}
}

// TestReadSessionsAcrossGateways: two gateways on one cluster stream
// divide a consumer's partitions between their read sessions. One session
// on each gets two partitions each, disjoint; when the session on B closes
// A gets all four; a session on B gets its two back, and when B's gateway
// dies (its store closed under its session, so nothing leaves) its share
// expires after the session TTL and goes to A; a third gateway stopped
// gracefully hands its share to A at once. Nothing is read twice.
func TestReadSessionsAcrossGateways(t *testing.T) {
	cfg := clusterConfig(t)
	const ttl = 2 * time.Second
	cfg.NATS.SessionTTL = ttl
	ga, gb := startServer(t, cfg), startServer(t, cfg) // one stream: cfg.NATS.Stream
	ctx := context.Background()
	ca, cb := connect(t, ga), connect(t, gb)
	exec(t, ca, "CREATE TOPIC t (CONSUMER c) WITH (min_active_partitions = 4)")
	fillPartitions(t, ca, 2)

	// A joins without reading; B then reads: its share waits until A has
	// let it go, so B reads two partitions' messages and A the other two.
	exec(t, ca, "SELECT * FROM t WITH (CONSUMER = c) LIMIT 0")
	groupGateways(t, gb, ga)
	onB := readPartitions(t, cb)
	onA := readPartitions(t, ca)
	t.Logf("A reads %v, B reads %v", onA, onB)
	require.Len(t, onA, 2)
	require.Len(t, onB, 2)
	for p := range int32(4) {
		require.Equal(t, 2, onA[p]+onB[p], "partition %d: each message read once, by one gateway", p)
	}

	// B's session closes: A gets all four.
	require.NoError(t, cb.Close(ctx))
	groupGateways(t, ga, ga)
	fillPartitions(t, ca, 1)
	require.Equal(t, map[int32]int{0: 1, 1: 1, 2: 1, 3: 1}, readPartitions(t, ca))

	// A new session on B takes B's share back.
	cb = connect(t, gb)
	fillPartitions(t, ca, 1)
	onB = readPartitions(t, cb)
	require.Len(t, onB, 2)
	onA = readPartitions(t, ca)
	require.Len(t, onA, 2)
	for p := range int32(4) {
		require.Equal(t, 1, onA[p]+onB[p], "partition %d", p)
	}

	// B's gateway dies: its store stops under its session, which never
	// leaves. A keeps its own share; B's comes to A once B has expired.
	require.NoError(t, gb.store.Close())
	died := time.Now()
	fillPartitions(t, ca, 1)
	got := readPartitions(t, ca)
	require.Equal(t, len(onA), len(got), "A reads its own share meanwhile")
	for p := range got {
		require.Contains(t, onA, p)
	}
	groupGateways(t, ga, ga)
	expired := time.Since(died)
	t.Logf("B's share expired %v after its store closed (TTL %v)", expired, ttl)
	require.GreaterOrEqual(t, expired, ttl/2, "not before the TTL (less what passed since B's last renewal)")
	got = readPartitions(t, ca)
	require.Len(t, got, 2)
	for p := range got {
		require.Contains(t, onB, p, "A takes B's share")
	}
	var held int64
	require.NoError(t, ca.QueryRow(ctx, "SELECT count(*) FROM sys.consumers WHERE topic = 't' AND read_session IS NOT NULL").Scan(&held))
	require.EqualValues(t, 4, held, "A's session holds every partition")

	// A gateway that stops gracefully hands its share over at once: its
	// sessions leave before its store closes.
	gc, err := start(cfg)
	require.NoError(t, err)
	cc := connect(t, gc)
	fillPartitions(t, ca, 1)
	onC := readPartitions(t, cc)
	require.Len(t, onC, 2)
	got = readPartitions(t, ca)
	require.Len(t, got, 2)
	for p := range got {
		require.NotContains(t, onC, p)
	}
	stopped := time.Now()
	require.NoError(t, gc.Shutdown(5*time.Second)) // what SIGTERM runs
	groupGateways(t, ga, ga)
	t.Logf("C's share came to A %v after C began to stop", time.Since(stopped))
	require.Less(t, time.Since(stopped), ttl/2, "no TTL to wait for")
	fillPartitions(t, ca, 1)
	require.Equal(t, map[int32]int{0: 1, 1: 1, 2: 1, 3: 1}, readPartitions(t, ca), "A reads C's partitions and its own")
}
