package acl

import (
	"errors"
	"testing"
)

// C: o grants SELECT WITH GRANT OPTION to group g; v1, a member of g,
// grants SELECT to v2 and PostgreSQL records g as the grantor. E: v2
// cannot give v1 back the grant option it got from v1. Recorded from
// PostgreSQL 15.18.
func TestDocGrantAgainstPostgres(t *testing.T) {
	d := newTestDoc(t, "o", "v1", "v2", "v3", "g")
	must(t, d.GrantRole("g", "v1", "postgres", false, true, true))
	var list []Item // NULL relacl
	list = mustGrant(t, d, list, "o", "g", Select, true)
	if g, opts := d.BestGrantor("v1", "o", list, Select, TopicPrivs); g != "g" || opts != Select {
		t.Fatalf("BestGrantor(v1) = %s, %v", g, opts.Names())
	}
	list = mustGrant(t, d, list, "g", "v2", Select, false)
	want(t, list, "{o=arwdDxt/o,g=r*/o,v2=r/g}")
	_, _, err := d.RevokeACL(list, "o", "g", "o", Select, false, false, TopicPrivs)
	if !errors.Is(err, ErrDependentPrivileges) {
		t.Fatalf("restrict: %v", err)
	}
	list, _, err = d.RevokeACL(list, "o", "g", "o", Select, false, true, TopicPrivs)
	must(t, err)
	want(t, list, "{o=arwdDxt/o}")

	list = mustGrant(t, d, list, "o", "v1", Select, true)
	list = mustGrant(t, d, list, "v1", "v2", Select, true)
	g, _ := d.BestGrantor("v2", "o", list, Select, TopicPrivs)
	_, err = d.GrantACL(list, "o", "v1", g, Select, true, TopicPrivs)
	wantCode(t, err, "0LP01", "grant options cannot be granted back to your own grantor")
	want(t, list, "{o=arwdDxt/o,v1=r*/o,v2=r*/v1}")
	_, err = d.GrantACL(list, "o", "", "o", Select, true, TopicPrivs)
	wantCode(t, err, "0LP01", "grant options can only be granted to roles")
	// A superuser grants as the owner.
	if g, opts := d.BestGrantor("postgres", "o", list, Insert, TopicPrivs); g != "o" || opts != Insert {
		t.Errorf("BestGrantor(superuser) = %s, %v", g, opts)
	}
	// Without any grant option the grantor is the role itself, with none.
	if g, opts := d.BestGrantor("v3", "o", list, Insert, TopicPrivs); g != "v3" || opts != 0 {
		t.Errorf("BestGrantor(v3) = %s, %v", g, opts)
	}
}

// mustGrant grants as BestGrantor picks the grantor for actor.
func mustGrant(t *testing.T, d *Doc, list []Item, actor, grantee string, p Priv, opt bool) []Item {
	t.Helper()
	g, opts := d.BestGrantor(actor, "o", list, p, TopicPrivs)
	out, err := d.GrantACL(list, "o", grantee, g, p&opts, opt, TopicPrivs)
	must(t, err)
	return out
}

func want(t *testing.T, list []Item, s string) {
	t.Helper()
	if got := FormatACL(list); got != s {
		t.Fatalf("got %s, want %s", got, s)
	}
}

func TestPrivs(t *testing.T) {
	d := newTestDoc(t, "o", "member", "noinh", "reader", "writer", "other")
	must(t, d.GrantRole("o", "member", "postgres", false, true, true))
	must(t, d.GrantRole("o", "noinh", "postgres", false, false, true))
	must(t, d.GrantRole("pg_read_all_data", "reader", "postgres", false, true, true))
	must(t, d.GrantRole("pg_write_all_data", "writer", "postgres", false, true, true))
	list := []Item{
		{Grantee: "o", Grantor: "o", Privs: uint32(TopicPrivs &^ Delete)},
		{Grantee: "", Grantor: "o", Privs: uint32(References)},
		{Grantee: "other", Grantor: "o", Privs: uint32(Update), GrantOptions: uint32(Update)},
	}
	for _, c := range []struct {
		role        string
		privs, opts Priv
	}{
		{"o", TopicPrivs &^ Delete, TopicPrivs},
		{"member", TopicPrivs &^ Delete, TopicPrivs},
		{"noinh", References, 0},
		{"other", Update | References, Update},
		{"reader", Select | References, 0},
		{"writer", Insert | Update | Delete | References, 0},
		{"postgres", TopicPrivs, TopicPrivs},
	} {
		if got := d.TopicPrivs(c.role, "o", list); got != c.privs {
			t.Errorf("TopicPrivs(%s) = %s", c.role, got.Letters())
		}
		if got := d.GrantOptions(c.role, "o", list, TopicPrivs); got != c.opts {
			t.Errorf("GrantOptions(%s) = %s", c.role, got.Letters())
		}
	}
	// pg_read_all_data gives no USAGE on consumers; a NULL ACL is the owner's.
	if d.Privs("reader", "o", nil, ConsumerPrivs) != 0 || d.Privs("member", "o", nil, ConsumerPrivs) != Usage {
		t.Error("consumer privileges")
	}
	if d.Privs("o", "o", []Item{}, TopicPrivs) != 0 {
		t.Error("an empty ACL gives the owner nothing")
	}
}

func TestSchemaPrivileges(t *testing.T) {
	d := newTestDoc(t, "app", "reader")
	must(t, d.GrantRole("pg_read_all_data", "reader", "postgres", false, true, true))
	if d.SchemaPrivileges("app") != Usage || d.SchemaPrivileges("postgres") != SchemaPrivs || d.SchemaPrivileges("reader") != Usage {
		t.Error("schema public: USAGE for PUBLIC, all for its owner")
	}
	d.SchemaACL, _, _ = d.RevokeACL(d.SchemaACL, d.SchemaOwnerName(), "", "pg_database_owner", Usage, false, false, SchemaPrivs)
	if d.SchemaPrivileges("app") != 0 || d.SchemaPrivileges("reader") != Usage {
		t.Error("after REVOKE USAGE FROM PUBLIC")
	}
	d.ReassignOwned("pg_database_owner", "app")
	want(t, d.SchemaACL, "{app=UC/app}")
	if d.SchemaPrivileges("app") != SchemaPrivs {
		t.Error("new owner")
	}
}

// The same statements on PostgreSQL 15.18 left pg_default_acl with
// {o=arwdDxt/o,v1=r*/o}, then {o=arwdDxt/o,v1=r/o}, then no entry.
func TestAlterDefaults(t *testing.T) {
	d := newTestDoc(t, "o", "app")
	if d.DefaultsFor("o", KindTopic) != nil {
		t.Fatal("fresh defaults")
	}
	d.AlterDefaults("o", KindTopic, true, "app", Select, true)
	want(t, d.DefaultsFor("o", KindTopic), "{o=arwdDxt/o,app=r*/o}")
	if d.DefaultsFor("o", KindConsumer) != nil || d.DefaultsFor("app", KindTopic) != nil {
		t.Error("defaults leak to another kind or role")
	}
	d.AlterDefaults("o", KindTopic, false, "app", Select, true)
	want(t, d.DefaultsFor("o", KindTopic), "{o=arwdDxt/o,app=r/o}")
	d.AlterDefaults("o", KindTopic, false, "app", Select, false)
	if d.DefaultsFor("o", KindTopic) != nil || len(d.Defaults) != 0 {
		t.Errorf("entry equal to the default stays: %+v", d.Defaults)
	}
	d.AlterDefaults("o", KindConsumer, false, "o", Usage, false)
	want(t, d.DefaultsFor("o", KindConsumer), "{}")
	d.AlterDefaults("o", KindConsumer, true, "o", Usage, false)
	if len(d.Defaults) != 0 {
		t.Error("granting back the default keeps the entry")
	}
}

func TestDropRoleDependencies(t *testing.T) {
	d := newTestDoc(t, "r", "a", "g")
	must(t, d.GrantRole("r", "g", "postgres", true, true, true))
	must(t, d.GrantRole("r", "a", "g", false, true, true))
	err := d.DropRole("g")
	wantCode(t, err, "2BP01", `role "g" cannot be dropped because some objects depend on it`)
	if err.(*Error).Detail != "privileges for membership of role a in role r" {
		t.Errorf("detail %q", err.(*Error).Detail)
	}
	d.DropOwned("g")
	must(t, d.DropRole("g"))
	if len(d.Members) != 0 {
		t.Errorf("memberships left: %+v", d.Members)
	}
	d.AlterDefaults("a", KindTopic, true, "r", Select, false)
	wantCode(t, d.DropRole("r"), "2BP01", `role "r" cannot be dropped because some objects depend on it`)
	wantCode(t, d.DropRole("a"), "2BP01", `role "a" cannot be dropped because some objects depend on it`)
}
