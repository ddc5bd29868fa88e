package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestConsoleProduce sends a message from a topic's page and reads it
// back with SELECT at the partition and offset the page showed; a role
// without INSERT is refused as SQL refuses it, and writes nothing.
func TestConsoleProduce(t *testing.T) {
	cs := startConsoleServer(t)
	exec(t, cs.admin, "CREATE TOPIC orders WITH (min_active_partitions = 2)")
	exec(t, cs.admin, `INSERT INTO orders (data) VALUES ('first')`)
	exec(t, cs.admin, "CREATE ROLE viewer LOGIN PASSWORD 'viewerpw'")
	exec(t, cs.admin, "GRANT SELECT ON TOPIC orders TO viewer")

	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")
	b.run("orders", chromedp.Navigate(cs.base+"/topic?name=orders"), chromedp.WaitVisible(chromedp.CSS("#produce")))
	b.run("produce", chromedp.SendKeys(chromedp.CSS("#p-data"), `{"hello":"console"}`),
		chromedp.SendKeys(chromedp.CSS("#p-key"), "k1"),
		chromedp.SendKeys(chromedp.CSS("#p-group"), "g1"),
		chromedp.Click(chromedp.CSS("#p-send")),
		chromedp.WaitVisible(chromedp.CSS("#produced-ok")))
	part, off := b.text("#produced-partition"), b.text("#produced-offset")
	rows := sqlTable(t, cs.admin, `SELECT convert_from(data, 'UTF8'), convert_from(key, 'UTF8'), message_group_id, producer_id
		FROM orders WHERE partition = $1::int8 AND "offset" = $2::int8`, part, off)
	require.Equal(t, [][]string{{`{"hello":"console"}`, "k1", "g1", "console:admin"}}, rows)
	b.shoot("produce")

	// viewer may read orders, not write it: SQL's 42501, nothing written.
	c := consoleClient(t)
	code, csrf := httpLogin(t, c, cs.base, "viewer", "viewerpw")
	require.Equal(t, http.StatusOK, code)
	form := url.Values{"csrf": {csrf}, "topic": {"orders"}, "data": {"x"}, "producer_id": {"console:viewer"}}
	code, page := post(t, c, cs.base, "/produce", form)
	require.Equal(t, http.StatusForbidden, code, page)
	require.Contains(t, page, "42501")
	form.Del("csrf")
	code, _ = post(t, c, cs.base, "/produce", form)
	require.Equal(t, http.StatusForbidden, code, "no CSRF token")
	var n int64
	require.NoError(t, cs.admin.QueryRow(context.Background(), `SELECT messages FROM sys.topics WHERE topic = 'orders'`).Scan(&n))
	require.Equal(t, int64(2), n)
}

// TestConsoleSQL runs a SELECT in the SQL box and compares its rows with
// SQL's, shows its plan, and has an INSERT refused by SQL (25006) with
// nothing written; a statement that is not valid SQL gets its SQLSTATE
// and 400, a POST without the CSRF token 403.
func TestConsoleSQL(t *testing.T) {
	cs := startConsoleServer(t)
	exec(t, cs.admin, "CREATE TOPIC orders WITH (min_active_partitions = 2)")
	exec(t, cs.admin, "CREATE TOPIC invoices")
	exec(t, cs.admin, `INSERT INTO orders (data) VALUES ('a'), ('b')`)
	const q = `SELECT topic, partitions, messages FROM sys.topics ORDER BY topic`

	b := newBrowser(t)
	b.login(cs.base, "admin", "adminpw")
	b.run("sql", chromedp.Click(chromedp.CSS("#nav-sql")), chromedp.WaitVisible(chromedp.CSS("#sql-q")),
		chromedp.SetValue(chromedp.CSS("#sql-q"), q),
		chromedp.Click(chromedp.CSS("#sql-run")),
		chromedp.WaitVisible(chromedp.CSS("#sql-rows")))
	require.Equal(t, sqlTable(t, cs.admin, q), b.cells("#sql-rows tbody tr"))
	require.Equal(t, "SELECT 2", b.text("#sql-tag"))
	require.Contains(t, b.text("#sql-plan"), "sys.topics")
	b.shoot("sql")

	b.run("insert", chromedp.SetValue(chromedp.CSS("#sql-q"), `INSERT INTO orders (data) VALUES ('nope')`),
		chromedp.Click(chromedp.CSS("#sql-run")),
		chromedp.WaitVisible(chromedp.CSS("#error")))
	require.Contains(t, b.text("#error"), "cannot execute INSERT in a read-only transaction (SQLSTATE 25006)")
	var n int64
	require.NoError(t, cs.admin.QueryRow(context.Background(), `SELECT messages FROM sys.topics WHERE topic = 'orders'`).Scan(&n))
	require.Equal(t, int64(2), n, "nothing written")

	c := consoleClient(t)
	code, csrf := httpLogin(t, c, cs.base, "admin", "adminpw")
	require.Equal(t, http.StatusOK, code)
	code, page := post(t, c, cs.base, "/sql", url.Values{"csrf": {csrf}, "q": {"SELEC 1"}})
	require.Equal(t, http.StatusBadRequest, code, page)
	require.Contains(t, page, "42601")
	code, page = post(t, c, cs.base, "/sql", url.Values{"csrf": {csrf}, "q": {"SELECT data FROM orders WITH (CONSUMER = nobody_reads)"}})
	require.Equal(t, http.StatusBadRequest, code, page)
	code, _ = post(t, c, cs.base, "/sql", url.Values{"q": {"SELECT 1"}})
	require.Equal(t, http.StatusForbidden, code, "no CSRF token")
	// At most 500 rows.
	code, page = post(t, c, cs.base, "/sql", url.Values{"csrf": {csrf}, "q": {"SELECT g FROM generate_series(1, 600) g"}})
	require.Equal(t, http.StatusOK, code, page)
	require.Contains(t, page, "first 500 rows shown")
	require.Equal(t, 501, strings.Count(page, "<tr>"), "500 rows and the header")
}
