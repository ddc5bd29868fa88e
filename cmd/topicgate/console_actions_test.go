package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// The console's actions (console/queue.go and the pages after it): each
// done in chromium and checked with SQL, and refused over plain HTTP.

// seedQueue creates topic jobs (one partition, three messages) with
// shared consumer workers, whose rejected messages move to jobs_dlq.
func seedQueue(t *testing.T, c *pgx.Conn) {
	exec(t, c, "CREATE TOPIC jobs_dlq")
	exec(t, c, `CREATE TOPIC jobs (CONSUMER workers WITH (type = 'shared', max_processing_attempts = 5,
		dead_letter_policy = 'move', dead_letter_queue = 'jobs_dlq'))`)
	for _, body := range []string{"job a", "job b", "job c"} {
		exec(t, c, `INSERT INTO jobs (data) VALUES ($1::text::bytea)`, body)
	}
}

// queueFigure is one figure of sys.consumers, summed over partitions.
func queueFigure(t *testing.T, c *pgx.Conn, col string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, c.QueryRow(context.Background(),
		`SELECT sum(`+col+`)::int8 FROM sys.consumers WHERE topic = 'jobs' AND consumer = 'workers'`).Scan(&n))
	return n
}

// TestConsoleQueue takes a shared consumer's message on the topic's page
// and acknowledges it, takes the next and rejects it, and checks each
// with SQL: the acked one is never handed out again, the rejected one is
// in the dead-letter topic.
func TestConsoleQueue(t *testing.T) {
	cs := startConsoleServer(t)
	seedQueue(t, cs.admin)
	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")

	b.run("jobs", chromedp.Navigate(cs.base+"/topic?name=jobs"), chromedp.WaitVisible(chromedp.CSS("#queue-workers")))
	require.Equal(t, "3", b.text("#queue-workers .q-available"))
	require.Equal(t, strconv.FormatInt(queueFigure(t, cs.admin, "available"), 10), b.text("#queue-workers .q-available"))
	require.Equal(t, "0", b.text("#queue-workers .q-dlq-depth"))

	// Take: the console's desk holds it, as sys.consumers says.
	// htmx removes htmx-added from what it swapped in once it has bound
	// its hx- attributes: only then do the row's buttons post with htmx.
	b.run("take", chromedp.Click(chromedp.CSS("#queue-workers .take-next")), chromedp.WaitVisible(chromedp.CSS("#held:not(.htmx-added) tbody tr")))
	got := b.cells("#held tbody tr")
	require.Len(t, got, 1)
	require.Equal(t, []string{"workers", "0", "0", "1"}, got[0][:4])
	require.Equal(t, "job a", got[0][5])
	require.Equal(t, int64(1), queueFigure(t, cs.admin, "acquired"))
	require.Equal(t, "1", b.text("#queue-workers .q-acquired"), "the figures follow the take")

	// Ack it from the page.
	b.run("ack", chromedp.Click(chromedp.CSS(`#held tr[data-offset="0"] .act-ack`)), chromedp.WaitVisible(chromedp.CSS("#none-held")))
	require.Contains(t, b.text("#desk-done"), "ack of message 0:0: DELETE 1")
	require.Equal(t, int64(0), queueFigure(t, cs.admin, "acquired"))
	require.Equal(t, int64(1), queueFigure(t, cs.admin, "committed_offset"), "offset 0 is finished")
	require.Equal(t, "0", b.text("#queue-workers .q-acquired"))
	require.Equal(t, "2", b.text("#queue-workers .q-available"))
	b.shoot("queue")

	// Take the next and reject it: it moves to the dead-letter topic.
	b.run("take-2", chromedp.Click(chromedp.CSS("#queue-workers:not(.htmx-added) .take-next")), chromedp.WaitVisible(chromedp.CSS(`#held:not(.htmx-added) tr[data-offset="1"]`)))
	b.run("reject", chromedp.Click(chromedp.CSS(`#held tr[data-offset="1"] .act-reject`)), chromedp.WaitVisible(chromedp.CSS("#none-held")))
	require.Contains(t, b.text("#desk-done"), "reject of message 0:1: UPDATE 1")
	rows := sqlTable(t, cs.admin, `SELECT convert_from(data, 'UTF8'), attrs->>'dlq_source_offset' FROM jobs_dlq`)
	require.Equal(t, [][]string{{"job b", "1"}}, rows)
	b.run("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#queue-workers")))
	require.Equal(t, "1", b.text("#queue-workers .q-dlq-depth"))
	require.Equal(t, "1", b.text("#queue-workers .q-available"))

	// A worker gets only what is left: neither the acked nor the
	// rejected message comes back.
	rows = sqlTable(t, cs.admin, `SELECT "offset" FROM jobs WITH (CONSUMER = workers) LIMIT 10`)
	require.Equal(t, [][]string{{"2"}}, rows)
}

// TestConsoleQueueRefusals: acting on a message the console does not hold
// (a worker holds it), taking from an empty queue, a missing CSRF token,
// a bad action and a role without privileges are refused with a 4xx and
// change nothing.
func TestConsoleQueueRefusals(t *testing.T) {
	cs := startConsoleServer(t)
	seedQueue(t, cs.admin)
	exec(t, cs.admin, "CREATE ROLE nobody LOGIN PASSWORD 'nobodypw'")
	worker := cs.conn(t, "admin", "adminpw")
	held := sqlTable(t, worker, `SELECT "offset" FROM jobs WITH (CONSUMER = workers, PROCESSING_TIMEOUT = '5m') LIMIT 3`)
	require.Len(t, held, 3)

	c := consoleClient(t)
	code, csrf := httpLogin(t, c, cs.base, "admin", "adminpw")
	require.Equal(t, http.StatusOK, code)
	act := url.Values{"csrf": {csrf}, "topic": {"jobs"}, "consumer": {"workers"}, "partition": {"0"}, "offset": {"0"}, "action": {"ack"}}
	code, page := post(t, c, cs.base, "/queue/act", act)
	require.Equal(t, http.StatusConflict, code, page)
	require.Contains(t, page, "not held by this session")
	code, page = post(t, c, cs.base, "/queue/take", url.Values{"csrf": {csrf}, "topic": {"jobs"}, "consumer": {"workers"}})
	require.Equal(t, http.StatusConflict, code, page)
	require.Contains(t, page, "no message of consumer &#34;workers&#34; is available now")
	require.Equal(t, int64(3), queueFigure(t, cs.admin, "acquired"), "the worker still holds all three")

	// Without the CSRF token: 403, and nothing is done.
	noCSRF := url.Values{}
	for k, v := range act {
		if k != "csrf" {
			noCSRF[k] = v
		}
	}
	code, _ = post(t, c, cs.base, "/queue/act", noCSRF)
	require.Equal(t, http.StatusForbidden, code)
	bad := url.Values{"csrf": {csrf}, "topic": {"jobs"}, "consumer": {"workers"}, "partition": {"0"}, "offset": {"x"}, "action": {"ack"}}
	code, _ = post(t, c, cs.base, "/queue/act", bad)
	require.Equal(t, http.StatusBadRequest, code)
	bad.Set("offset", "0")
	bad.Set("action", "drop")
	code, _ = post(t, c, cs.base, "/queue/act", bad)
	require.Equal(t, http.StatusBadRequest, code)

	// A role without privileges on jobs: SQL refuses, 403.
	n := consoleClient(t)
	code, ncsrf := httpLogin(t, n, cs.base, "nobody", "nobodypw")
	require.Equal(t, http.StatusOK, code)
	act.Set("csrf", ncsrf)
	code, page = post(t, n, cs.base, "/queue/act", act)
	require.Equal(t, http.StatusForbidden, code, page)
	code, _ = post(t, n, cs.base, "/queue/take", url.Values{"csrf": {ncsrf}, "topic": {"jobs"}, "consumer": {"workers"}})
	require.Equal(t, http.StatusForbidden, code)

	// The worker's locks were untouched: its ack acts on all three.
	require.Equal(t, int64(3), exec(t, worker, `DELETE FROM jobs WITH (CONSUMER = workers) WHERE partition = 0 AND "offset" IN (0, 1, 2)`).RowsAffected())

	// Without htmx (a plain form post): take and ack send the topic's
	// page again (303), where the held message is listed.
	exec(t, cs.admin, `INSERT INTO jobs (data) VALUES ('job d')`)
	take := url.Values{"csrf": {csrf}, "topic": {"jobs"}, "consumer": {"workers"}}
	code, page = post(t, c, cs.base, "/queue/take", take)
	require.Equal(t, http.StatusSeeOther, code, page)
	_, page = get(t, c, cs.base, "/topic?name=jobs")
	require.Contains(t, page, `data-offset="3"`)
	act.Set("csrf", csrf)
	act.Set("offset", "3")
	code, page = post(t, c, cs.base, "/queue/act", act)
	require.Equal(t, http.StatusSeeOther, code, page)
	require.Equal(t, int64(4), queueFigure(t, cs.admin, "committed_offset"), "all four finished")
}

// connApp connects as user with application_name app.
func connApp(t *testing.T, cs *consoleServer, user, pw, app string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable&application_name=%s",
		user, pw, cs.a.Addr(), app))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestConsoleSessions: the Sessions page shows a pgx session and its open
// transaction as sys.sessions and sys.transactions do, and a superuser
// terminates it from the page.
func TestConsoleSessions(t *testing.T) {
	cs := startConsoleServer(t)
	exec(t, cs.admin, "CREATE TOPIC orders")
	victim := connApp(t, cs, "admin", "adminpw", "victim")
	pid := strconv.FormatInt(int64(victim.PgConn().PID()), 10)
	exec(t, victim, "BEGIN")
	exec(t, victim, `INSERT INTO orders (data) VALUES ('open')`)

	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")
	b.run("sessions", chromedp.Click(chromedp.CSS("#nav-sessions")), chromedp.WaitVisible(chromedp.CSS(`#sessions tr[data-pid="`+pid+`"]`)))
	got := b.cells(`#sessions tr[data-pid="` + pid + `"]`)
	want := sqlTable(t, cs.admin, `SELECT pid, "user", application_name, client_addr, protocol, state FROM sys.sessions WHERE pid = $1`, victim.PgConn().PID())
	require.Len(t, want, 1)
	require.Equal(t, want[0], got[0][:6])
	require.Equal(t, "idle in transaction", got[0][5])
	tx := b.cells(`#transactions tr[data-pid="` + pid + `"]`)
	require.Len(t, tx, 1)
	require.Equal(t, "1", tx[0][4], "one staged message")
	// The console's own page session is there too.
	require.Contains(t, b.text("#sessions"), "topicgate console")
	b.shoot("sessions")

	b.run("terminate", chromedp.Click(chromedp.CSS(`#sessions tr[data-pid="`+pid+`"] .terminate`)), chromedp.WaitVisible(chromedp.CSS("#signal-done")))
	require.Contains(t, b.text("#signal-done"), "pg_terminate_backend("+pid+"): done")
	require.Error(t, victim.Ping(context.Background()), "the terminated session is gone")
	require.Empty(t, sqlTable(t, cs.admin, `SELECT pid FROM sys.transactions WHERE pid = $1`, victim.PgConn().PID()))
	require.Empty(t, sqlTable(t, cs.admin, `SELECT "offset" FROM orders`), "its transaction rolled back")
}

// TestConsoleSessionsRefusals: a pg_monitor member sees every session but
// no buttons, and its POST is refused as SQL refuses it; a missing CSRF
// token or a bad op is refused too, and every session lives on.
func TestConsoleSessionsRefusals(t *testing.T) {
	cs := startConsoleServer(t)
	exec(t, cs.admin, "CREATE ROLE monitor LOGIN PASSWORD 'monitorpw'")
	exec(t, cs.admin, "GRANT pg_monitor TO monitor")
	victim := connApp(t, cs, "admin", "adminpw", "victim")
	pid := strconv.FormatInt(int64(victim.PgConn().PID()), 10)

	c := consoleClient(t)
	code, csrf := httpLogin(t, c, cs.base, "monitor", "monitorpw")
	require.Equal(t, http.StatusOK, code)
	code, page := get(t, c, cs.base, "/sessions")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, `data-pid="`+pid+`"`)
	require.NotContains(t, page, `class="terminate"`)
	require.Contains(t, page, `id="no-signals"`)
	code, page = post(t, c, cs.base, "/sessions/signal", url.Values{"csrf": {csrf}, "pid": {pid}, "op": {"terminate"}})
	require.Equal(t, http.StatusForbidden, code, page)
	require.Contains(t, page, "42501")
	code, _ = post(t, c, cs.base, "/sessions/signal", url.Values{"csrf": {csrf}, "pid": {pid}, "op": {"kill"}})
	require.Equal(t, http.StatusBadRequest, code)

	a := consoleClient(t)
	code, acsrf := httpLogin(t, a, cs.base, "admin", "adminpw")
	require.Equal(t, http.StatusOK, code)
	code, _ = post(t, a, cs.base, "/sessions/signal", url.Values{"pid": {pid}, "op": {"terminate"}})
	require.Equal(t, http.StatusForbidden, code, "no CSRF token")
	code, page = post(t, a, cs.base, "/sessions/signal", url.Values{"csrf": {acsrf}, "pid": {"999999"}, "op": {"terminate"}})
	require.Equal(t, http.StatusConflict, code, page)
	require.NoError(t, victim.Ping(context.Background()), "nothing was terminated")
}
