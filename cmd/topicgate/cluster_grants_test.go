package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestClusterGrants: two gateways seed the same bootstrap user at once
// (one wins the compare-and-set, the other finds it); a role created and
// a GRANT or REVOKE made through one gateway bind the other from its next
// statement (its read barrier sees them), and a password changed through
// one logs in through the other.
func TestClusterGrants(t *testing.T) {
	ctx := context.Background()
	g := startGateways(t, 0, 5*time.Second)
	cfg := g.gatewayConfig()
	cfg.Auth, cfg.Users = "scram-sha-256", map[string]string{"boss": "pw"}
	starts := make(chan *app, 2)
	for range 2 {
		go func() {
			a, err := start(cfg)
			if err != nil {
				t.Error(err)
			}
			starts <- a
		}()
	}
	var gws []*app
	for range 2 {
		a := <-starts
		require.NotNil(t, a)
		t.Cleanup(func() { a.Close() })
		gws = append(gws, a)
	}
	connect := func(a *app, user, pw string) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", user, pw, a.Addr()))
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return c, err
	}
	bossA, err := connect(gws[0], "boss", "pw")
	require.NoError(t, err)
	_, err = connect(gws[1], "boss", "pw")
	require.NoError(t, err)
	for _, q := range []string{"CREATE TOPIC t", "INSERT INTO t (data) VALUES ('x')", "CREATE ROLE app LOGIN PASSWORD 'a'"} {
		_, err := bossA.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	appB, err := connect(gws[1], "app", "a") // a role made through A logs in through B
	require.NoError(t, err)
	count := func() error {
		var n int64
		return appB.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n)
	}
	denied := func(err error) {
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "42501", pe.Code, pe.Message)
	}
	denied(count())
	for range 3 { // each change through A binds B's very next statement
		_, err = bossA.Exec(ctx, "GRANT SELECT ON TOPIC t TO app")
		require.NoError(t, err)
		require.NoError(t, count())
		_, err = bossA.Exec(ctx, "REVOKE SELECT ON TOPIC t FROM app")
		require.NoError(t, err)
		denied(count())
	}
	_, err = bossA.Exec(ctx, "ALTER ROLE app PASSWORD 'b'")
	require.NoError(t, err)
	_, err = connect(gws[1], "app", "a")
	require.Error(t, err)
	appB2, err := connect(gws[1], "app", "b")
	require.NoError(t, err)

	// pg_terminate_backend through A of a session B holds: A decides
	// (app may not end a superuser's session), B ends it.
	bossB, err := connect(gws[1], "boss", "pw")
	require.NoError(t, err)
	appA, err := connect(gws[0], "app", "b")
	require.NoError(t, err)
	var ok bool
	err = appA.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(bossB.PgConn().PID())).Scan(&ok)
	denied(err)
	require.NoError(t, appA.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(appB2.PgConn().PID())).Scan(&ok))
	require.True(t, ok)
	require.NoError(t, bossA.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(appB.PgConn().PID())).Scan(&ok))
	require.True(t, ok)
	for _, c := range []*pgx.Conn{appB, appB2} {
		// As in PostgreSQL the signal is sent, not awaited: read what
		// its gateway sends the idle session, FATAL 57P01 then EOF.
		nc := c.PgConn().Conn()
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(10*time.Second)))
		b, err := io.ReadAll(nc)
		require.NoError(t, err)
		require.Contains(t, string(b), "57P01")
	}
	require.NoError(t, bossB.Ping(ctx))
}
