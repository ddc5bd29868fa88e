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
