package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"topicgate/audit"
)

// auditLine is one line of the audit log.
type auditLine struct {
	Time        string   `json:"time"`
	Role        string   `json:"role"`
	SessionUser string   `json:"session_user"`
	Remote      string   `json:"remote"`
	Session     uint32   `json:"session"`
	Class       string   `json:"class"`
	Command     string   `json:"command"`
	Objects     []string `json:"objects"`
	Outcome     string   `json:"outcome"`
	Statement   string   `json:"statement"`
}

// readAudit reads the audit log at path: every line must be a whole JSON
// object with a time in RFC 3339 with microseconds, in UTC.
func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []auditLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l auditLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "a line is not JSON: %s", sc.Text())
		_, err := time.Parse(audit.TimeFormat, l.Time)
		require.NoError(t, err, sc.Text())
		require.True(t, strings.HasSuffix(l.Time, "Z") && len(l.Time) == len("2006-01-02T15:04:05.000000Z"), l.Time)
		out = append(out, l)
	}
	return out
}

// auditOf are the lines whose statement contains text.
func auditOf(lines []auditLine, text string) []auditLine {
	var out []auditLine
	for _, l := range lines {
		if strings.Contains(l.Statement, text) {
			out = append(out, l)
		}
	}
	return out
}

// oneAudit is the one line whose statement contains text.
func oneAudit(t *testing.T, lines []auditLine, text string) auditLine {
	t.Helper()
	got := auditOf(lines, text)
	require.Len(t, got, 1, "lines with %q: %+v", text, got)
	return got[0]
}

// TestAuditStatements: with --audit-log each statement is one line, in
// pgaudit's classes, with its objects and outcome: reads, writes (a
// multi-row INSERT, on both protocols, and a COPY of 500 rows are one line
// each), consumer reads and acks, DDL, GRANT, CREATE ROLE (its password
// never in the file), a denial as a role without the privilege; MISC is
// left out by default.
func TestAuditStatements(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	cfg.AuditLog = path
	a := startServer(t, cfg)
	su := connect(t, a)

	exec(t, su, "CREATE TOPIC aud (CONSUMER c, CONSUMER q WITH (type = 'shared'))")
	exec(t, su, "INSERT INTO aud (data) VALUES ('a'), ('b'), ('c')")
	exec(t, su, "INSERT INTO aud (partition, data) VALUES ($1, $2), ($1, $3)", int32(0), []byte("d"), []byte("e"))
	rows := make([][]any, 500)
	for i := range rows {
		rows[i] = []any{[]byte(fmt.Sprint(i))}
	}
	n, err := su.CopyFrom(ctx, pgx.Identifier{"aud"}, []string{"data"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	require.EqualValues(t, 500, n)
	var cnt int64
	require.NoError(t, su.QueryRow(ctx, "SELECT count(*) FROM aud").Scan(&cnt))
	require.EqualValues(t, 505, cnt)
	_, err = su.PgConn().CopyTo(ctx, &bytes.Buffer{}, "COPY (SELECT data FROM aud WHERE offset < 2) TO STDOUT")
	require.NoError(t, err)
	exec(t, su, "SELECT offset FROM aud WITH (CONSUMER = c) LIMIT 10")
	exec(t, su, "SELECT partition, offset FROM aud WITH (CONSUMER = q) LIMIT 1")
	exec(t, su, "DELETE FROM aud WITH (CONSUMER = q) WHERE partition = 0 AND offset = 0")
	exec(t, su, "SET application_name = 'misc'")
	exec(t, su, "EXPLAIN SELECT data FROM aud")
	exec(t, su, "BEGIN")
	exec(t, su, "DECLARE cur CURSOR FOR SELECT data FROM aud")
	exec(t, su, "FETCH 2 FROM cur")
	exec(t, su, "COMMIT")
	exec(t, su, "CREATE ROLE app LOGIN PASSWORD 'sekrit-pw-123'")
	exec(t, su, "ALTER ROLE app PASSWORD 'other-sekrit'")
	exec(t, su, "GRANT SELECT ON TOPIC aud TO app")
	exec(t, su, "GRANT USAGE ON CONSUMER aud.c TO app")

	// A login naming a role acts as it (trust): INSERT is not granted.
	appc, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/postgres?sslmode=disable", a.Addr()))
	require.NoError(t, err)
	t.Cleanup(func() { appc.Close(context.Background()) })
	_, err = appc.Exec(ctx, "INSERT INTO aud (data) VALUES ('no')")
	require.Equal(t, "42501", pgCode(err))
	exec(t, appc, "SELECT max(offset) FROM aud")
	exec(t, su, "DROP TOPIC aud")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(b), "sekrit", "a password in the audit log")
	lines := readAudit(t, path)
	for _, l := range lines {
		require.NotEqual(t, "MISC", l.Class, "MISC logged by default: %+v", l)
	}
	check := func(text, class, command, outcome string, objects ...string) auditLine {
		t.Helper()
		l := oneAudit(t, lines, text)
		require.Equal(t, class+" "+command+" "+outcome, l.Class+" "+l.Command+" "+l.Outcome, "%+v", l)
		if objects == nil {
			objects = []string{}
		}
		require.Equal(t, objects, l.Objects, "%+v", l)
		return l
	}
	check("CREATE TOPIC aud", "DDL", "CREATE TOPIC", "ok", "aud")
	check("VALUES ('a')", "WRITE", "INSERT", "ok", "aud")
	check("VALUES ($1, $2)", "WRITE", "INSERT", "ok", "aud")
	check("COPY aud", "WRITE", "COPY", "ok", "aud")
	require.Len(t, auditOf(lines, "COPY aud"), 1, "a COPY of 500 rows is one line")
	check("SELECT count(*) FROM aud", "READ", "SELECT", "ok", "aud")
	check("TO STDOUT", "READ", "COPY", "ok", "aud")
	check("consumer = c", "CONSUME", "SELECT", "ok", "aud", "aud.c")
	check("consumer = q) LIMIT", "CONSUME", "SELECT", "ok", "aud", "aud.q")
	check("DELETE FROM aud", "CONSUME", "DELETE", "ok", "aud.q")
	check("EXPLAIN SELECT", "READ", "EXPLAIN", "ok", "aud")
	check("DECLARE cur", "READ", "DECLARE CURSOR", "ok", "aud")
	check("FETCH", "READ", "FETCH", "ok")
	cr := check("CREATE ROLE app", "ROLE", "CREATE ROLE", "ok")
	require.Contains(t, cr.Statement, "PASSWORD '<redacted>'")
	check("ALTER ROLE app", "ROLE", "ALTER ROLE", "ok")
	check("GRANT SELECT ON TOPIC aud", "ROLE", "GRANT", "ok", "aud")
	check("GRANT USAGE ON CONSUMER", "ROLE", "GRANT", "ok", "aud.c")
	check("DROP TOPIC aud", "DDL", "DROP TOPIC", "ok", "aud")
	denied := check("VALUES ('no')", "WRITE", "INSERT", "42501", "aud")
	require.Equal(t, "app app", denied.Role+" "+denied.SessionUser)
	require.NotZero(t, denied.Session)
	require.Contains(t, denied.Remote, "127.0.0.1:")
	require.Equal(t, "postgres", check("CREATE TOPIC aud", "DDL", "CREATE TOPIC", "ok", "aud").Role)
	// Logins are AUTH lines, each before its session's statements.
	var logins int
	for _, l := range lines {
		if l.Class == "AUTH" {
			require.Equal(t, "LOGIN ok", l.Command+" "+l.Outcome)
			logins++
		}
	}
	require.Equal(t, 2, logins)
}

// TestAuditLogins: with --audit-classes READ a failed login (a wrong
// password, an unknown role, a role without LOGIN) and a denial of a ROLE
// statement are logged all the same; a successful login, a GRANT and SET
// ROLE are not.
func TestAuditLogins(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	cfg.AuditLog, cfg.AuditClasses = path, "read"
	cfg.Auth, cfg.Users = "scram-sha-256", map[string]string{"boss": "bosspw"}
	a := startServer(t, cfg)
	dsn := func(user, pw string) string {
		return fmt.Sprintf("postgres://%s:%s@%s/postgres?sslmode=disable", user, pw, a.Addr())
	}
	boss, err := pgx.Connect(ctx, dsn("boss", "bosspw"))
	require.NoError(t, err)
	t.Cleanup(func() { boss.Close(context.Background()) })
	exec(t, boss, "CREATE ROLE app LOGIN PASSWORD 'apppw'")
	exec(t, boss, "CREATE ROLE nolog PASSWORD 'x'")
	exec(t, boss, "GRANT app TO boss")
	exec(t, boss, "SET ROLE app")
	exec(t, boss, "RESET ROLE")

	for _, c := range []struct{ user, pw, code string }{
		{"boss", "wrong-pw-1", "28P01"}, {"ghost", "x", "28P01"}, {"nolog", "x", "28000"},
	} {
		_, err := pgx.Connect(ctx, dsn(c.user, c.pw))
		require.Equal(t, c.code, pgCode(err), c.user)
	}
	app, err := pgx.Connect(ctx, dsn("app", "apppw"))
	require.NoError(t, err)
	t.Cleanup(func() { app.Close(context.Background()) })
	_, err = app.Exec(ctx, "CREATE ROLE sneaky")
	require.Equal(t, "42501", pgCode(err))
	exec(t, app, "SELECT 1")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(b), "apppw")
	require.NotContains(t, string(b), "wrong-pw-1")
	lines := readAudit(t, path)
	var got []string
	for _, l := range lines {
		s := l.Class + " " + l.Command + " " + l.Role + " " + l.Outcome
		if l.Class == "AUTH" {
			require.Zero(t, l.Session, "a refused login has no session: %+v", l)
			require.Contains(t, l.Remote, "127.0.0.1:")
		} else {
			s += " " + l.Statement
		}
		got = append(got, s)
	}
	require.Equal(t, []string{
		"AUTH LOGIN boss 28P01",
		"AUTH LOGIN ghost 28P01",
		"AUTH LOGIN nolog 28000",
		"ROLE CREATE ROLE app 42501 CREATE ROLE sneaky",
		"READ SELECT app ok SELECT 1",
	}, got)
}

// TestAuditReopen: SIGHUP reopens the audit log (what logrotate sends
// after moving it): the lines after it land in a new file at the path.
// With --audit-classes all, MISC statements are logged too.
func TestAuditReopen(t *testing.T) {
	cfg := testConfig(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	cfg.AuditLog, cfg.AuditClasses = path, "all"
	a := startServer(t, cfg)
	c := connect(t, a)
	exec(t, c, "SET application_name = 'x'")
	exec(t, c, "SELECT 'before'")
	require.NoError(t, os.Rename(path, path+".1"))
	exec(t, c, "SELECT 'moved'")

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	reopened := make(chan error)
	go a.reopenAuditOnHUP(hup, reopened)
	t.Cleanup(func() { signal.Stop(hup); close(hup) })
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	require.NoError(t, <-reopened)
	exec(t, c, "SELECT 'after'")

	old, cur := readAudit(t, path+".1"), readAudit(t, path)
	set := oneAudit(t, old, "application_name")
	require.Equal(t, "MISC SET ok", set.Class+" "+set.Command+" "+set.Outcome)
	require.Len(t, auditOf(old, "'before'"), 1)
	require.Len(t, auditOf(old, "'moved'"), 1, "until the reopen, lines go to the moved file")
	require.Empty(t, auditOf(old, "'after'"))
	require.Len(t, cur, 1)
	require.Equal(t, "SELECT 'after'", cur[0].Statement)
}
