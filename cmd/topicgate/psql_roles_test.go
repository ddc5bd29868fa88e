package main

import (
	"strings"
	"testing"

	"topicgate/wire/pgtest"
)

// psqlRolesSetup is run on both servers as postgres, after the table
// (PostgreSQL) or topic (topicgate) orders and secret exist: roles, a
// membership, grants on orders and on schema public, default privileges.
var psqlRolesSetup = []string{
	"CREATE ROLE app LOGIN",
	"CREATE ROLE readers",
	`CREATE ROLE "Ops Team" LOGIN CREATEROLE CONNECTION LIMIT 3 VALID UNTIL '2100-01-01 00:00:00+00'`,
	"CREATE ROLE nologin NOINHERIT",
	"GRANT readers TO app",
	`GRANT readers TO "Ops Team" WITH ADMIN OPTION`,
	"GRANT SELECT, INSERT ON orders TO app",
	"GRANT SELECT ON orders TO readers WITH GRANT OPTION",
	"GRANT SELECT ON orders TO PUBLIC",
	"GRANT CREATE ON SCHEMA public TO app",
	"ALTER DEFAULT PRIVILEGES FOR ROLE app GRANT SELECT ON TABLES TO readers",
	"ALTER DEFAULT PRIVILEGES FOR ROLE readers GRANT INSERT, SELECT ON TABLES TO app WITH GRANT OPTION",
}

// TestPsqlRoles runs psql 15's role and privilege commands (\du, \dg,
// \dp, \z, \ddp, \dn+) against PostgreSQL 15 and against topicgate, set
// up alike with a table there where a topic is here, as a superuser and
// as a plain role, and requires the same output where the objects
// overlap. docs/psql-catalog.md lists the deliberate differences; the
// ones this test shows are asserted at its end.
func TestPsqlRoles(t *testing.T) {
	pg := pgtest.StartPostgres(t)
	tg := startTestServer(t)
	setup := func(addr string, first ...string) {
		args := []string{"-v", "ON_ERROR_STOP=1", "-q"}
		for _, q := range append(first, psqlRolesSetup...) {
			args = append(args, "-c", q)
		}
		psqlRequireOK(t, runPsqlAt(t, addr, "postgres", args...))
	}
	// pgtest_pw is StartPostgres's, for scripts that log in with a password.
	setup(pg.Addr, "DROP ROLE pgtest_pw", "CREATE TABLE orders (data bytea)", "CREATE TABLE secret (data bytea)")
	setup(tg.Addr(), "CREATE TOPIC orders", "CREATE TOPIC secret")

	for _, user := range []string{"postgres", "app"} {
		for _, cmd := range []string{`\du`, `\dg`, `\du app`, `\du+ "Ops Team"`, `\dp orders`, `\z orders`,
			`\dp+ orders`, `\ddp`, `\ddp app`, `\dn+ public`, `\dn public`} {
			want := runPsqlAt(t, pg.Addr, user, "-c", cmd)
			got := runPsqlAt(t, tg.Addr(), user, "-c", cmd)
			if got != want {
				t.Errorf("%s as %s: PostgreSQL 15 (exit %d):\n%s%s\ntopicgate (exit %d):\n%s%s", cmd, user,
					want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
			}
		}
	}

	// The deliberate differences. A role sees only the topics it holds
	// some privilege on: app's \dp lists orders and not secret (PostgreSQL
	// lists every table).
	r := runPsqlAt(t, tg.Addr(), "app", "-A", "-t", "-c", `\dp`)
	psqlRequireOK(t, r)
	if !strings.Contains(r.stdout, "|orders|") || strings.Contains(r.stdout, "secret") {
		t.Errorf(`\dp as app: want orders and not secret:%s`, r.stdout)
	}
	r = runPsqlAt(t, pg.Addr, "app", "-A", "-t", "-c", `\dp`)
	if !strings.Contains(r.stdout, "|secret|") {
		t.Errorf(`\dp as app on PostgreSQL lists every table:%s`, r.stdout)
	}
	// Default privileges on consumers are a sequence's in pg_default_acl
	// (USAGE, ON SEQUENCES being ON CONSUMERS).
	psqlRequireOK(t, runPsqlAt(t, tg.Addr(), "postgres", "-v", "ON_ERROR_STOP=1",
		"-c", "ALTER DEFAULT PRIVILEGES FOR ROLE app GRANT USAGE ON CONSUMERS TO readers"))
	r = runPsqlAt(t, tg.Addr(), "app", "-A", "-t", "-c", `\ddp`)
	psqlRequireOK(t, r)
	if !strings.Contains(r.stdout, "app||sequence|app=U/app\nreaders=U/app\n") {
		t.Errorf(`\ddp: want app's default privileges on consumers as a sequence's:%s`, r.stdout)
	}
}

// TestConsumerPrivilegesView: sys.consumer_privileges lists each
// consumer's grants as information_schema.table_privileges lists a
// table's (the owner's USAGE while none was granted), and a role sees the
// rows of the topics it holds some privilege on, as in the other sys
// views.
func TestConsumerPrivilegesView(t *testing.T) {
	a := startTestServer(t)
	psqlRequireOK(t, runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-q",
		"-c", "CREATE ROLE app LOGIN", "-c", "CREATE ROLE ops",
		"-c", "CREATE TOPIC orders (CONSUMER analytics, CONSUMER billing)",
		"-c", "CREATE TOPIC secret (CONSUMER audit)",
		"-c", "GRANT USAGE ON CONSUMER orders.analytics TO app WITH GRANT OPTION",
		"-c", "GRANT USAGE ON CONSUMER orders.analytics TO PUBLIC"))
	query := "SELECT * FROM sys.consumer_privileges ORDER BY 1, 2, 3"
	r := runPsql(t, a, "-A", "-t", "-c", query)
	psqlRequireOK(t, r)
	psqlRequireText(t, strings.Join([]string{
		"orders|analytics|PUBLIC|postgres|USAGE|NO",
		"orders|analytics|app|postgres|USAGE|YES",
		"orders|analytics|postgres|postgres|USAGE|YES",
		"orders|billing|postgres|postgres|USAGE|YES",
		"secret|audit|postgres|postgres|USAGE|YES",
		"",
	}, "\n"), r.stdout, "sys.consumer_privileges as postgres")

	r = runPsqlAt(t, a.Addr(), "app", "-A", "-t", "-c", query)
	psqlRequireOK(t, r)
	if strings.Contains(r.stdout, "secret") || !strings.Contains(r.stdout, "orders|analytics|app|postgres|USAGE|YES") {
		t.Errorf("sys.consumer_privileges as app: want orders' rows only:\n%s", r.stdout)
	}
}
