package acl

import "testing"

// The messages are PostgreSQL 16's (src/backend/commands/user.c).
func TestCheckCreateRole(t *testing.T) {
	d := newTestDoc(t, "plain", "cr", "crdb")
	d.mustRole(t, "cr").CreateRole = true
	d.mustRole(t, "crdb").CreateRole = true
	d.mustRole(t, "crdb").CreateDB = true
	const msg = "permission denied to create role"
	wantDetail(t, d.CheckCreateRole("plain", Role{Name: "x"}), msg, "Only roles with the CREATEROLE attribute may create roles.")
	wantDetail(t, d.CheckCreateRole("cr", Role{Name: "x", Superuser: true}), msg, "Only roles with the SUPERUSER attribute may create roles with the SUPERUSER attribute.")
	wantDetail(t, d.CheckCreateRole("cr", Role{Name: "x", CreateDB: true}), msg, "Only roles with the CREATEDB attribute may create roles with the CREATEDB attribute.")
	wantDetail(t, d.CheckCreateRole("cr", Role{Name: "x", Replication: true}), msg, "Only roles with the REPLICATION attribute may create roles with the REPLICATION attribute.")
	wantDetail(t, d.CheckCreateRole("cr", Role{Name: "x", BypassRLS: true}), msg, "Only roles with the BYPASSRLS attribute may create roles with the BYPASSRLS attribute.")
	must(t, d.CheckCreateRole("crdb", Role{Name: "x", CreateDB: true}))
	must(t, d.CheckCreateRole("postgres", Role{Name: "x", Superuser: true, Replication: true}))
	wantCode(t, d.CheckCreateRole("plain", Role{Name: "none"}), "42939", `role name "none" is reserved`)
	err := d.CheckCreateRole("cr", Role{Name: "pg_x"})
	wantCode(t, err, "42939", `role name "pg_x" is reserved`)
	if err.(*Error).Detail != `Role names starting with "pg_" are reserved.` {
		t.Errorf("detail %q", err.(*Error).Detail)
	}
	wantCode(t, d.CheckCreateRole("cr", Role{Name: "plain"}), "42710", `role "plain" already exists`)
}

func TestCheckAlterRole(t *testing.T) {
	d := newTestDoc(t, "plain", "cr", "managed", "su")
	d.mustRole(t, "cr").CreateRole = true
	d.mustRole(t, "su").Superuser = true
	d.CreatedBy("cr", "managed")
	yes, no := true, false
	const msg = "permission denied to alter role"
	must(t, d.CheckAlterRole("plain", "plain", RoleChanges{Password: true}))
	wantDetail(t, d.CheckAlterRole("plain", "managed", RoleChanges{Password: true}), msg,
		"To change another role's password, the current user must have the CREATEROLE attribute and the ADMIN option on the role.")
	wantDetail(t, d.CheckAlterRole("plain", "plain", RoleChanges{Login: &yes}), msg,
		`Only roles with the CREATEROLE attribute and the ADMIN option on role "plain" may alter this role.`)
	wantDetail(t, d.CheckAlterRole("cr", "plain", RoleChanges{ConnLimit: true}), msg,
		`Only roles with the CREATEROLE attribute and the ADMIN option on role "plain" may alter this role.`)
	must(t, d.CheckAlterRole("cr", "managed", RoleChanges{Login: &yes, Password: true, ValidUntil: true}))
	wantDetail(t, d.CheckAlterRole("cr", "managed", RoleChanges{CreateDB: &yes}), msg,
		"Only roles with the CREATEDB attribute may change the CREATEDB attribute.")
	wantDetail(t, d.CheckAlterRole("cr", "su", RoleChanges{Password: true}), msg,
		"Only roles with the SUPERUSER attribute may alter roles with the SUPERUSER attribute.")
	wantDetail(t, d.CheckAlterRole("cr", "managed", RoleChanges{Superuser: &yes}), msg,
		"Only roles with the SUPERUSER attribute may change the SUPERUSER attribute.")
	wantDetail(t, d.CheckAlterRole("plain", "cr", RoleChanges{Members: true}), msg,
		`Only roles with the ADMIN option on role "cr" may add or drop members.`)
	err := d.CheckAlterRole("postgres", "postgres", RoleChanges{Superuser: &no})
	wantCode(t, err, "0A000", msg)
	wantCode(t, d.CheckAlterRole("postgres", "pg_monitor", RoleChanges{}), "42939", `role name "pg_monitor" is reserved`)
	wantCode(t, d.CheckAlterRole("postgres", "ghost", RoleChanges{}), "42704", `role "ghost" does not exist`)
	r := Role{}
	RoleChanges{Login: &yes, Inherit: &no}.Apply(&r)
	if !r.Login || r.Inherit {
		t.Error("Apply")
	}
}

func TestCheckDropAndRenameRole(t *testing.T) {
	d := newTestDoc(t, "plain", "cr", "managed", "su")
	d.mustRole(t, "cr").CreateRole = true
	d.mustRole(t, "su").Superuser = true
	d.CreatedBy("cr", "managed")
	wantDetail(t, d.CheckDropRole("plain", "managed"), "permission denied to drop role",
		"Only roles with the CREATEROLE attribute and the ADMIN option on the target roles may drop roles.")
	wantDetail(t, d.CheckDropRole("cr", "plain"), "permission denied to drop role",
		`Only roles with the CREATEROLE attribute and the ADMIN option on role "plain" may drop this role.`)
	wantDetail(t, d.CheckDropRole("cr", "su"), "permission denied to drop role",
		"Only roles with the SUPERUSER attribute may drop roles with the SUPERUSER attribute.")
	wantCode(t, d.CheckDropRole("cr", "cr"), "55006", "current user cannot be dropped")
	must(t, d.CheckDropRole("cr", "managed"))
	must(t, d.CheckDropRole("postgres", "plain"))
	wantCode(t, d.CheckDropRole("cr", "ghost"), "42704", `role "ghost" does not exist`)

	must(t, d.CheckRenameRole("cr", "managed", "renamed"))
	wantDetail(t, d.CheckRenameRole("cr", "plain", "x"), "permission denied to rename role",
		`Only roles with the CREATEROLE attribute and the ADMIN option on role "plain" may rename this role.`)
	wantDetail(t, d.CheckRenameRole("cr", "su", "x"), "permission denied to rename role",
		"Only roles with the SUPERUSER attribute may rename roles with the SUPERUSER attribute.")
	wantCode(t, d.CheckRenameRole("postgres", "plain", "pg_x"), "42939", `role name "pg_x" is reserved`)
	wantCode(t, d.CheckRenameRole("postgres", "plain", "cr"), "42710", `role "cr" already exists`)
}
