package parser

import (
	"strings"
	"testing"
	"time"

	"topicgate/sql"
)

func TestAuthAST(t *testing.T) {
	cr := mustParse1(t, "CREATE USER alice PASSWORD 'secret' VALID UNTIL '2026-05-01 12:30:00+02' IN ROLE readers").(*sql.CreateRole)
	want := time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC)
	switch o := cr.Options; {
	case cr.Name != "alice", o.Login == nil || !*o.Login, o.Password == nil || *o.Password != "secret":
		t.Errorf("bad CREATE USER: %+v", cr)
	case o.ValidUntil == nil || !o.ValidUntil.Equal(want) || o.ValidUntilInfinity:
		t.Errorf("bad VALID UNTIL: %v", o.ValidUntil)
	case len(o.InRole) != 1 || o.InRole[0] != (sql.RoleSpec{Name: "readers"}):
		t.Errorf("bad IN ROLE: %+v", o.InRole)
	}

	c := mustParse1(t, "GRANT SELECT, UPDATE ON CONSUMER orders.analytics, public.orders.billing TO bob").(*sql.GrantPrivs)
	if c.Kind != sql.ObjConsumer || len(c.Consumers) != 2 || c.Consumers[1] != (sql.ConsumerName{Topic: "orders", Consumer: "billing"}) || len(c.Objects) != 0 {
		t.Errorf("bad consumer grant: %+v", c)
	}

	g := mustParse1(t, "GRANT SELECT ROW (partition, offset), UPDATE ROW ON TOPIC orders TO PUBLIC, CURRENT_ROLE").(*sql.GrantPrivs)
	if g.Kind != sql.ObjTopic || len(g.Objects) != 1 || g.Objects[0] != "orders" {
		t.Errorf("bad topic grant: %+v", g)
	}
	if len(g.Privs) != 2 || g.Privs[0].Name != "SELECT" || strings.Join(g.Privs[0].Columns, ",") != "partition,offset" || g.Privs[1].Name != "INSERT" {
		t.Errorf("bad privileges: %+v", g.Privs)
	}
	if len(g.Grantees) != 2 || g.Grantees[0].Kind != sql.RolePublic || g.Grantees[1].Kind != sql.RoleCurrentUser {
		t.Errorf("bad grantees: %+v", g.Grantees)
	}

	all := mustParse1(t, "REVOKE ALL PRIVILEGES ON TOPIC public.orders FROM alice").(*sql.GrantPrivs)
	if !all.Revoke || all.Privs != nil || all.Kind != sql.ObjTopic || len(all.Objects) != 1 || all.Objects[0] != "orders" {
		t.Errorf("bad REVOKE ALL: %+v", all)
	}

	gr := mustParse1(t, "REVOKE ADMIN OPTION FOR readers FROM alice").(*sql.GrantRole)
	if !gr.Revoke || gr.Admin == nil || gr.Inherit != nil || gr.Set != nil {
		t.Errorf("bad REVOKE ADMIN OPTION FOR: %+v", gr)
	}
}

func TestRedactPasswords(t *testing.T) {
	for _, q := range []string{"CREATE ROLE a PASSWORD 'hunter2'", "ALTER USER a WITH LOGIN PASSWORD 'hunter2'"} {
		s := mustParse1(t, q)
		r := sql.RedactPasswords(s)
		if out := sql.Format(r); strings.Contains(out, "hunter2") || !strings.Contains(out, sql.PasswordRedacted) {
			t.Errorf("RedactPasswords(%q) prints %q", q, out)
		}
		if !strings.Contains(sql.Format(s), "hunter2") {
			t.Errorf("RedactPasswords(%q) changed the parsed tree", q)
		}
	}
	s := mustParse1(t, "CREATE ROLE a PASSWORD NULL")
	if sql.RedactPasswords(s) != s {
		t.Error("RedactPasswords copied a statement without a password")
	}
}
