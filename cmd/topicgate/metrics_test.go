package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
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
	// COMMIT of a failed block, and a failed implicit transaction (a
	// multi-statement query whose second statement fails): rollbacks too.
	exec(t, c, "BEGIN")
	if _, err := c.Exec(ctx, "SELECT 1/0"); err == nil {
		t.Fatal("1/0 succeeded")
	}
	if tag := exec(t, c, "COMMIT"); tag.String() != "ROLLBACK" {
		t.Errorf("COMMIT of a failed block: tag %q, want ROLLBACK", tag)
	}
	if _, err := c.Exec(ctx, "INSERT INTO m (data) VALUES ('f'); SELECT 1/0"); err == nil {
		t.Fatal("the multi-statement query succeeded")
	}
	// Autocommit statements are transactions of their own: one that
	// commits, one the store refuses.
	exec(t, c, "INSERT INTO m (data) VALUES ('g')")
	if _, err := c.Exec(ctx, "INSERT INTO m (partition, data) VALUES (9, 'h')"); !errors.As(err, &pgErr) || pgErr.Code != "22023" {
		t.Fatalf("insert into a missing partition: %v, want 22023", err)
	}

	after := scrape(t, srv)
	for name, want := range map[string]float64{
		"topicgate_txn_commits_total":       2, // the block, the autocommit INSERT
		"topicgate_txn_rollbacks_total":     5, // ROLLBACK, the conflict, COMMIT of a failed block, the failed query, the refused INSERT
		"topicgate_txn_conflicts_total":     1,
		"topicgate_txn_commit_errors_total": 1, // the refused INSERT
	} {
		if got := after[name] - before[name]; got != want {
			t.Errorf("%s grew by %v, want %v", name, got, want)
		}
	}
	if got := after["topicgate_sessions"]; got != 2 {
		t.Errorf("topicgate_sessions = %v, want 2", got)
	}
	if got := after[`topicgate_partition_end_offset{topic="m",partition="0"}`]; got != 5 {
		t.Errorf("end offset of m/0 = %v, want 5 (a, b, c, d, g)", got)
	}
	if onCluster() {
		return // the Pebble engine's figures below; the cluster's are TestClusterMetrics's
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

// scrapeText fetches /metrics as text.
func scrapeText(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkExposition checks the text format: every family has one HELP and
// one TYPE line before its samples, and histograms have cumulative
// buckets ending in +Inf equal to _count.
func checkExposition(t *testing.T, text string) {
	t.Helper()
	typ := map[string]string{}
	help := map[string]bool{}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, _, _ = strings.Cut(name, " ")
			if help[name] {
				t.Errorf("HELP of %s twice", name)
			}
			help[name] = true
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, kind, _ := strings.Cut(rest, " ")
			if !help[name] || typ[name] != "" || seen[name] {
				t.Errorf("TYPE of %s out of place", name)
			}
			typ[name] = kind
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		fam := name
		if typ[fam] == "" {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suf); ok && typ[b] == "histogram" {
					fam = b
				}
			}
		}
		if typ[fam] == "" {
			t.Errorf("sample %q has no TYPE line before it", line)
		}
		seen[fam] = true
	}
}

// TestMetricsConsumersAndTopics checks the per-consumer, per-topic and
// latency series after reads, a duplicate, and a dead-letter move to a
// queue that does not exist (logged once however often it fails).
func TestMetricsConsumersAndTopics(t *testing.T) {
	var logs lockedLog
	a, err := start(config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), LogLevel: slog.LevelError,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	srv := httptest.NewServer(a.metricsHandler())
	defer srv.Close()
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC mc (CONSUMER s, CONSUMER w WITH (type = 'shared', max_processing_attempts = 1, "+
		"dead_letter_policy = 'move', dead_letter_queue = 'mc_dlq'))")
	exec(t, c, "INSERT INTO mc (producer_id, seqno, data) VALUES ('p', 1, 'a'), ('p', 2, 'b'), ('p', 3, 'c')")
	exec(t, c, "INSERT INTO mc (producer_id, seqno, data) VALUES ('p', 3, 'c')") // a duplicate
	exec(t, c, "SELECT data FROM mc WITH (CONSUMER = s) LIMIT 1")
	exec(t, c, "SELECT data FROM mc")
	for i := 0; i < 2; i++ {
		exec(t, c, "SELECT data FROM mc WITH (CONSUMER = w) LIMIT 1")
		exec(t, c, "UPDATE mc WITH (CONSUMER = w) SET state = 'rejected' WHERE partition = 0 AND offset = 0")
	}
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO mc (data) VALUES ('d')")
	exec(t, c, "COMMIT")

	text := scrapeText(t, srv)
	checkExposition(t, text)
	got := scrape(t, srv)
	lbl := func(name, consumer string) string {
		return name + `{topic="mc",consumer="` + consumer + `",partition="0"}`
	}
	for name, want := range map[string]float64{
		lbl("topicgate_consumer_committed_offset", "s"):              1,
		lbl("topicgate_consumer_lag_messages", "s"):                  3,
		lbl("topicgate_consumer_committed_offset", "w"):              0,
		lbl("topicgate_shared_available_messages", "w"):              4,
		lbl("topicgate_shared_acquired_messages", "w"):               0,
		lbl("topicgate_shared_delayed_messages", "w"):                0,
		lbl("topicgate_shared_dead_lettered_total", "w"):             0,
		lbl("topicgate_shared_dead_letter_failures_total", "w"):      2,
		lbl("topicgate_shared_archived_total", "w"):                  0,
		`topicgate_topic_messages_written_total{topic="mc"}`:         4,
		`topicgate_topic_duplicates_skipped_total{topic="mc"}`:       1,
		`topicgate_topic_messages_read_total{topic="mc"}`:            1 + 3 + 2, // a consumer read, SELECT of a, b, c, two acquires
		`topicgate_statement_duration_seconds_count{kind="commit"}`:  1,
		`topicgate_statement_duration_seconds_count{kind="ack"}`:     2,
		`topicgate_statement_duration_seconds_count{kind="acquire"}`: 2,
		`topicgate_statement_duration_seconds_count{kind="read"}`:    1,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if v := got[lbl("topicgate_consumer_lag_seconds", "s")]; v < 0 {
		t.Errorf("lag seconds %v", v)
	}
	if _, ok := got[lbl("topicgate_shared_available_messages", "s")]; ok {
		t.Errorf("a streaming consumer has shared-consumer series")
	}
	if got[`topicgate_topic_bytes_written_total{topic="mc"}`] <= 0 || got[`topicgate_topic_bytes_read_total{topic="mc"}`] <= 0 {
		t.Errorf("bytes written/read not counted")
	}
	// Inserts: three autocommit INSERTs and one in the block.
	ins := `topicgate_statement_duration_seconds_count{kind="insert"}`
	if got[ins] != 3 || got[`topicgate_statement_duration_seconds_bucket{kind="insert",le="+Inf"}`] != got[ins] ||
		got[`topicgate_statement_duration_seconds_sum{kind="insert"}`] <= 0 {
		t.Errorf("insert histogram: count %v, +Inf %v, sum %v", got[ins],
			got[`topicgate_statement_duration_seconds_bucket{kind="insert",le="+Inf"}`], got[`topicgate_statement_duration_seconds_sum{kind="insert"}`])
	}
	if n := strings.Count(logs.String(), "dead-letter move failed"); n != 1 {
		t.Errorf("failed move logged %d times, want once:\n%s", n, logs.String())
	}

	// Counters of a dropped topic go away.
	exec(t, c, "DROP TOPIC mc")
	if text := scrapeText(t, srv); strings.Contains(text, `topic="mc"`) {
		t.Errorf("dropped topic still exported")
	}
}

// lockedLog is a log sink safe for the server's goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
