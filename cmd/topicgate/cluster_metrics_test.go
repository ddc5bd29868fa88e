package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clusterFamilies are the /metrics families computed from the store's
// state, which on a cluster is the fold of the stream: every gateway must
// report the same samples (topicgate_consumer_lag_seconds too, but it is
// an age measured with each gateway's clock, so it is left out).
var clusterFamilies = []string{
	"topicgate_topic_messages_written_total", "topicgate_topic_bytes_written_total",
	"topicgate_partition_end_offset", "topicgate_partition_bytes",
	"topicgate_consumer_committed_offset", "topicgate_consumer_lag_messages",
	"topicgate_shared_",
	// the stream, as its leader answers
	"topicgate_cluster_stream_",
}

// clusterSamples keeps the samples of clusterFamilies, as sorted lines.
func clusterSamples(m map[string]float64) []string {
	var out []string
	for k, v := range m {
		for _, f := range clusterFamilies {
			if strings.HasPrefix(k, f) {
				out = append(out, fmt.Sprintf("%s %g", k, v))
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestClusterMetrics: on a cluster, /metrics of every gateway, and of one
// started afterwards, shows the same cluster state (messages and bytes
// written, partition offsets and sizes, consumer positions and lags, the
// shared consumer's window, a lock taken through another gateway
// included; the stream's size, last sequence, leader and replicas, as its
// leader answers), while the traffic counters (transactions, sessions,
// statement latencies, messages read, duplicates skipped, commit groups)
// and the fold's and connection's figures are that gateway's: a dashboard
// sums those over the gateways, and takes the others from any one. A
// killed follower shows as a replica not current.
func TestClusterMetrics(t *testing.T) {
	g := startGateways(t, 2, 5*time.Second)
	srvA := httptest.NewServer(g.gws[0].metricsHandler())
	defer srvA.Close()
	srvB := httptest.NewServer(g.gws[1].metricsHandler())
	defer srvB.Close()
	a, b := connect(t, g.gws[0]), connect(t, g.gws[1])

	exec(t, a, "CREATE TOPIC mc (CONSUMER s, CONSUMER w WITH (type = 'shared')) WITH (min_active_partitions = 1)")
	exec(t, a, "INSERT INTO mc (producer_id, seqno, data) VALUES ('p', 1, 'a'), ('p', 2, 'b'), ('p', 3, 'c')")
	exec(t, a, "INSERT INTO mc (producer_id, seqno, data) VALUES ('p', 3, 'c')") // a duplicate, through A
	exec(t, b, "SELECT data FROM mc WITH (CONSUMER = s, WAIT = '5s') LIMIT 1")   // moves s to 1, through B (once B has folded A's INSERT)
	ms := mustAcquire(t, b, "mc", "CONSUMER = w, WAIT = '5s'", 2)                // locks offsets 0 and 1 for B's session (once B has folded A's INSERT)
	require.Len(t, ms, 2)
	exec(t, b, "DELETE FROM mc WITH (CONSUMER = w) WHERE partition = 0 AND offset = 0")

	srvC := httptest.NewServer(g.startGateway().metricsHandler()) // folds it all at start
	defer srvC.Close()
	var ma, mb, mc map[string]float64
	within(t, 5*time.Second, func() error {
		ma, mb, mc = scrape(t, srvA), scrape(t, srvB), scrape(t, srvC)
		sa, sb, sc := clusterSamples(ma), clusterSamples(mb), clusterSamples(mc)
		if strings.Join(sa, "\n") != strings.Join(sb, "\n") || strings.Join(sa, "\n") != strings.Join(sc, "\n") {
			return fmt.Errorf("gateways disagree:\nA:\n%s\nB:\n%s\nC:\n%s", strings.Join(sa, "\n"), strings.Join(sb, "\n"), strings.Join(sc, "\n"))
		}
		return nil
	})
	checkExposition(t, scrapeText(t, srvA))
	t.Logf("cluster state, the same on A, B and a gateway started afterwards:\n%s", strings.Join(clusterSamples(mc), "\n"))
	lbl := func(name, consumer string) string {
		return name + `{topic="mc",consumer="` + consumer + `",partition="0"}`
	}
	for name, want := range map[string]float64{
		`topicgate_topic_messages_written_total{topic="mc"}`:       3,
		`topicgate_partition_end_offset{topic="mc",partition="0"}`: 3,
		lbl("topicgate_consumer_committed_offset", "s"):            1,
		lbl("topicgate_consumer_lag_messages", "s"):                2,
		lbl("topicgate_consumer_committed_offset", "w"):            1,
		lbl("topicgate_shared_acquired_messages", "w"):             1, // B's lock, seen by A and C
		lbl("topicgate_shared_available_messages", "w"):            1,
	} {
		require.Equal(t, want, mc[name], name)
	}

	// Per gateway: what went through it.
	for _, c := range []struct {
		name     string
		a, b, c_ float64
	}{
		{`topicgate_topic_duplicates_skipped_total{topic="mc"}`, 1, 0, 0},
		{`topicgate_topic_messages_read_total{topic="mc"}`, 0, 1 + 2, 0}, // a consumer read, two acquired
		{`topicgate_statement_duration_seconds_count{kind="insert"}`, 2, 0, 0},
		{`topicgate_statement_duration_seconds_count{kind="ack"}`, 0, 1, 0},
		{`topicgate_sessions`, 1, 1, 0},
	} {
		require.Equal(t, []float64{c.a, c.b, c.c_}, []float64{ma[c.name], mb[c.name], mc[c.name]}, c.name)
	}
	require.Zero(t, mc["topicgate_txn_commits_total"], "C committed nothing")
	require.NotZero(t, ma["topicgate_txn_commits_total"])
	require.NotZero(t, mb["topicgate_txn_commits_total"])
	_, hasStore := ma["topicgate_store_disk_bytes"]
	require.False(t, hasStore, "the cluster store exports no LSM figures")

	// The cluster's own figures: the stream (above: the same everywhere),
	// each gateway's fold caught up with it, its connection and commits.
	stream := `{stream="TOPICGATE"}`
	require.Equal(t, 1.0, mc["topicgate_cluster_stream_up"+stream])
	require.NotZero(t, mc["topicgate_cluster_stream_messages"+stream])
	require.NotZero(t, mc["topicgate_cluster_stream_bytes"+stream])
	for i, srv := range []*httptest.Server{srvA, srvB, srvC} {
		// A scrape reads the fold's sequence and then asks the leader for
		// the stream's: a heartbeat landing in between (every gateway
		// renews one in the background) shows as a lag of one, so the
		// fold must catch up, not be caught up in the first scrape.
		within(t, 5*time.Second, func() error {
			m := scrape(t, srv)
			if last, fold := m["topicgate_cluster_stream_last_sequence"+stream], m["topicgate_cluster_fold_sequence"+stream]; last != fold {
				return fmt.Errorf("gateway %d's fold is at %v, the stream at %v", i, fold, last)
			}
			return nil
		})
	}
	for i, m := range []map[string]float64{ma, mb, mc} {
		require.Zero(t, m["topicgate_cluster_reconnects_total"], "gateway %d", i)
	}
	require.NotZero(t, ma["topicgate_store_commit_groups_total"])
	require.GreaterOrEqual(t, ma["topicgate_store_commit_requests_total"], ma["topicgate_store_commit_groups_total"])
	require.Zero(t, mc["topicgate_store_commit_groups_total"], "C wrote nothing")
	leader := g.streamLeader()
	leaderName := g.nodes.Nodes().Node(leader).Name
	require.Equal(t, 1.0, mc[`topicgate_cluster_stream_leader{stream="TOPICGATE",server="`+leaderName+`"}`], "%v", clusterSamples(mc))
	follower := (leader + 1) % 3
	followerName := g.nodes.Nodes().Node(follower).Name
	current := `topicgate_cluster_replica_current{stream="TOPICGATE",server="` + followerName + `"}`
	require.Equal(t, 1.0, mc[current])

	// A follower killed: the leader reports it behind, on every gateway.
	g.nodes.Kill(follower)
	d := within(t, 30*time.Second, func() error {
		if v := scrape(t, srvA)[current]; v != 0 {
			return fmt.Errorf("%s = %v", current, v)
		}
		return nil
	})
	t.Logf("follower %s killed: reported not current after %v", followerName, d.Round(time.Millisecond))
	require.Equal(t, 1.0, scrape(t, srvC)["topicgate_cluster_stream_up"+stream])
}

// TestClusterSysCluster: sys.cluster through either gateway shows the
// stream, its three nodes (one leader), both gateways by id and by the
// name they gave themselves (host and listen address), this one with its
// fold's sequence, and which of them holds the maintenance lease.
func TestClusterSysCluster(t *testing.T) {
	g := startGateways(t, 2, 2*time.Second)
	c := connect(t, g.gws[0])
	exec(t, c, "CREATE TOPIC t")
	exec(t, c, "INSERT INTO t (data) VALUES ('x')")
	host, _ := os.Hostname()
	var leases int
	for i, gw := range g.gws {
		cc := connect(t, gw)
		within(t, 10*time.Second, func() error {
			rows := queryText(t, cc, "SELECT kind, name, coalesce(role, ''), alive, coalesce(sequence, 0) > 0 FROM sys.cluster ORDER BY kind, name")
			var nodes, leaders, gateways int
			self := ""
			lease := false
			for _, r := range rows {
				f := strings.Fields(r)
				switch f[0] {
				case "node":
					nodes++
					if strings.Contains(r, "leader") {
						leaders++
					}
				case "gateway":
					gateways++
					if !strings.Contains(r, host) {
						return fmt.Errorf("gateway row %q does not name its host %q", r, host)
					}
					if strings.Contains(r, "this gateway") {
						self = r
					}
					lease = lease || strings.Contains(r, "maintenance lease")
				}
			}
			if nodes != 3 || leaders != 1 || gateways != 2 || self == "" || !strings.HasSuffix(self, "true true") {
				return fmt.Errorf("gateway %d: sys.cluster %q", i, rows)
			}
			if lease {
				leases++
			}
			t.Logf("gateway %d: %q", i, rows)
			return nil
		})
	}
	require.LessOrEqual(t, leases, 2)
}
