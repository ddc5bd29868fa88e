package acl

import (
	"errors"
	"testing"
)

// newTestDoc returns a Doc with the bootstrap superuser postgres and the
// given ordinary roles (INHERIT, as CREATE ROLE makes them).
func newTestDoc(t *testing.T, names ...string) *Doc {
	t.Helper()
	d := NewDoc()
	if _, err := d.CreateBootstrap("postgres"); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := d.CreateRole(Role{Name: n, Inherit: true, ConnLimit: -1}); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code || e.Message != msg {
		t.Fatalf("err = %v, want %s %s", err, code, msg)
	}
}

func TestCreateAndDropRole(t *testing.T) {
	d := newTestDoc(t, "a")
	if r, _ := d.Role("a"); r.OID != FirstNormalObjectID {
		t.Errorf("first OID %d", r.OID)
	}
	_, err := d.CreateRole(Role{Name: "a"})
	wantCode(t, err, "42710", `role "a" already exists`)
	_, err = d.CreateRole(Role{Name: "pg_x"})
	wantCode(t, err, "42939", `role name "pg_x" is reserved`)
	_, err = d.CreateRole(Role{Name: "public"})
	wantCode(t, err, "42939", `role name "public" is reserved`)
	_, err = d.CreateRole(Role{Name: "pg_monitor"})
	wantCode(t, err, "42939", `role name "pg_monitor" is reserved`)
	for name, oid := range map[string]uint32{"pg_read_all_data": 6181, "pg_write_all_data": 6182, "pg_monitor": 3373,
		"pg_read_all_settings": 3374, "pg_read_all_stats": 3375, "pg_stat_scan_tables": 3377, "pg_signal_backend": 4200, "pg_database_owner": 6171} {
		if r, ok := d.Role(name); !ok || r.OID != oid {
			t.Errorf("predefined %s: %v %v", name, r, ok)
		}
	}
	wantCode(t, d.DropRole("nobody"), "42704", `role "nobody" does not exist`)
	wantCode(t, d.DropRole("pg_monitor"), "2BP01", "cannot drop role pg_monitor because it is required by the database system")
	wantCode(t, d.DropRole("postgres"), "2BP01", "cannot drop role postgres because it is required by the database system")
	if err := d.DropRole("a"); err != nil {
		t.Fatal(err)
	}
	if r, _ := d.CreateRole(Role{Name: "b"}); r.OID != FirstNormalObjectID+1 {
		t.Errorf("OIDs are not reused: %d", r.OID)
	}
}

func TestMembershipLoops(t *testing.T) {
	d := newTestDoc(t, "a", "b", "c")
	wantCode(t, d.GrantRole("a", "a", "postgres", false, true, true), "0LP01", `role "a" is a member of role "a"`)
	must(t, d.GrantRole("a", "b", "postgres", false, true, true)) // b in a
	must(t, d.GrantRole("b", "c", "postgres", false, true, true)) // c in b
	wantCode(t, d.GrantRole("c", "a", "postgres", false, true, true), "0LP01", `role "c" is a member of role "a"`)
	wantCode(t, d.GrantRole("b", "a", "postgres", false, true, true), "0LP01", `role "b" is a member of role "a"`)
	wantCode(t, d.GrantRole("pg_database_owner", "a", "postgres", false, true, true), "0A000", `role "pg_database_owner" cannot have explicit members`)
	wantCode(t, d.GrantRole("a", "pg_database_owner", "postgres", false, true, true), "0A000", `role "pg_database_owner" cannot be a member of any role`)
	wantCode(t, d.GrantRole("a", "zz", "postgres", false, true, true), "42704", `role "zz" does not exist`)
	// A grant by another grantor of the same membership is its own row.
	changed, err := d.GrantRoleWith("a", "b", "postgres", GrantRoleOptions{})
	if err != nil || changed {
		t.Errorf("same grant again: changed %v, %v", changed, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestInheritAndSetChains(t *testing.T) {
	d := newTestDoc(t, "top", "mid", "low", "noinh", "noset")
	must(t, d.GrantRole("top", "mid", "postgres", false, true, true))
	must(t, d.GrantRole("mid", "low", "postgres", false, true, true))
	must(t, d.GrantRole("top", "noinh", "postgres", false, false, true))
	must(t, d.GrantRole("top", "noset", "postgres", false, true, false))
	for _, c := range []struct {
		role, of               string
		privs, member, setRole bool
	}{
		{"low", "top", true, true, true},
		{"low", "mid", true, true, true},
		{"top", "low", false, false, false},
		{"noinh", "top", false, true, true},
		{"noset", "top", true, true, false},
		{"low", "low", true, true, true},
		{"postgres", "low", true, true, true},
		{"pg_monitor", "pg_read_all_stats", true, true, true},
		{"postgres", "pg_database_owner", true, true, true},
	} {
		if got := d.HasPrivsOf(c.role, c.of); got != c.privs {
			t.Errorf("HasPrivsOf(%s, %s) = %v", c.role, c.of, got)
		}
		if got := d.IsMemberOf(c.role, c.of); got != c.member {
			t.Errorf("IsMemberOf(%s, %s) = %v", c.role, c.of, got)
		}
		if got := d.CanSetRole(c.role, c.of); got != c.setRole {
			t.Errorf("CanSetRole(%s, %s) = %v", c.role, c.of, got)
		}
	}
	// A new grant's INHERIT defaults to the member's INHERIT attribute.
	d.Roles = append(d.Roles, Role{Name: "plain", OID: 99999})
	if _, err := d.GrantRoleWith("top", "plain", "postgres", GrantRoleOptions{}); err != nil {
		t.Fatal(err)
	}
	if d.HasPrivsOf("plain", "top") || !d.CanSetRole("plain", "top") {
		t.Error("NOINHERIT member: default grant must not inherit, and SET defaults to true")
	}
}

// PostgreSQL 16: ADMIN OPTION comes from a grant, directly or through a
// role whose privileges one inherits; CREATEROLE alone gives none.
func TestAdminRules(t *testing.T) {
	d := newTestDoc(t, "target", "admin", "via", "viani", "cr")
	d.mustRole(t, "cr").CreateRole = true
	must(t, d.GrantRole("target", "admin", "postgres", true, true, true))
	must(t, d.GrantRole("admin", "via", "postgres", false, true, true))
	must(t, d.GrantRole("admin", "viani", "postgres", false, false, true))
	for _, c := range []struct {
		role string
		want bool
	}{{"admin", true}, {"via", true}, {"viani", false}, {"cr", false}, {"postgres", true}, {"target", false}} {
		if got := d.HasAdmin(c.role, "target"); got != c.want {
			t.Errorf("HasAdmin(%s, target) = %v", c.role, got)
		}
	}
	err := d.CheckGrantRole("cr", "target")
	wantDetail(t, err, `permission denied to grant role "target"`, `Only roles with the ADMIN option on role "target" may grant this role.`)
	must(t, d.CheckGrantRole("via", "target"))
	err = d.CheckRevokeRole("viani", "target")
	wantDetail(t, err, `permission denied to revoke role "target"`, `Only roles with the ADMIN option on role "target" may revoke this role.`)
	wantDetail(t, d.CheckGrantRole("admin", "postgres"), `permission denied to grant role "postgres"`, "Only roles with the SUPERUSER attribute may grant roles with the SUPERUSER attribute.")
	// The recorded grantor: the nearest role holding ADMIN OPTION.
	if g, err := d.RoleGrantor("via", "target", "", true); err != nil || g != "admin" {
		t.Errorf("RoleGrantor(via) = %s, %v", g, err)
	}
	if g, _ := d.RoleGrantor("postgres", "target", "", true); g != "postgres" {
		t.Errorf("RoleGrantor(superuser) = %s", g)
	}
	_, err = d.RoleGrantor("via", "target", "postgres", true)
	wantDetail(t, err, `permission denied to grant privileges as role "postgres"`, `Only roles with privileges of role "postgres" may grant privileges as this role.`)
	_, err = d.RoleGrantor("postgres", "target", "via", true)
	wantDetail(t, err, `permission denied to grant privileges as role "via"`, `The grantor must have the ADMIN option on role "target".`)
}

func (d *Doc) mustRole(t *testing.T, name string) *Role {
	t.Helper()
	r, ok := d.Role(name)
	if !ok {
		t.Fatalf("no role %s", name)
	}
	return r
}

func wantDetail(t *testing.T, err error, msg, detail string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != "42501" || e.Message != msg || e.Detail != detail {
		t.Fatalf("err = %#v, want 42501 %s / %s", err, msg, detail)
	}
}

func TestCreatedBy(t *testing.T) {
	d := newTestDoc(t, "cr", "new")
	d.mustRole(t, "cr").CreateRole = true
	d.CreatedBy("cr", "new")
	if !d.HasAdmin("cr", "new") || d.HasPrivsOf("cr", "new") || d.CanSetRole("cr", "new") {
		t.Error("creator: ADMIN without INHERIT or SET")
	}
	if len(d.Members) != 1 || d.Members[0].Grantor != "postgres" {
		t.Errorf("members %+v", d.Members)
	}
	// The creator cannot revoke the grant the bootstrap superuser made.
	if ok, _ := d.RevokeRole("new", "cr", "cr", false); ok {
		t.Error("revoked a grant by another grantor")
	}
	d.CreatedBy("postgres", "cr")
	if len(d.Members) != 1 {
		t.Error("CreatedBy by a superuser granted")
	}
}

func TestRevokeRoleCascade(t *testing.T) {
	d := newTestDoc(t, "r", "a", "b", "c")
	must(t, d.GrantRole("r", "a", "postgres", true, true, true))
	must(t, d.GrantRole("r", "b", "a", true, true, true))
	must(t, d.GrantRole("r", "c", "b", false, true, true))
	// ADMIN OPTION back to one's own grantor.
	wantCode(t, d.GrantRole("r", "a", "b", true, true, true), "0LP01", "ADMIN option cannot be granted back to your own grantor")
	_, err := d.RevokeRole("r", "a", "postgres", true)
	if !errors.Is(err, ErrDependentPrivileges) {
		t.Fatalf("restrict: %v", err)
	}
	if len(d.Members) != 3 {
		t.Fatal("a refused revoke changed the Doc")
	}
	ok, err := d.RevokeRoleWith("r", "a", "postgres", RevokeAdminOption, true)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if len(d.Members) != 1 || d.Members[0].Member != "a" || d.Members[0].Admin {
		t.Errorf("after cascade: %+v", d.Members)
	}
	ok, _ = d.RevokeRoleWith("r", "a", "postgres", RevokeSetOption, false)
	if !ok || d.Members[0].Set || d.CanSetRole("a", "r") {
		t.Error("SET OPTION not revoked")
	}
	if ok, _ := d.RevokeRole("r", "b", "a", false); ok {
		t.Error("revoked a grant that is gone")
	}
}
