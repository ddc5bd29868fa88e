package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// seedBrowse creates topic events (2 partitions): partition 0 holds 60
// messages with producers, groups, attributes, Kafka keys, headers and
// JSON bodies, one of which (offset 3, far from the newest) says
// "needle"; messages 30 and up were written after the returned time.
func seedBrowse(t *testing.T, cs *consoleServer) string {
	c := cs.admin
	exec(t, c, "CREATE TOPIC events (CONSUMER audit) WITH (min_active_partitions = 2)")
	insert := func(i int) {
		note := "hay"
		if i == 3 {
			note = "needle"
		}
		kind := []string{"deposit", "withdrawal", "refund"}[i%3]
		attrs := fmt.Sprintf(`{"kind": %q}`, kind)
		if i%7 == 0 {
			attrs = fmt.Sprintf(`{"kind": %q, "flag": "x"}`, kind)
		}
		group := "g-even"
		if i%2 == 1 {
			group = "g-odd"
		}
		body := fmt.Sprintf(`{"n": %d, "note": %q}`, i, note)
		hdrs := fmt.Sprintf(`[{"key": "trace", "value": "t%d"}]`, i%6)
		if i%5 == 0 {
			exec(t, c, `INSERT INTO events (partition, producer_id, seqno, message_group_id, attrs, key, headers, data)
				VALUES (0, 'pa', $1, $2, $3::jsonb, $4::text::bytea, $5::jsonb, $6::text::bytea)`,
				i, group, attrs, fmt.Sprintf("user-%d", i%4), hdrs, body)
		} else {
			exec(t, c, `INSERT INTO events (partition, message_group_id, attrs, key, headers, data)
				VALUES (0, $1, $2::jsonb, $3::text::bytea, $4::jsonb, $5::text::bytea)`,
				group, attrs, fmt.Sprintf("user-%d", i%4), hdrs, body)
		}
	}
	for i := range 30 {
		insert(i)
	}
	time.Sleep(20 * time.Millisecond)
	var since string
	require.NoError(t, c.QueryRow(context.Background(), `SELECT (now() - Interval('PT0.01S'))::text`).Scan(&since))
	time.Sleep(20 * time.Millisecond)
	for i := 30; i < 60; i++ {
		insert(i)
	}
	exec(t, c, `INSERT INTO events (partition, data) VALUES (1, 'elsewhere')`)
	return since
}

// offsets is the first cell (the offset) of each row.
func offsets(rows [][]string) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out
}

// TestConsoleBrowseFilters: each of the message browser's filters shows
// the messages a SELECT with the same predicate returns; a filter finds
// a message far from the newest by paging through bounded scans; the
// exports (JSON lines, CSV) hold SQL's rows; filters that are not valid
// are refused with 4xx; browsing and exporting create no consumer and
// move no position.
func TestConsoleBrowseFilters(t *testing.T) {
	cs := startConsoleServer(t)
	since := seedBrowse(t, cs)
	before := positions(t, cs.admin)
	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")

	show := func(name string, params url.Values) [][]string {
		t.Helper()
		params.Set("topic", "events")
		if params.Get("partition") == "" {
			params.Set("partition", "0")
		}
		b.run(name, chromedp.Navigate(cs.base+"/messages?"+params.Encode()), chromedp.WaitVisible(chromedp.CSS("#msgs")))
		return b.cells("#msgs tbody tr")
	}
	for _, f := range []struct {
		name   string
		params url.Values
		pred   string
	}{
		{"producer", url.Values{"producer": {"pa"}}, `producer_id = 'pa'`},
		{"group", url.Values{"group": {"g-odd"}}, `message_group_id = 'g-odd'`},
		{"attribute", url.Values{"attr": {"kind"}, "attrval": {"refund"}}, `attrs->>'kind' = 'refund'`},
		{"attribute key", url.Values{"attr": {"flag"}}, `attrs ? 'flag'`},
		{"kafka key", url.Values{"key": {"user-1"}}, `key = 'user-1'::bytea`},
		{"header", url.Values{"hdr": {"trace"}, "hdrval": {"t5"}}, `EXISTS (SELECT 1 FROM jsonb_array_elements(headers) h WHERE h->>'key' = 'trace' AND h->>'value' = 't5')`},
		{"body text", url.Values{"text": {`"n": 4`}}, `strpos(convert_from(data, 'UTF8'), '"n": 4') > 0`},
		{"where", url.Values{"where": {`attrs->>'kind' = 'withdrawal' AND "offset" % 2 = 0`}}, `attrs->>'kind' = 'withdrawal' AND "offset" % 2 = 0`},
		{"two filters", url.Values{"group": {"g-even"}, "attr": {"kind"}, "attrval": {"deposit"}, "limit": {"5"}},
			`message_group_id = 'g-even' AND attrs->>'kind' = 'deposit'`},
	} {
		limit := "20"
		if l := f.params.Get("limit"); l != "" {
			limit = l
		}
		want := offsets(sqlTable(t, cs.admin, `SELECT "offset" FROM events WHERE partition = 0 AND (`+f.pred+`) ORDER BY "offset" DESC LIMIT `+limit))
		require.NotEmpty(t, want, f.name)
		got := offsets(show(f.name, f.params))
		require.Equal(t, want, got, "filter %s", f.name)
		require.Contains(t, b.text("#scanned"), "Scanned offsets", f.name)
	}

	// Since: the first offset written at or after a time, and up from
	// there.
	got := show("since", url.Values{"since": {since}})
	want := offsets(sqlTable(t, cs.admin, `SELECT "offset" FROM events WHERE partition = 0 AND written_at >= $1::timestamptz ORDER BY "offset" LIMIT 20`, since))
	require.Equal(t, "30", want[0])
	require.Equal(t, want, offsets(got))
	require.Equal(t, "30", b.text("#since-offset"))
	// Since is a floor for the pages below an offset too.
	got = show("since-before", url.Values{"since": {since}, "before": {"40"}})
	require.Equal(t, []string{"39", "38", "37", "36", "35", "34", "33", "32", "31", "30"}, offsets(got))
	require.Zero(t, eval[int](b, "no-older", `document.querySelectorAll("#older").length`))
	require.NotZero(t, eval[int](b, "newer", `document.querySelectorAll("#newer").length`))

	// Through the form (htmx replaces the table): the attribute filter.
	b.run("form", chromedp.Navigate(cs.base+"/messages?topic=events&partition=0"), chromedp.WaitVisible(chromedp.CSS("#msgs")),
		chromedp.SetValue(chromedp.CSS("#f-attr"), "kind"), chromedp.SetValue(chromedp.CSS("#f-attrval"), "deposit"),
		chromedp.SetValue(chromedp.CSS("#f-limit"), "50"), chromedp.Click(chromedp.CSS("#f-show")),
		chromedp.WaitVisible(chromedp.CSS(`#msgs[data-q="partition=0 limit=50 view=auto attr=\"kind\" attrval=\"deposit\" scan=10000"]`)))
	want = offsets(sqlTable(t, cs.admin, `SELECT "offset" FROM events WHERE partition = 0 AND attrs @> '{"kind": "deposit"}'::jsonb ORDER BY "offset" DESC`))
	require.Len(t, want, 20)
	require.Equal(t, want, offsets(b.cells("#msgs tbody tr")))

	// Paging: 10 offsets a scan, newest first, the needle at offset 3 is
	// found by continuing below each scanned window.
	show("needle", url.Values{"text": {"needle"}, "scan": {"10"}})
	require.Equal(t, "50", eval[string](b, "lo", `document.querySelector("#scanned").dataset.lo`))
	pages := 1
	for len(b.cells("#msgs tbody tr")) == 0 {
		lo := eval[string](b, "lo", `document.querySelector("#scanned").dataset.lo`)
		next, err := strconv.Atoi(lo)
		require.NoError(t, err)
		b.run("continue", chromedp.Click(chromedp.CSS("#continue")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#msgs[data-q^="partition=0 before=%d "]`, next))))
		pages++
		require.Less(t, pages, 10)
	}
	require.Equal(t, 6, pages, "offsets 50-59, 40-49, ... 0-9")
	want = offsets(sqlTable(t, cs.admin, `SELECT "offset" FROM events WHERE partition = 0 AND strpos(convert_from(data, 'UTF8'), 'needle') > 0`))
	require.Equal(t, []string{"3"}, want)
	require.Equal(t, want, offsets(b.cells("#msgs tbody tr")))
	b.shoot("filters")
	// Upwards from offset 0 the same needle is on the first page, and the
	// next scan continues after the window.
	show("needle-up", url.Values{"text": {"needle"}, "scan": {"10"}, "from": {"0"}})
	require.Equal(t, []string{"3"}, offsets(b.cells("#msgs tbody tr")))
	require.Contains(t, b.text("#continue"), "continue from offset 10")

	// A filter that is not valid SQL, a column that does not exist, a
	// division by zero, a consumer read (which would move a position:
	// refused by BEGIN READ ONLY), half a filter: a message and 4xx.
	c := consoleClient(t)
	code, _ := httpLogin(t, c, cs.base, "admin", "adminpw")
	require.Equal(t, http.StatusOK, code)
	for _, bad := range []struct {
		params url.Values
		msg    string
	}{
		{url.Values{"where": {`attrs ->>`}}, "syntax error"},
		{url.Values{"where": {`nosuch = 1`}}, "nosuch"},
		{url.Values{"where": {`1 / ("offset" - "offset") = 1`}}, "division by zero"},
		{url.Values{"where": {`EXISTS (SELECT 1 FROM events WITH (CONSUMER = audit))`}}, ""},
		// Out of the parentheses, a consumer read of its own: SQL refuses
		// it inside BEGIN READ ONLY (25006), the console does not look.
		{url.Values{"where": {`false) UNION ALL SELECT "offset", written_at::text, producer_id, seqno, message_group_id, codec,
			attrs::text, key, headers::text, data FROM events WITH (CONSUMER = audit) WHERE (true`}}, "25006"},
		{url.Values{"where": {`true; DELETE FROM events WITH (CONSUMER = audit) WHERE partition = 0 AND "offset" = 1`}}, ""},
		{url.Values{"attrval": {"deposit"}}, "needs the attribute"},
		{url.Values{"since": {"not a time"}}, ""},
		{url.Values{"scan": {"0"}}, "scan"},
	} {
		bad.params.Set("topic", "events")
		code, page := get(t, c, cs.base, "/messages?"+bad.params.Encode())
		require.GreaterOrEqual(t, code, 400, "%v: %s", bad.params, page)
		require.Less(t, code, 500, "%v: %s", bad.params, page)
		require.Contains(t, page, `id="error"`, bad.params)
		require.Contains(t, page, bad.msg, bad.params)
		if m := regexp.MustCompile(`id="error" role="alert">([^<]*)<`).FindStringSubmatch(page); m != nil {
			t.Logf("%s: %d %s", bad.params.Encode(), code, m[1])
		}
		code, _ = get(t, c, cs.base, "/messages/export?format=jsonl&"+bad.params.Encode())
		require.GreaterOrEqual(t, code, 400, bad.params)
		require.Less(t, code, 500, bad.params)
	}
	b.run("bad-where", chromedp.Navigate(cs.base+"/messages?topic=events&where=%29%29"), chromedp.WaitVisible(chromedp.CSS("#error")))
	require.Contains(t, b.text("#error"), "syntax error")

	// Export: the page's links, and a range, as JSON lines and CSV, hold
	// SQL's rows.
	show("export-page", url.Values{"attr": {"kind"}, "attrval": {"refund"}})
	href := eval[string](b, "export-href", `document.querySelector("#export-jsonl").getAttribute("href")`)
	require.Contains(t, href, "attr=kind")
	lines := exportJSONL(t, c, cs.base, href)
	want = offsets(sqlTable(t, cs.admin, `SELECT "offset" FROM events WHERE partition = 0 AND attrs->>'kind' = 'refund' ORDER BY "offset"`))
	var gotOffsets []string
	for _, l := range lines {
		gotOffsets = append(gotOffsets, strconv.FormatInt(int64(l["offset"].(float64)), 10))
	}
	require.Equal(t, want, gotOffsets)

	full := sqlTable(t, cs.admin, `SELECT partition, "offset", coalesce(producer_id, ''), coalesce(seqno::text, ''), message_group_id, codec,
		attrs::text, convert_from(key, 'UTF8'), headers::text, convert_from(data, 'UTF8'), written_at::text
		FROM events WHERE partition = 0 AND "offset" >= 5 AND "offset" < 45 ORDER BY "offset"`)
	require.Len(t, full, 40)
	lines = exportJSONL(t, c, cs.base, "/messages/export?topic=events&partition=0&from=5&to=45&format=jsonl")
	require.Len(t, lines, 40)
	for i, l := range lines {
		attrs, _ := json.Marshal(l["attrs"])
		hdrs, _ := json.Marshal(l["headers"])
		str := func(k string) string {
			if l[k] == nil {
				return ""
			}
			if f, ok := l[k].(float64); ok {
				return strconv.FormatInt(int64(f), 10)
			}
			return l[k].(string)
		}
		require.Equal(t, full[i][:6], []string{str("partition"), str("offset"), str("producer_id"), str("seqno"), str("message_group_id"), str("codec")}, "row %d", i)
		require.JSONEq(t, full[i][6], string(attrs))
		require.JSONEq(t, full[i][8], string(hdrs))
		require.Equal(t, full[i][7], str("key"))
		require.Equal(t, full[i][9], str("data"))
		require.Equal(t, full[i][10], str("written_at"))
	}

	resp := fetch(t, c, cs.base, "/messages/export?topic=events&partition=0&from=5&to=45&format=csv")
	require.Equal(t, `attachment; filename="events-p0-5-45.csv"`, resp.Header.Get("Content-Disposition"))
	recs, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, []string{"partition", "offset", "written_at", "created_at", "producer_id", "seqno", "message_group_id",
		"codec", "attrs", "key", "headers", "data"}, recs[0])
	require.Len(t, recs, 41)
	for i, r := range recs[1:] {
		require.Equal(t, []string{full[i][0], full[i][1], full[i][10], full[i][2], full[i][3], full[i][4], full[i][5], full[i][6], full[i][7], full[i][8], full[i][9]},
			[]string{r[0], r[1], r[2], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]}, "row %d", i)
	}
	// A filtered CSV, by a free-form expression.
	resp = fetch(t, c, cs.base, "/messages/export?"+url.Values{"topic": {"events"}, "partition": {"0"}, "format": {"csv"},
		"where": {`"offset" % 10 = 7`}}.Encode())
	recs, err = csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	require.NoError(t, err)
	want = append([]string{"offset"}, offsets(sqlTable(t, cs.admin, `SELECT "offset" FROM events WHERE partition = 0 AND "offset" % 10 = 7 ORDER BY "offset"`))...)
	got = nil
	for _, r := range recs {
		got = append(got, []string{r[1]})
	}
	require.Equal(t, want, offsets(got))
	code, _ = get(t, c, cs.base, "/messages/export?topic=events&partition=0&format=xml")
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = get(t, c, cs.base, "/messages/export?topic=events&partition=9&format=csv")
	require.Equal(t, http.StatusNotFound, code)

	require.Equal(t, before, positions(t, cs.admin), "browsing or exporting moved a position or created a consumer")
	require.Equal(t, [][]string{{"audit"}}, sqlTable(t, cs.admin, `SELECT DISTINCT consumer FROM sys.consumers WHERE topic = 'events'`))
}

// fetch GETs path with c's login and checks the answer is 200.
func fetch(t *testing.T, c *http.Client, base, path string) *http.Response {
	t.Helper()
	resp, err := c.Get(base + path)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return resp
}

// exportJSONL fetches a JSON lines export and decodes its lines.
func exportJSONL(t *testing.T, c *http.Client, base, path string) []map[string]any {
	t.Helper()
	resp := fetch(t, c, base, path)
	defer resp.Body.Close()
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Disposition"), `attachment; filename="events-p0-`), resp.Header.Get("Content-Disposition"))
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestConsolePartitionTree: a topic whose partition split shows its
// partitions as a tree, with parents, children, key ranges, write rates
// and throttling as sys.partitions has them.
func TestConsolePartitionTree(t *testing.T) {
	cs := startConsoleServer(t)
	exec(t, cs.admin, `CREATE TOPIC clicks WITH (min_active_partitions = 2, max_active_partitions = 4,
		auto_partitioning_strategy = 'scale_up')`)
	for i := range 20 {
		exec(t, cs.admin, `INSERT INTO clicks (producer_id, seqno, data) VALUES ($1, $2, 'click')`, fmt.Sprintf("user-%d", i%3), i+1)
	}
	exec(t, cs.admin, `ALTER TOPIC clicks SPLIT PARTITION 0`)
	exec(t, cs.admin, `INSERT INTO clicks (data) VALUES ('after the split')`)
	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")
	b.run("topic", chromedp.Navigate(cs.base+"/topic?name=clicks"), chromedp.WaitVisible(chromedp.CSS("#partitions")))
	got := b.cells("#partitions tbody tr")
	depths := eval[[]string](b, "depths", `Array.from(document.querySelectorAll("#partitions tbody tr")).map(r => r.dataset.depth)`)
	// 0 split into 2 and 3: the tree lists them under it.
	require.Equal(t, []string{"0", "2", "3", "1"}, offsets(got))
	require.Equal(t, []string{"0", "1", "1", "0"}, depths)
	b.shoot("partition-tree")
	want := sqlTable(t, cs.admin, `SELECT partition, state, start_offset, end_offset, messages, bytes, coalesce(parent::text, ''),
		array_to_string(children, ', '), coalesce(key_from || ' – ' || key_to, ''), round(write_rate)::text, round(throttled_seconds::numeric, 1)::text
		FROM sys.partitions WHERE topic = 'clicks' ORDER BY partition`)
	byPart := map[string][]string{}
	for _, r := range want {
		byPart[r[0]] = r
	}
	require.Equal(t, "inactive", byPart["0"][1])
	require.Equal(t, "2, 3", byPart["0"][7])
	require.Equal(t, "0", byPart["2"][6])
	for _, r := range got {
		w := byPart[r[0]]
		require.Equal(t, w[:6], r[:6], "partition %s", r[0])
		require.Equal(t, w[6:9], r[7:10], "partition %s: parent, children, key range", r[0])
		require.NotEmpty(t, r[10], "write rate")
		require.NotEmpty(t, r[12], "throttled")
	}
}

// TestConsoleQueueFigures: a shared consumer's queue on its topic's page,
// now derived from the one read of sys.consumers the page makes, shows
// sys.consumers' figures per partition and in total, and the dead-letter
// queue's name and depth as sys.consumer_options and sys.topics have them;
// beside it a streaming consumer's rows are in the consumers' table.
func TestConsoleQueueFigures(t *testing.T) {
	cs := startConsoleServer(t)
	c := cs.admin
	exec(t, c, "CREATE TOPIC tasks_dlq")
	exec(t, c, `CREATE TOPIC tasks (CONSUMER workers WITH (type = 'shared', max_processing_attempts = 3,
		dead_letter_policy = 'move', dead_letter_queue = 'tasks_dlq'), CONSUMER tail) WITH (min_active_partitions = 3)`)
	for i := range 12 {
		exec(t, c, `INSERT INTO tasks (partition, data) VALUES ($1, $2::text::bytea)`, i%3, fmt.Sprintf("task %d", i))
	}
	// A worker's session holds two messages and rejects one of them:
	// acquired 1, dead-lettered 1, the DLQ 1 deep.
	worker := cs.conn(t, "admin", "adminpw")
	rows := sqlTable(t, worker, `SELECT partition, "offset" FROM tasks WITH (CONSUMER = workers, PROCESSING_TIMEOUT = '300s') LIMIT 2`)
	require.Len(t, rows, 2)
	exec(t, worker, `UPDATE tasks WITH (CONSUMER = workers) SET state = 'rejected' WHERE partition = `+rows[0][0]+` AND "offset" = `+rows[0][1])

	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")
	b.run("tasks", chromedp.Navigate(cs.base+"/topic?name=tasks"), chromedp.WaitVisible(chromedp.CSS("#queue-workers")))
	want := sqlTable(t, c, `SELECT partition, committed_offset, available, acquired, delayed, archived, archived_total, dead_lettered,
		dead_letter_failures FROM sys.consumers WHERE topic = 'tasks' AND consumer = 'workers' ORDER BY partition`)
	got := b.cells("#queue-workers .queue-partitions tbody tr")
	require.Len(t, got, 3)
	for i, w := range want {
		// The page's columns: partition, first unfinished, available,
		// acquired, delayed, archived, oldest unacked, archived since
		// start, dead-lettered, DLQ failures, last DLQ error.
		g := got[i]
		require.Equal(t, w, []string{g[0], g[1], g[2], g[3], g[4], g[5], g[7], g[8], g[9]}, "partition %d", i)
	}
	for _, f := range []string{"available", "acquired", "delayed", "archived"} {
		require.Equal(t, strconv.FormatInt(sumOf(t, c, f), 10), b.text("#queue-workers .q-"+f), f)
	}
	require.Equal(t, "1", b.text("#queue-workers .q-acquired"))
	dead := 0
	for _, g := range got {
		n, err := strconv.Atoi(g[8])
		require.NoError(t, err)
		dead += n
	}
	require.Equal(t, 1, dead, "dead-lettered")
	var dlqName, dlqDepth string
	require.NoError(t, c.QueryRow(context.Background(), `SELECT o.dead_letter_queue, t.messages::text FROM sys.consumer_options o
		JOIN sys.topics t ON t.topic = o.dead_letter_queue WHERE o.topic = 'tasks' AND o.consumer = 'workers'`).Scan(&dlqName, &dlqDepth))
	require.Equal(t, "1", dlqDepth)
	require.Contains(t, b.text("#queue-workers .q-dlq"), dlqName)
	require.Equal(t, dlqDepth, b.text("#queue-workers .q-dlq-depth"))
	// The delivery-count histogram: the held message delivered once, the
	// others never, as sys.consumer_deliveries sums them.
	hist := sqlTable(t, c, `SELECT deliveries, sum(messages)::text FROM sys.consumer_deliveries
		WHERE topic = 'tasks' AND consumer = 'workers' GROUP BY deliveries ORDER BY deliveries`)
	require.Equal(t, []string{"1", "1"}, hist[len(hist)-1], "one message delivered once")
	bars := b.cells("#queue-workers table.deliveries tbody tr")
	require.Len(t, bars, len(hist))
	for i := range hist {
		require.Equal(t, hist[i], bars[i][:2], "deliveries %s", hist[i][0])
	}
	// A topic without a key space or splits has no tree columns.
	require.Zero(t, eval[int](b, "no-tree", `document.querySelectorAll("#partitions td.parent, #partitions td.keys").length`))
	// The consumers' table: both consumers' rows, as sys.consumers.
	got = b.cells("#consumers tbody tr")
	cons := sqlTable(t, c, `SELECT consumer, type, partition, committed_offset, end_offset, lag_messages FROM sys.consumers
		WHERE topic = 'tasks' ORDER BY consumer, partition`)
	require.Len(t, got, 6)
	for i := range cons {
		require.Equal(t, cons[i], got[i][:6], "consumer row %d", i)
	}
}

// sumOf is a shared consumer's figure of tasks summed over partitions.
func sumOf(t *testing.T, c *pgx.Conn, col string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, c.QueryRow(context.Background(),
		`SELECT sum(`+col+`)::int8 FROM sys.consumers WHERE topic = 'tasks' AND consumer = 'workers'`).Scan(&n))
	return n
}
