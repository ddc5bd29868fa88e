package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/require"
)

// TestParameterStatus: reported parameters reach the client with
// ParameterStatus at startup (normalised) and whenever SET, RESET or a
// ROLLBACK changes them, as PostgreSQL 15 sends them.
func TestParameterStatus(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(a.dsn())
	require.NoError(t, err)
	cfg.RuntimeParams["DateStyle"] = "ISO"
	cfg.RuntimeParams["application_name"] = "start"
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	defer c.Close(ctx)
	pc := c.PgConn()
	require.Equal(t, "ISO, MDY", pc.ParameterStatus("DateStyle"))
	require.Equal(t, "start", pc.ParameterStatus("application_name"))

	exec(t, c, "SET application_name = 'changed'")
	require.Equal(t, "changed", pc.ParameterStatus("application_name"))
	exec(t, c, "SET TIME ZONE 'Asia/Tokyo'")
	require.Equal(t, "Asia/Tokyo", pc.ParameterStatus("TimeZone"))
	exec(t, c, "RESET application_name")
	require.Equal(t, "start", pc.ParameterStatus("application_name"), "RESET restores the startup value")

	exec(t, c, "BEGIN")
	exec(t, c, "SET application_name = 'in block'")
	require.Equal(t, "in block", pc.ParameterStatus("application_name"))
	exec(t, c, "ROLLBACK")
	require.Equal(t, "start", pc.ParameterStatus("application_name"), "ROLLBACK undoes the SET and says so")

	var name string
	require.NoError(t, c.QueryRow(ctx, "SHOW datestyle").Scan(&name))
	rows, err := c.Query(ctx, "SHOW datestyle")
	require.NoError(t, err)
	require.Equal(t, "DateStyle", string(rows.FieldDescriptions()[0].Name))
	rows.Close()
}

// TestStartupParameterRefused: a bad startup parameter refuses the
// connection, as PostgreSQL does.
func TestStartupParameterRefused(t *testing.T) {
	a := startTestServer(t)
	cfg, err := pgx.ParseConfig(a.dsn())
	require.NoError(t, err)
	cfg.RuntimeParams["no_such_setting"] = "1"
	_, err = pgx.ConnectConfig(context.Background(), cfg)
	require.Error(t, err)
	require.Equal(t, "42704", pgCode(err))
}

// TestStartupOptions: the options startup parameter (psql's PGOPTIONS)
// sets parameters with -c name=value and --name=value, the packet's own
// parameters win, and a bad switch refuses the login as PostgreSQL 15 does
// (the same messages were checked against it).
func TestStartupOptions(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(a.dsn())
	require.NoError(t, err)
	cfg.RuntimeParams["options"] = `-c statement_timeout=1500 --idle-session-timeout=1h -capplication_name=from\ options -c search_path=x`
	cfg.RuntimeParams["search_path"] = "packet"
	c, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	defer c.Close(ctx)
	for q, want := range map[string]string{
		"SHOW statement_timeout":    "1500ms",
		"SHOW idle_session_timeout": "1h",
		"SHOW application_name":     "from options",
		"SHOW search_path":          "packet",
	} {
		var got string
		require.NoError(t, c.QueryRow(ctx, q).Scan(&got))
		require.Equal(t, want, got, q)
	}
	for opt, want := range map[string]string{
		"-x":          "invalid command-line argument for server process: -x",
		"-c work_mem": "-c work_mem requires a value",
		"--nosuch=1":  `unrecognized configuration parameter "nosuch"`,
	} {
		cfg, err := pgx.ParseConfig(a.dsn())
		require.NoError(t, err)
		cfg.RuntimeParams["options"] = opt
		_, err = pgx.ConnectConfig(ctx, cfg)
		require.ErrorContains(t, err, want, opt)
	}
}

// TestStatementsStopAtTimeout: statements that would run for hours (an
// endless recursion, huge series, cross joins, sorts, windows) end with
// 57014 soon after their statement_timeout: every iterator lets the
// cancellation in. FuzzSQL checks the same for whatever it generates.
func TestStatementsStopAtTimeout(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	c := connect(t, a)
	exec(t, c, "SET statement_timeout = '300ms'")
	for _, q := range []string{
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM t) SELECT count(*) FROM t",
		"SELECT count(*) FROM generate_series(1, 100000000000)",
		"SELECT count(*) FROM (SELECT generate_series(1, 1000000000)) x",
		"SELECT count(*) FROM pg_attribute a, pg_attribute b, pg_attribute c",
		"SELECT count(*) FROM generate_series(1, 100000000) g WHERE g < 0",
		"SELECT count(*) FROM generate_series(1, 10000) a JOIN generate_series(1, 10000) b ON a < b",
		"SELECT count(*) FROM generate_series(1, 100000) a WHERE EXISTS (SELECT 1 FROM generate_series(1, 100000) b WHERE b = a)",
		"SELECT g FROM generate_series(1, 100000000) g ORDER BY g DESC LIMIT 1",
		"SELECT row_number() OVER () FROM generate_series(1, 100000000) LIMIT 1",
		"SELECT count(DISTINCT g) FROM generate_series(1, 100000000) g",
	} {
		start := time.Now()
		_, err := c.Exec(ctx, q)
		require.Equal(t, "57014", pgCode(err), q)
		require.Less(t, time.Since(start), 5*time.Second, q)
	}
}

// TestStatementTimeout: statement_timeout cuts a statement, a consumer
// WAIT among them, with 57014; the session goes on.
func TestStatementTimeout(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC st (CONSUMER c)")
	exec(t, c, "SET statement_timeout = '200ms'")
	t0 := time.Now()
	_, err := readBatch(ctx, c, "SELECT partition, offset FROM st WITH (CONSUMER = c, WAIT = '30s') LIMIT 10")
	took := time.Since(t0)
	require.Error(t, err)
	require.Equal(t, "57014", pgCode(err))
	require.Contains(t, err.Error(), "canceling statement due to statement timeout")
	require.Less(t, took, 10*time.Second)
	t.Logf("the 30 s WAIT was cut after %v", took)

	fillTopic(t, c, "big", 1, 3000)
	_, err = c.Exec(ctx, "SELECT count(*) FROM big a, big b WHERE a.data || b.data = 'never'")
	require.Equal(t, "57014", pgCode(err))

	exec(t, c, "SET statement_timeout = 0")
	exec(t, c, "INSERT INTO st (data) VALUES ('x')")
	ps, err := readBatch(ctx, c, "SELECT partition, offset FROM st WITH (CONSUMER = c, WAIT = '5s') LIMIT 10")
	require.NoError(t, err)
	require.Equal(t, []pos{{0, 0}}, ps, "the cut read moved nothing")
}

// TestIdleTimeouts: idle_in_transaction_session_timeout and
// idle_session_timeout end the connection with PostgreSQL's FATAL; the
// open block rolls back.
func TestIdleTimeouts(t *testing.T) {
	a := startTestServer(t)
	ctx := context.Background()
	c := connect(t, a)
	exec(t, c, "CREATE TOPIC idle_t")
	for _, tc := range []struct{ query, code string }{
		{"SET idle_in_transaction_session_timeout = '100ms'; BEGIN; INSERT INTO idle_t (data) VALUES ('never')", "25P03"},
		{"SET idle_session_timeout = '100ms'", "57P05"},
	} {
		_, fe := startupRaw(t, a)
		fe.Send(&pgproto3.Query{String: tc.query})
		require.NoError(t, fe.Flush())
		for {
			msg, err := fe.Receive()
			require.NoError(t, err)
			if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
		t0 := time.Now()
		msg, err := fe.Receive() // the client stays idle: the server speaks first
		require.NoError(t, err)
		er, ok := msg.(*pgproto3.ErrorResponse)
		require.True(t, ok, "got %T", msg)
		require.Equal(t, "FATAL", er.Severity)
		require.Equal(t, tc.code, er.Code, er.Message)
		require.GreaterOrEqual(t, time.Since(t0), 50*time.Millisecond)
		_, err = fe.Receive()
		require.Error(t, err, "then the connection closes")
	}
	var n int
	require.NoError(t, c.QueryRow(ctx, "SELECT count(*) FROM idle_t").Scan(&n))
	require.Equal(t, 0, n, "the idle block rolled back")
}

// TestClientMinMessages: client_min_messages = warning drops notices.
func TestClientMinMessages(t *testing.T) {
	a := startTestServer(t)
	c, log := connectNotices(t, a)
	exec(t, c, "CREATE TOPIC IF NOT EXISTS cm")
	exec(t, c, "CREATE TOPIC IF NOT EXISTS cm")
	exec(t, c, "SET client_min_messages = warning")
	exec(t, c, "CREATE TOPIC IF NOT EXISTS cm")
	exec(t, c, "COMMIT")
	log.mu.Lock()
	defer log.mu.Unlock()
	require.Equal(t, []string{`topic "cm" already exists, skipping`, "there is no transaction in progress"}, log.msgs)
}
