package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The console's live charts (console/samples.go, live.go): the consumer
// and cluster pages against SQL, a lag chart moving while a producer
// runs, and what a role without privileges sees of them.

// waitJS waits until the JavaScript predicate expr holds in the page (the
// browser received an event), polling every 50 ms for at most
// stepTimeout.
func (b *browser) waitJS(name, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		if eval[bool](b, name, "(() => { try { return !!("+expr+") } catch (e) { return false } })()") {
			return
		}
		if time.Now().After(deadline) {
			b.check(name, fmt.Errorf("%s did not become true in %v", expr, stepTimeout))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chart is a live chart's data as the page holds it: times, then one
// array per line.
func (b *browser) chart(id string) [][]*float64 {
	b.t.Helper()
	return eval[[][]*float64](b, "chart "+id, fmt.Sprintf(`document.getElementById(%q).chartData || []`, id))
}

// sample takes a sample, waits until chart id received it and returns
// the value of its line i at that sample (the sampler's own ticks may
// add others after it).
func (b *browser) sample(cs *consoleServer, id string, i int) (float64, bool) {
	b.t.Helper()
	seq, at := cs.a.console.SampleNow()
	b.waitJS("sample "+id, fmt.Sprintf(`Number(document.getElementById(%q).dataset.seq) >= %d`, id, seq))
	return valueAt(b.chart(id), i, float64(at.UnixMilli())/1000)
}

// valueAt is the value of line i of a chart at time at (unix seconds).
func valueAt(data [][]*float64, i int, at float64) (float64, bool) {
	if len(data) <= i {
		return 0, false
	}
	for j := len(data[0]) - 1; j >= 0; j-- {
		if data[0][j] != nil && *data[0][j] == at {
			if data[i][j] == nil {
				return 0, false
			}
			return *data[i][j], true
		}
	}
	return 0, false
}

// sqlInt is one integer a query returns.
func sqlInt(t *testing.T, cs *consoleServer, q string, args ...any) int64 {
	t.Helper()
	var n int64
	require.NoError(t, cs.admin.QueryRow(context.Background(), q, args...).Scan(&n))
	return n
}

// liveHistory opens a live stream with c and returns its first event
// (history) and its status.
func liveHistory(t *testing.T, c *http.Client, base, path string) (int, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var first *sseEvent
	err = readEvents(resp.Body, func(e sseEvent) bool { first = &e; return false })
	if first == nil {
		t.Fatalf("the stream %s ended without an event: %v", path, err)
	}
	require.Equal(t, "history", first.name)
	return resp.StatusCode, first.data
}

// readEvents reads server-sent events from body, each to fn until it
// returns false or the stream ends; an event whose data is not a JSON
// object is skipped.
func readEvents(body io.Reader, fn func(sseEvent) bool) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			var d map[string]any
			if json.Unmarshal([]byte(v), &d) == nil && !fn(sseEvent{name: name, data: d}) {
				return nil
			}
		}
	}
	return sc.Err()
}

// historyAt is the value of line i of a history event at time at, -1
// if none.
func historyAt(d map[string]any, i int, at float64) float64 {
	ts := d["t"].([]any)
	vals := d["v"].([]any)[i].([]any)
	for j := range ts {
		if ts[j].(float64) == at && vals[j] != nil {
			return vals[j].(float64)
		}
	}
	return -1
}

// colsOf is the first n cells of each row.
func colsOf(rows [][]string, n int) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = r[:min(n, len(r))]
	}
	return out
}

// lastOfLine is the last non-null value of line i of a history event.
func lastOfLine(d map[string]any, i int) float64 {
	lines := d["v"].([]any)
	vals := lines[i].([]any)
	for j := len(vals) - 1; j >= 0; j-- {
		if vals[j] != nil {
			return vals[j].(float64)
		}
	}
	return -1
}

// TestConsoleLive opens a consumer's page from the topic page and the
// Cluster page, checks them against SQL, watches the consumer's lag
// chart and the throughput chart move while a producer runs, and checks
// that a role without privileges on a topic gets no series of it and no
// page of its consumer.
func TestConsoleLive(t *testing.T) {
	cs := startConsoleServer(t)
	seedConsole(t, cs)
	exec(t, cs.admin, "CREATE TOPIC hidden (CONSUMER watcher)")
	exec(t, cs.admin, `INSERT INTO hidden (data) VALUES ('x')`)
	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")

	// Consumers (in the nav): every consumer, its lag summed.
	b.run("consumers", chromedp.Click(chromedp.CSS("#nav-consumers")), chromedp.WaitVisible(chromedp.CSS("#consumer-list")))
	require.Equal(t, sqlTable(t, cs.admin, `SELECT topic, consumer, min(type), count(*), sum(lag_messages)::bigint
		FROM sys.consumers GROUP BY topic, consumer ORDER BY topic, consumer`), colsOf(b.cells("#consumer-list tbody tr"), 5))

	// The consumer's page, from the topic page's consumer table.
	b.run("topic", chromedp.Navigate(cs.base+"/topic?name=orders"), chromedp.WaitVisible(chromedp.CSS("#consumers")))
	b.run("consumer", chromedp.Click(chromedp.CSS(`#consumers tr[data-partition="0"] td.consumer a`)),
		chromedp.WaitVisible(chromedp.CSS("#consumer-partitions")))
	require.Equal(t, "billing", b.text("#consumer-name"))
	got := b.cells("#consumer-partitions tbody tr")
	want := sqlTable(t, cs.admin, `SELECT partition, type, committed_offset, end_offset, lag_messages FROM sys.consumers
		WHERE topic = 'orders' AND consumer = 'billing' ORDER BY partition`)
	require.Len(t, got, 3)
	for i := range want {
		require.Equal(t, want[i], got[i][:5], "partition %d", i)
	}
	lag := sqlInt(t, cs, `SELECT sum(lag_messages)::bigint FROM sys.consumers WHERE topic = 'orders' AND consumer = 'billing'`)
	require.Equal(t, int64(26), lag, "30 messages, 4 read")
	require.Equal(t, strconv.FormatInt(lag, 10), b.text("#c-lag"))

	// The lag chart: the hour held, then each sample as it is taken.
	b.waitJS("chart-history", `document.getElementById("lag-chart").chartData[0].length > 0`)
	v, ok := b.sample(cs, "lag-chart", 1)
	require.True(t, ok)
	require.Equal(t, float64(lag), v)

	// A producer runs: the chart grows and its last value climbs.
	prod := cs.conn(t, "admin", "adminpw")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var produced sync.Map
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				produced.Store("n", i)
				return
			default:
			}
			if _, err := prod.Exec(context.Background(), `INSERT INTO orders (data) VALUES ($1::text::bytea)`, fmt.Sprintf("live %d", i)); err != nil {
				t.Errorf("producing: %v", err)
				produced.Store("n", i)
				return
			}
		}
	}()
	before := b.chart("lag-chart")
	prev := v
	for range 3 {
		// Wait for the producer to write more, then sample.
		goal := int64(prev) + 5
		require.Eventually(t, func() bool {
			return sqlInt(t, cs, `SELECT sum(lag_messages)::bigint FROM sys.consumers WHERE topic = 'orders' AND consumer = 'billing'`) >= goal
		}, stepTimeout, 10*time.Millisecond)
		now, ok := b.sample(cs, "lag-chart", 1)
		require.True(t, ok)
		require.Greater(t, now, prev, "the lag chart's last value climbs while the producer runs")
		prev = now
	}
	b.shoot("consumer")
	after := b.chart("lag-chart")
	require.Greater(t, len(after[0]), len(before[0]), "the lag chart grew")
	close(stop)
	wg.Wait()
	// Once the producer stopped, the chart's last value is SQL's lag.
	lag = sqlInt(t, cs, `SELECT sum(lag_messages)::bigint FROM sys.consumers WHERE topic = 'orders' AND consumer = 'billing'`)
	n, _ := produced.Load("n")
	require.Equal(t, int64(26+n.(int)), lag)
	v, _ = b.sample(cs, "lag-chart", 1)
	require.Equal(t, float64(lag), v)
	// The page's table, reloaded, says the same.
	b.run("consumer-reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#consumer-partitions")))
	require.Equal(t, strconv.FormatInt(lag, 10), b.text("#c-lag"))

	// The Cluster page: sys.cluster's rows (none on the embedded store)
	// and the throughput chart.
	b.run("cluster", chromedp.Click(chromedp.CSS("#nav-cluster")), chromedp.WaitVisible(chromedp.CSS("#throughput-chart")))
	rows := sqlTable(t, cs.admin, `SELECT kind, name, role FROM sys.cluster`)
	if len(rows) == 0 {
		require.Contains(t, b.text("#embedded"), "one process")
	} else {
		got = b.cells("#cluster tbody tr")
		require.Len(t, got, len(rows))
		for i := range rows {
			if rows[i][2] == "<nil>" {
				rows[i][2] = ""
			}
			require.Equal(t, rows[i], got[i][:3], "sys.cluster row %d", i)
		}
	}
	b.waitJS("throughput-history", `document.getElementById("throughput-chart").chartData[0].length > 0`)
	b.waitJS("bytes-history", `document.getElementById("bytes-chart").chartData[0].length > 0`)
	exec(t, cs.admin, `INSERT INTO orders (data) VALUES ('one more')`)
	seq, at := cs.a.console.SampleNow()
	for _, id := range []string{"throughput-chart", "bytes-chart"} {
		b.waitJS("sample "+id, fmt.Sprintf(`Number(document.getElementById(%q).dataset.seq) >= %d`, id, seq))
	}
	in, ok := valueAt(b.chart("throughput-chart"), 1, float64(at.UnixMilli())/1000)
	require.True(t, ok)
	require.Greater(t, in, 0.0, "messages written per second")
	bytesIn, ok := valueAt(b.chart("bytes-chart"), 1, float64(at.UnixMilli())/1000)
	require.True(t, ok)
	require.Greater(t, bytesIn, 0.0, "bytes written per second")
	b.shoot("cluster")
	// The Topics page shows each topic's write rate from the same sample.
	b.run("topics-rate", chromedp.Navigate(cs.base+"/"), chromedp.WaitVisible(chromedp.CSS("#topics")))
	require.Equal(t, fmt.Sprintf("%.0f msg/s", in), strings.SplitN(b.text(`#topics tr[data-topic="orders"] td.rate`), ",", 2)[0])

	// The viewer (SELECT on orders only) gets no series of hidden: its
	// throughput chart shows nothing written while only hidden is
	// written, where the admin's shows it.
	b.run("logout", chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login(cs.base, "viewer", "viewerpw")
	b.run("viewer-cluster", chromedp.Navigate(cs.base+"/cluster"), chromedp.WaitVisible(chromedp.CSS("#throughput-chart")))
	b.waitJS("viewer-history", `document.getElementById("throughput-chart").chartData[0].length > 0`)
	b.sample(cs, "throughput-chart", 1) // orders unwritten since the last
	exec(t, cs.admin, `INSERT INTO hidden (data) VALUES ('a'), ('b'), ('c')`)
	seq, at = cs.a.console.SampleNow()
	b.waitJS("viewer-sample", fmt.Sprintf(`Number(document.getElementById("throughput-chart").dataset.seq) >= %d`, seq))
	in, ok = valueAt(b.chart("throughput-chart"), 1, float64(at.UnixMilli())/1000)
	require.True(t, ok)
	require.Equal(t, 0.0, in, "the viewer's chart counts hidden's writes")
	admin := consoleClient(t)
	code, _ := httpLogin(t, admin, cs.base, "admin", "adminpw")
	require.Equal(t, http.StatusOK, code)
	code, d := liveHistory(t, admin, cs.base, "/live?chart=throughput")
	require.Equal(t, http.StatusOK, code)
	require.Greater(t, historyAt(d, 0, float64(at.UnixMilli())/1000), 0.0, "the admin's chart counts hidden's writes")

	// Nor list hidden's consumer, or open its page or its lag's stream.
	b.run("viewer-consumers", chromedp.Click(chromedp.CSS("#nav-consumers")), chromedp.WaitVisible(chromedp.CSS("#consumer-list")))
	require.Equal(t, [][]string{{"orders", "billing"}}, colsOf(b.cells("#consumer-list tbody tr"), 2))
	b.run("viewer-hidden-consumer", chromedp.Navigate(cs.base+"/consumer?topic=hidden&name=watcher"), chromedp.WaitVisible(chromedp.CSS("#error")))
	require.Contains(t, b.text("#error"), `no consumer "watcher" of topic "hidden" that you may see`)
	viewer := consoleClient(t)
	code, _ = httpLogin(t, viewer, cs.base, "viewer", "viewerpw")
	require.Equal(t, http.StatusOK, code)
	code, _ = get(t, viewer, cs.base, "/consumer?topic=hidden&name=watcher")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = liveHistory(t, viewer, cs.base, "/live?chart=lag&topic=hidden&consumer=watcher")
	require.Equal(t, http.StatusNotFound, code)
	code, d = liveHistory(t, viewer, cs.base, "/live?chart=lag&topic=orders&consumer=billing")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, float64(lag+1), lastOfLine(d, 0))
	code, _ = liveHistory(t, admin, cs.base, "/live?chart=lag&topic=hidden&consumer=watcher")
	require.Equal(t, http.StatusOK, code)
	code, _ = get(t, viewer, cs.base, "/live?chart=nosuch")
	require.Equal(t, http.StatusBadRequest, code)
	// Not logged in: 401 for the stream.
	code, _ = get(t, consoleClient(t), cs.base, "/live?chart=throughput", "HX-Request", "true")
	require.Equal(t, http.StatusUnauthorized, code)
	// A role without privileges: no consumer page of orders either.
	nobody := consoleClient(t)
	code, _ = httpLogin(t, nobody, cs.base, "nobody", "nobodypw")
	require.Equal(t, http.StatusOK, code)
	code, _ = get(t, nobody, cs.base, "/consumer?topic=orders&name=billing")
	require.Equal(t, http.StatusNotFound, code)
	code, d = liveHistory(t, nobody, cs.base, "/live?chart=throughput")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, -1.0, lastOfLine(d, 0), "no topic, no value")

	st := cs.a.console.SamplerStats()
	t.Logf("sampler: %d series, %d slots, rings %d bytes, last sample took %v", st.Series, st.Slots, st.RingBytes, st.LastSample)
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

// liveStream opens a live stream with c: its events, the channel closed
// when the server ends the stream.
func liveStream(t *testing.T, c *http.Client, base, path string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	require.NoError(t, err)
	// The client's Timeout would cut the stream: the same jar, none.
	resp, err := (&http.Client{Jar: c.Jar}).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	body := resp.Body
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		_ = readEvents(body, func(e sseEvent) bool { ch <- e; return true })
	}()
	return ch
}

// nextEvent is the stream's next event of name, skipping others; ok is
// false when the stream ended first.
func nextEvent(t *testing.T, ch <-chan sseEvent, name string) (sseEvent, bool) {
	t.Helper()
	timeout := time.After(stepTimeout)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return e, false
			}
			if e.name == name {
				return e, true
			}
		case <-timeout:
			t.Fatalf("no %s event in %v", name, stepTimeout)
		}
	}
}

// TestConsoleLiveRevoke: a live stream checks its role's privileges
// again as it runs: once SELECT on the topic is revoked, the throughput
// stream sends a history without the topic's series and the consumer's
// lag stream ends; a logout ends a stream too.
func TestConsoleLiveRevoke(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = "scram-sha-256"
	cfg.Users = map[string]string{"admin": "adminpw"}
	cfg.ConsoleRecheck = 100 * time.Millisecond
	cs := startConsoleWith(t, cfg)
	cs.admin = cs.conn(t, "admin", "adminpw")
	seedConsole(t, cs)
	viewer := consoleClient(t)
	code, csrf := httpLogin(t, viewer, cs.base, "viewer", "viewerpw")
	require.Equal(t, http.StatusOK, code)
	cs.a.console.SampleNow()
	throughput := liveStream(t, viewer, cs.base, "/live?chart=throughput")
	lag := liveStream(t, viewer, cs.base, "/live?chart=lag&topic=orders&consumer=billing")
	e, ok := nextEvent(t, throughput, "history")
	require.True(t, ok)
	require.NotEqual(t, -1.0, lastOfLine(e.data, 0), "orders' writes are charted")
	e, ok = nextEvent(t, lag, "history")
	require.True(t, ok)
	require.Equal(t, 26.0, lastOfLine(e.data, 0))

	exec(t, cs.admin, "REVOKE SELECT ON TOPIC orders FROM viewer")
	// The lag stream ends; the throughput stream starts over without
	// orders' series.
	_, ok = nextEvent(t, lag, "never sent")
	require.False(t, ok, "the lag stream of a topic no longer visible goes on")
	e, ok = nextEvent(t, throughput, "history")
	require.True(t, ok)
	require.Equal(t, -1.0, lastOfLine(e.data, 0), "a topic no longer visible is still charted")
	code, _ = get(t, viewer, cs.base, "/live?chart=lag&topic=orders&consumer=billing")
	require.Equal(t, http.StatusNotFound, code)

	// Logging out ends the streams.
	code, _ = post(t, viewer, cs.base, "/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, code)
	_, ok = nextEvent(t, throughput, "never sent")
	require.False(t, ok, "a logged-out login's stream goes on")
	// An event stream without a login is 401 (a browser's EventSource
	// does not follow the pages' redirect to the login form).
	req, err := http.NewRequest(http.MethodGet, cs.base+"/live?chart=throughput", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := viewer.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
