package main

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// scrape fetches /metrics and returns each sample by name (labels kept).
func scrape(t *testing.T, srv *httptest.Server) map[string]float64 {
	t.Helper()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetrics drives commits, a rollback and a conflict through pgx and
// checks that /metrics counts them, and that the store's LSM figures are
// exported.
func TestMetrics(t *testing.T) {
	a := startTestServer(t)
	srv := httptest.NewServer(a.metricsHandler())
	defer srv.Close()
	ctx := context.Background()
	c := connect(t, a)
	other := connect(t, a)
	exec(t, c, "CREATE TOPIC m (CONSUMER c) WITH (min_active_partitions = 1)")
	exec(t, c, "INSERT INTO m (data) VALUES ('a'), ('b'), ('c')")
	before := scrape(t, srv)

	exec(t, c, "BEGIN")
	exec(t, c, "SELECT data FROM m WITH (CONSUMER = c) LIMIT 1")
	exec(t, c, "INSERT INTO m (data) VALUES ('d')")
	exec(t, c, "COMMIT")
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO m (data) VALUES ('e')")
	exec(t, c, "ROLLBACK")
	exec(t, c, "BEGIN")
	exec(t, c, "SELECT data FROM m WITH (CONSUMER = c) LIMIT 1")
	exec(t, other, "UPDATE sys.consumers SET committed_offset = 0 WHERE topic = 'm' AND consumer = 'c' AND partition = 0")
	_, err := c.Exec(ctx, "COMMIT")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("commit after a position reset: %v, want 40001", err)
	}

	after := scrape(t, srv)
	for name, want := range map[string]float64{
		"topicgate_txn_commits_total":   1,
		"topicgate_txn_rollbacks_total": 1,
		"topicgate_txn_conflicts_total": 1,
	} {
		if got := after[name] - before[name]; got != want {
			t.Errorf("%s grew by %v, want %v", name, got, want)
		}
	}
	if got := after["topicgate_sessions"]; got != 2 {
		t.Errorf("topicgate_sessions = %v, want 2", got)
	}
	if got := after[`topicgate_partition_end_offset{topic="m",partition="0"}`]; got != 4 {
		t.Errorf("end offset of m/0 = %v, want 4 (a, b, c, d)", got)
	}
	if after["topicgate_store_disk_bytes"] <= 0 || after["topicgate_store_memtable_bytes"] <= 0 {
		t.Errorf("store sizes not exported: disk %v, memtable %v", after["topicgate_store_disk_bytes"], after["topicgate_store_memtable_bytes"])
	}
	// Every acknowledged write between the two scrapes was synced, in
	// at least one group commit that carried at least one request each.
	for _, name := range []string{"topicgate_store_wal_syncs_total", "topicgate_store_wal_sync_seconds_total",
		"topicgate_store_commit_groups_total", "topicgate_store_commit_requests_total"} {
		if after[name] <= before[name] {
			t.Errorf("%s did not grow: %v -> %v", name, before[name], after[name])
		}
	}
	if g, r := after["topicgate_store_commit_groups_total"], after["topicgate_store_commit_requests_total"]; r < g {
		t.Errorf("commit requests %v < groups %v", r, g)
	}
	for _, name := range []string{"topicgate_store_l0_files", "topicgate_store_l0_sublevels", "topicgate_store_flushes_total",
		"topicgate_store_compactions_total", "topicgate_store_compaction_debt_bytes", "topicgate_store_block_cache_hits_total",
		"topicgate_store_reclaims_total"} {
		if _, ok := after[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
}
