package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// consoleServer is a test server with `serve --http` on 127.0.0.1:0, as
// main starts it: the web console at /.
type consoleServer struct {
	a     *app
	base  string // http://127.0.0.1:port
	admin *pgx.Conn
	// skew moves the console's clock (its cookies' expiry) forward.
	skew atomic.Int64
}

func startConsoleServer(t *testing.T) *consoleServer {
	t.Helper()
	cfg := testConfig(t)
	cfg.Auth = "scram-sha-256"
	cfg.Users = map[string]string{"admin": "adminpw"}
	cs := startConsoleWith(t, cfg)
	cs.admin = cs.conn(t, "admin", "adminpw")
	return cs
}

// startConsoleWith starts a server with cfg and --http on 127.0.0.1:0.
func startConsoleWith(t *testing.T, cfg config) *consoleServer {
	t.Helper()
	cs := &consoleServer{}
	cfg.ConsoleClock = func() time.Time { return time.Now().Add(time.Duration(cs.skew.Load())) }
	cs.a = startServer(t, cfg)
	var started atomic.Pointer[app]
	started.Store(cs.a)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: httpHandler(&started), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	cs.base = "http://" + ln.Addr().String()
	return cs
}

func (cs *consoleServer) conn(t *testing.T, user, pw string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", user, pw, cs.a.Addr()))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// seedConsole creates what the console tests look at: topic orders (3
// partitions, JSON, text and binary bodies, keys and headers on some, a
// consumer that read part of it), topic secret, role viewer (SELECT on
// orders only) and role nobody (no privileges).
func seedConsole(t *testing.T, cs *consoleServer) {
	c := cs.admin
	exec(t, c, "CREATE TOPIC orders (CONSUMER billing) WITH (min_active_partitions = 3)")
	exec(t, c, "CREATE TOPIC secret")
	exec(t, c, `INSERT INTO secret (data) VALUES ('classified')`)
	for i := range 30 {
		p := i % 3
		var body string
		switch {
		case p == 0:
			body = fmt.Sprintf(`{"order":%d,"item":"book"}`, i)
		case p == 1:
			body = fmt.Sprintf("order %d", i)
		default:
			body = fmt.Sprintf("\\x00ff%02x", i) // bytea hex: not UTF-8
		}
		if p == 1 {
			exec(t, c, `INSERT INTO orders (partition, data, key, headers) VALUES ($1, $2::text::bytea, $3::text::bytea, $4::jsonb)`,
				p, body, fmt.Sprintf("k%d", i), fmt.Sprintf(`[{"key":"h","value":"v%d"}]`, i))
		} else if p == 2 {
			exec(t, c, `INSERT INTO orders (partition, data, producer_id, seqno, message_group_id) VALUES ($1, $2::bytea, 'p2', $3, 'g2')`, p, body, i)
		} else {
			exec(t, c, `INSERT INTO orders (partition, data) VALUES ($1, $2::bytea)`, p, body)
		}
	}
	// billing reads (and commits) 4 messages.
	rows, err := c.Query(context.Background(), "SELECT \"offset\" FROM orders WITH (CONSUMER = billing) LIMIT 4")
	require.NoError(t, err)
	rows.Close()
	require.NoError(t, rows.Err())
	exec(t, c, "CREATE ROLE viewer LOGIN PASSWORD 'viewerpw'")
	exec(t, c, "GRANT SELECT ON TOPIC orders TO viewer")
	exec(t, c, "CREATE ROLE nobody LOGIN PASSWORD 'nobodypw'")
}

// positions is every consumer's committed offsets, to check that the
// console changed none (and created no consumer).
func positions(t *testing.T, c *pgx.Conn) string {
	rows, err := c.Query(context.Background(), `SELECT topic, consumer, partition, committed_offset FROM sys.consumers ORDER BY 1, 2, 3`)
	require.NoError(t, err)
	var sb strings.Builder
	for rows.Next() {
		var topic, consumer string
		var part, off int64
		require.NoError(t, rows.Scan(&topic, &consumer, &part, &off))
		fmt.Fprintf(&sb, "%s/%s/%d=%d\n", topic, consumer, part, off)
	}
	require.NoError(t, rows.Err())
	return sb.String()
}

// sqlTable is a query's rows as text, one []string per row.
func sqlTable(t *testing.T, c *pgx.Conn, q string, args ...any) [][]string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, args...)
	require.NoError(t, err)
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		require.NoError(t, err)
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestConsoleBrowser logs in through the page in chromium, checks the
// Topics page, a topic's partitions and consumers and the message browser
// against SQL, checks that browsing moved no position and created no
// consumer, and that a role without privileges sees no topic.
func TestConsoleBrowser(t *testing.T) {
	cs := startConsoleServer(t)
	seedConsole(t, cs)
	before := positions(t, cs.admin)
	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")

	// Topics: every topic, with sys.topics' figures.
	b.run("topics", chromedp.WaitVisible(chromedp.CSS("#topics")))
	got := b.cells("#topics tbody tr")
	want := sqlTable(t, cs.admin, `SELECT topic, partitions, active_partitions, messages, bytes, retention_period::text, supported_codecs, coalesce(consumers, '') FROM sys.topics ORDER BY topic`)
	require.Equal(t, want, colsOf(got, 8), "sys.topics' columns (the write rate after them is the live charts' sample: console_live_test.go)")
	require.Len(t, got, 2)
	require.Equal(t, "30", got[0][3]) // orders
	t.Logf("Topics page loaded in %v (the browser's timing)", b.loadTime())

	// The topic page: partitions and consumers as sys.partitions and
	// sys.consumers say.
	b.run("topic", chromedp.Click(chromedp.CSS(`#topics tr[data-topic="orders"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#partitions")))
	got = b.cells("#partitions tbody tr")
	parts := sqlTable(t, cs.admin, `SELECT partition, state, start_offset, end_offset, messages, bytes FROM sys.partitions WHERE topic = 'orders' ORDER BY partition`)
	require.Len(t, got, 3)
	for i := range parts {
		require.Equal(t, parts[i], got[i][:6], "partition %d", i)
	}
	got = b.cells("#consumers tbody tr")
	cons := sqlTable(t, cs.admin, `SELECT consumer, type, partition, committed_offset, end_offset, lag_messages FROM sys.consumers WHERE topic = 'orders' ORDER BY consumer, partition`)
	require.Len(t, got, 3)
	for i := range cons {
		require.Equal(t, cons[i], got[i][:6], "consumer row %d", i)
	}
	committed := 0
	for _, r := range cons {
		n, err := strconv.Atoi(r[3])
		require.NoError(t, err)
		committed += n
	}
	require.Equal(t, 4, committed, "billing read and committed 4 messages")
	t.Logf("topic page loaded in %v", b.loadTime())
	b.shoot("topic")

	// A consumer's committed offset links to the messages it reads next.
	b.run("next-for-consumer", chromedp.Click(chromedp.CSS(`#consumers tr[data-partition="1"] td.committed a`)),
		chromedp.WaitVisible(chromedp.CSS(`#msgs[data-q="partition=1 from=`+cons[1][3]+` limit=20 view=auto"]`)))
	got = b.cells("#msgs tbody tr")
	require.Equal(t, cons[1][3], got[0][0])
	require.Equal(t, before, positions(t, cs.admin), "browsing moved a position")
	b.run("back", chromedp.Click(chromedp.CSS("h1 a")), chromedp.WaitVisible(chromedp.CSS("#partitions")))

	// The message browser: partition 0, newest first, JSON pretty-printed.
	b.run("browse", chromedp.Click(chromedp.CSS("#browse")),
		chromedp.WaitVisible(chromedp.CSS(`#msgs[data-q="partition=0 limit=20 view=auto"]`)))
	require.Contains(t, b.text("#range"), "partition 0: offsets 0 to 10")
	got = b.cells("#msgs tbody tr")
	require.Len(t, got, 10)
	require.Equal(t, "9", got[0][0])
	require.Equal(t, "0", got[9][0])
	t.Logf("message browser loaded in %v", b.loadTime())
	var body string
	require.NoError(t, cs.admin.QueryRow(context.Background(), `SELECT convert_from(data, 'UTF8') FROM orders WHERE partition = 0 AND "offset" = 9`).Scan(&body))
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, []byte(body), "", "  "))
	require.Equal(t, pretty.String(), got[0][len(got[0])-1])
	require.Contains(t, pretty.String(), "\n  \"order\": 27,\n")

	// Partition 1 from offset 3, 4 at a time, through the filter form
	// (htmx replaces the table): keys and headers shown.
	b.run("filter", chromedp.SetValue(chromedp.CSS("#f-partition"), "1"),
		chromedp.SetValue(chromedp.CSS("#f-from"), "3"),
		chromedp.SetValue(chromedp.CSS("#f-limit"), "4"),
		chromedp.Click(chromedp.CSS("#f-show")),
		chromedp.WaitVisible(chromedp.CSS(`#msgs[data-q="partition=1 from=3 limit=4 view=auto"]`)))
	got = b.cells("#msgs tbody tr")
	rows := sqlTable(t, cs.admin, `SELECT "offset", convert_from(key, 'UTF8'), headers::text, convert_from(data, 'UTF8') FROM orders WHERE partition = 1 AND "offset" >= 3 ORDER BY "offset" LIMIT 4`)
	require.Len(t, got, 4)
	for i, r := range rows {
		n := len(got[i])
		require.Equal(t, r, []string{got[i][0], got[i][n-3], got[i][n-2], got[i][n-1]}, "row %d", i)
	}
	b.shoot("messages")
	// The next page, by the pager.
	b.run("next", chromedp.Click(chromedp.CSS("#newer")), chromedp.WaitVisible(chromedp.CSS(`#msgs[data-q="partition=1 from=7 limit=4 view=auto"]`)))
	got = b.cells("#msgs tbody tr")
	require.Len(t, got, 3)
	require.Equal(t, []string{"7", "8", "9"}, []string{got[0][0], got[1][0], got[2][0]})

	// Binary bodies as hex.
	b.run("hex", chromedp.SetValue(chromedp.CSS("#f-partition"), "2"),
		chromedp.SetValue(chromedp.CSS("#f-from"), "0"),
		chromedp.SetValue(chromedp.CSS("#f-view"), "hex"),
		chromedp.Click(chromedp.CSS("#f-show")),
		chromedp.WaitVisible(chromedp.CSS(`#msgs[data-q="partition=2 from=0 limit=4 view=hex"]`)))
	got = b.cells("#msgs tbody tr")
	require.Equal(t, "00ff02", got[0][len(got[0])-1])
	// Producer, seqno and group columns where the messages have them.
	require.Equal(t, []string{"0", "p2", "2", "g2"}, []string{got[0][0], got[0][2], got[0][3], got[0][4]})

	// A filter that is not valid: a message in the page.
	b.run("bad-offset", chromedp.SetValue(chromedp.CSS("#f-from"), "abc"),
		chromedp.Click(chromedp.CSS("#f-show")),
		chromedp.WaitVisible(chromedp.CSS("#error")))
	require.Contains(t, b.text("#error"), `from "abc" is not an offset`)

	require.Equal(t, before, positions(t, cs.admin), "browsing moved a position or created a consumer")

	// A role with SELECT on orders sees orders only; one without
	// privileges sees no topic.
	b.run("logout", chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login(cs.base, "viewer", "viewerpw")
	b.run("viewer-topics", chromedp.WaitVisible(chromedp.CSS("#topics")))
	got = b.cells("#topics tbody tr")
	require.Len(t, got, 1)
	require.Equal(t, "orders", got[0][0])
	b.run("logout-viewer", chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login(cs.base, "nobody", "nobodypw")
	b.run("nobody-topics", chromedp.WaitVisible(chromedp.CSS("#no-topics")))
	require.Equal(t, 0, eval[int](b, "no-table", `document.querySelectorAll("#topics").length`))
	// Nor may it open one by its name.
	b.run("nobody-secret", chromedp.Navigate(cs.base+"/topic?name=secret"), chromedp.WaitVisible(chromedp.CSS("#error")))
	require.Contains(t, b.text("#error"), `no topic "secret" that you may see`)
	require.Equal(t, before, positions(t, cs.admin))
}

// consoleClient is a plain HTTP client of the console with a cookie jar;
// it does not follow redirects.
func consoleClient(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// get fetches path and returns the status and body.
func get(t *testing.T, c *http.Client, base, path string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// post posts form to path and returns the status and body.
func post(t *testing.T, c *http.Client, base, path string, form url.Values) (int, string) {
	t.Helper()
	resp, err := c.PostForm(base+path, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// httpLogin logs in through the form and returns the session's CSRF
// token, or the failed login's status and page.
func httpLogin(t *testing.T, c *http.Client, base, user, pw string) (int, string) {
	t.Helper()
	_, page := get(t, c, base, "/login")
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	code, body := post(t, c, base, "/login", url.Values{"csrf": {m[1]}, "user": {user}, "password": {pw}})
	if code != http.StatusSeeOther {
		return code, body
	}
	code, page = get(t, c, base, "/")
	require.Equal(t, http.StatusOK, code, page)
	m = csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	return code, m[1]
}

// TestConsoleRefusals: wrong passwords, roles that may not log in, a
// forged or expired cookie, a missing CSRF token and bad input are
// refused with a 4xx and change nothing.
func TestConsoleRefusals(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = "scram-sha-256"
	cfg.Users = map[string]string{"admin": "adminpw"}
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	cfg.AuditLog = auditPath
	cs := startConsoleWith(t, cfg)
	cs.admin = cs.conn(t, "admin", "adminpw")
	seedConsole(t, cs)
	exec(t, cs.admin, "CREATE ROLE nologin PASSWORD 'pw'")
	exec(t, cs.admin, "CREATE ROLE expired LOGIN PASSWORD 'pw' VALID UNTIL '2001-01-01'")
	before := positions(t, cs.admin)

	c := consoleClient(t)
	// The endpoints beside the console answer as before.
	code, page := get(t, c, cs.base, "/healthz")
	require.Equal(t, http.StatusOK, code, page)
	code, page = get(t, c, cs.base, "/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, "topicgate_")

	code, page = httpLogin(t, c, cs.base, "admin", "wrong")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, page, `password authentication failed for user &#34;admin&#34;`)
	code, page = httpLogin(t, c, cs.base, "ghost", "pw")
	require.Equal(t, http.StatusUnauthorized, code, page)
	code, page = httpLogin(t, c, cs.base, "expired", "pw")
	require.Equal(t, http.StatusUnauthorized, code, page)
	code, page = httpLogin(t, c, cs.base, "nologin", "pw")
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, page, `role &#34;nologin&#34; is not permitted to log in`)
	// A login form posted without its CSRF token.
	code, _ = post(t, consoleClient(t), cs.base, "/login", url.Values{"user": {"admin"}, "password": {"adminpw"}})
	require.Equal(t, http.StatusForbidden, code)

	// Not logged in: pages redirect to the form, htmx requests get 401.
	code, _ = get(t, c, cs.base, "/")
	require.Equal(t, http.StatusSeeOther, code)
	code, _ = get(t, c, cs.base, "/messages?topic=orders", "HX-Request", "true")
	require.Equal(t, http.StatusUnauthorized, code)

	code, csrf := httpLogin(t, c, cs.base, "admin", "adminpw")
	require.Equal(t, http.StatusOK, code)
	// Each login is in the audit log, as a PostgreSQL login is (those,
	// of the SQL connections, have a session's pid).
	var logins []string
	for _, l := range readAudit(t, auditPath) {
		if l.Command == "LOGIN" && l.Session == 0 {
			logins = append(logins, l.SessionUser+" "+l.Outcome)
		}
	}
	require.Equal(t, []string{"admin 28P01", "ghost 28P01", "expired 28P01", "nologin 28000", "admin ok"}, logins)
	u, _ := url.Parse(cs.base)
	var cookie *http.Cookie
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "tg_console" {
			cookie = ck
		}
	}
	require.NotNil(t, cookie)

	// A forged cookie: another role's name under the same signature.
	forged := consoleClient(t)
	parts := strings.Split(cookie.Value, ".")
	parts[0] = "bm9ib2R5" // "nobody"
	forged.Jar.SetCookies(u, []*http.Cookie{{Name: "tg_console", Value: strings.Join(parts, ".")}})
	code, _ = get(t, forged, cs.base, "/", "HX-Request", "true")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(t, forged, cs.base, "/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusUnauthorized, code)

	// A missing or wrong CSRF token: 403, and the session still works.
	code, page = post(t, c, cs.base, "/logout", nil)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, page, "CSRF")
	code, _ = post(t, c, cs.base, "/logout", url.Values{"csrf": {"x" + csrf}})
	require.Equal(t, http.StatusForbidden, code)
	code, _ = get(t, c, cs.base, "/")
	require.Equal(t, http.StatusOK, code)

	// Bad input: a message and 400; a topic the role may not see: 404.
	code, page = get(t, c, cs.base, "/messages?topic=orders&partition=0&from=abc")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, page, `from &#34;abc&#34; is not an offset`)
	code, page = get(t, c, cs.base, "/messages?topic=orders&partition=7", "HX-Request", "true")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, page, `has no partition 7`)
	code, _ = get(t, c, cs.base, "/messages?topic=orders&limit=100000")
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = get(t, c, cs.base, "/topic?name=nosuch")
	require.Equal(t, http.StatusNotFound, code)

	// An expired cookie: refused, as after a logout.
	cs.skew.Store(int64(9 * time.Hour))
	code, _ = get(t, c, cs.base, "/", "HX-Request", "true")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = post(t, c, cs.base, "/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusUnauthorized, code)
	cs.skew.Store(0)

	// Logging out refuses the cookie from then on.
	code, _ = get(t, c, cs.base, "/")
	require.Equal(t, http.StatusOK, code)
	old := c.Jar.Cookies(u)
	code, _ = post(t, c, cs.base, "/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, code)
	replay := consoleClient(t)
	replay.Jar.SetCookies(u, old)
	code, _ = get(t, replay, cs.base, "/", "HX-Request", "true")
	require.Equal(t, http.StatusUnauthorized, code)

	require.Equal(t, before, positions(t, cs.admin))
}

// TestConsoleTrust: with --auth trust the form asks for a role name only,
// as the PostgreSQL port does, and the role sees what it may.
func TestConsoleTrust(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = "trust"
	cs := startConsoleWith(t, cfg)
	admin := cs.conn(t, "postgres", "")
	exec(t, admin, "CREATE TOPIC orders")
	exec(t, admin, "CREATE ROLE nobody LOGIN")
	c := consoleClient(t)
	code, page := get(t, c, cs.base, "/login")
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, page, `name="password"`)
	require.Contains(t, page, "--auth trust")
	code, _ = httpLogin(t, c, cs.base, "postgres", "")
	require.Equal(t, http.StatusOK, code)
	_, page = get(t, c, cs.base, "/")
	require.Contains(t, page, `data-topic="orders"`)
	c = consoleClient(t)
	code, _ = httpLogin(t, c, cs.base, "nobody", "")
	require.Equal(t, http.StatusOK, code)
	_, page = get(t, c, cs.base, "/")
	require.Contains(t, page, `id="no-topics"`)
	code, _ = httpLogin(t, consoleClient(t), cs.base, "", "")
	require.Equal(t, http.StatusBadRequest, code)
}
