package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestRoleLogins: roles made with SQL log in with their passwords, stored
// as verifiers; LOGIN, CONNECTION LIMIT and VALID UNTIL are enforced; a
// wrong password and an unknown role fail alike; all of it survives a
// restart, and the bootstrap user is seeded once, not reset.
func TestRoleLogins(t *testing.T) {
	for _, method := range []string{"scram-sha-256", "md5", "password"} {
		t.Run(method, func(t *testing.T) { testRoleLogins(t, method) })
	}
}

func testRoleLogins(t *testing.T, method string) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Auth, cfg.Users = method, map[string]string{"boss": "bosspw"}
	a := startServer(t, cfg)
	dsn := func(a *app, user, pw string) string {
		return fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", user, pw, a.Addr())
	}
	connect := func(a *app, user, pw string) (*pgx.Conn, error) {
		c, err := pgx.Connect(ctx, dsn(a, user, pw))
		if err == nil {
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return c, err
	}
	code := func(err error) string {
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		return pe.Code + " " + pe.Message
	}
	boss, err := connect(a, "boss", "bosspw")
	require.NoError(t, err)
	for _, q := range []string{
		"CREATE ROLE app LOGIN PASSWORD 'x'",
		"CREATE ROLE nolog PASSWORD 'z'",
		"CREATE ROLE one LOGIN PASSWORD 'o' CONNECTION LIMIT 1",
		"CREATE ROLE old LOGIN PASSWORD 'p' VALID UNTIL '2000-01-01'",
		"ALTER ROLE boss PASSWORD 'changed'",
	} {
		_, err := boss.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	app, err := connect(a, "app", "x")
	require.NoError(t, err)
	var cu, super string
	require.NoError(t, app.QueryRow(ctx, "SELECT current_user, current_setting('is_superuser')").Scan(&cu, &super))
	require.Equal(t, "app/off", cu+"/"+super)

	_, err = connect(a, "app", "wrong")
	require.Equal(t, `28P01 password authentication failed for user "app"`, code(err))
	_, err = connect(a, "ghost", "x")
	require.Equal(t, `28P01 password authentication failed for user "ghost"`, code(err))
	_, err = connect(a, "nolog", "z")
	require.Equal(t, `28000 role "nolog" is not permitted to log in`, code(err))
	_, err = connect(a, "old", "p")
	require.Equal(t, `28P01 password authentication failed for user "old"`, code(err))
	_, err = connect(a, "one", "o")
	require.NoError(t, err)
	_, err = connect(a, "one", "o")
	require.Equal(t, `53300 too many connections for role "one"`, code(err))

	_, err = app.Exec(ctx, "ALTER ROLE app PASSWORD 'y'") // one's own password
	require.NoError(t, err)
	_, err = connect(a, "app", "x")
	require.Error(t, err)
	_, err = app.Exec(ctx, "ALTER ROLE app SUPERUSER")
	require.Contains(t, code(err), "42501")

	// A restart keeps the roles and does not reset the bootstrap user's
	// password from the flag.
	if onCluster() {
		return
	}
	require.NoError(t, a.Close())
	b := startServer(t, cfg)
	_, err = connect(b, "app", "y")
	require.NoError(t, err)
	_, err = connect(b, "boss", "bosspw")
	require.Error(t, err)
	_, err = connect(b, "boss", "changed")
	require.NoError(t, err)
}

// TestSignalBackends: pg_terminate_backend and pg_cancel_backend end or
// cancel one's own sessions, others' only with pg_signal_backend, and a
// superuser's only as a superuser, with PostgreSQL's messages.
func TestSignalBackends(t *testing.T) {
	ctx := context.Background()
	a := startServer(t, testConfig(t))
	conn := func(user string) *pgx.Conn {
		c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s@%s/postgres?sslmode=disable", user, a.Addr()))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	admin := conn("admin") // no such role: the bootstrap superuser
	for _, q := range []string{"CREATE ROLE app LOGIN", "CREATE ROLE other LOGIN", "CREATE ROLE boss LOGIN SUPERUSER"} {
		_, err := admin.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	app, app2, other, boss := conn("app"), conn("app"), conn("other"), conn("boss")
	pid := func(c *pgx.Conn) uint32 { return c.PgConn().PID() }
	signal := func(c *pgx.Conn, fn string, target *pgx.Conn) (bool, error) {
		var ok bool
		err := c.QueryRow(ctx, "SELECT "+fn+"($1)", int32(pid(target))).Scan(&ok)
		return ok, err
	}
	denied := func(err error, msg string) {
		var pe *pgconn.PgError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "42501", pe.Code)
		require.Equal(t, msg, pe.Message)
	}

	ok, err := signal(app, "pg_cancel_backend", app2) // one's own: allowed
	require.NoError(t, err)
	require.True(t, ok)
	_, err = signal(app, "pg_terminate_backend", other)
	denied(err, "permission denied to terminate process")
	_, err = signal(app, "pg_cancel_backend", boss)
	denied(err, "permission denied to cancel query")

	_, err = admin.Exec(ctx, "GRANT pg_signal_backend TO app")
	require.NoError(t, err)
	ok, err = signal(app, "pg_terminate_backend", other)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = other.Exec(ctx, "SELECT 1")
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		require.Equal(t, "57P01", pe.Code)
	} else {
		require.Error(t, err) // the connection is gone
	}
	_, err = signal(app, "pg_terminate_backend", boss)
	denied(err, "permission denied to terminate process")

	ok, err = signal(app, "pg_terminate_backend", app2)
	require.NoError(t, err)
	require.True(t, ok)
	var none *bool
	require.NoError(t, app.QueryRow(ctx, "SELECT pg_terminate_backend(999999)").Scan(&none))
	require.NotNil(t, none)
	require.False(t, *none)
}
