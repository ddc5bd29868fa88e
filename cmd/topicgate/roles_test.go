package main

import (
	"context"
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
