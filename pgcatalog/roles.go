package pgcatalog

import (
	"topicgate/acl"
	"topicgate/topicstore"
)

// The role catalog as pg_roles, pg_authid and pg_auth_members show it,
// and the owners and access lists of pg_class and pg_namespace: what
// psql's \du, \dg, \drg, \dp and \dn+ read.

// roleRows adds the rows of pg_roles or pg_authid (table): every role of
// the catalog and the predefined ones; while no role exists, the session's
// user alone, as the bootstrap superuser (OID 10), as before roles. Only
// pg_authid shows the stored verifier; pg_roles masks it as PostgreSQL.
func roleRows(table string, src Source, add func(map[string]any)) {
	d := src.roles()
	if d.Bootstrap() == "" {
		add(map[string]any{"oid": int64(oidBootstrap), "rolname": src.User, "rolsuper": true, "rolinherit": true,
			"rolcreaterole": true, "rolcreatedb": true, "rolcanlogin": true, "rolreplication": true,
			"rolconnlimit": int64(-1), "rolbypassrls": true})
	}
	for _, r := range append(acl.Predefined(), d.Roles...) {
		row := map[string]any{"oid": int64(r.OID), "rolname": r.Name, "rolsuper": r.Superuser, "rolinherit": r.Inherit,
			"rolcreaterole": r.CreateRole, "rolcreatedb": r.CreateDB, "rolcanlogin": r.Login,
			"rolreplication": r.Replication, "rolconnlimit": int64(r.ConnLimit), "rolbypassrls": r.BypassRLS}
		if !r.ValidUntil.IsZero() {
			row["rolvaliduntil"] = r.ValidUntil
		}
		switch {
		case table == "pg_authid" && r.Password != "":
			row["rolpassword"] = r.Password
		case table == "pg_roles":
			row["rolpassword"] = "********"
		}
		add(row)
	}
}

// memberRows adds pg_auth_members' rows.
func memberRows(src Source, add func(map[string]any)) {
	d := src.roles()
	for _, m := range append(acl.PredefinedMembers(), d.Members...) {
		add(map[string]any{"roleid": roleOID(d, m.Role), "member": roleOID(d, m.Member),
			"grantor": roleOID(d, m.Grantor), "admin_option": m.Admin})
	}
}

// roleOID is the OID of the role named name; the bootstrap superuser's
// for "" (an object created before roles) or a name that is no role.
func roleOID(d *acl.Doc, name string) int64 {
	if r, ok := d.Role(name); ok {
		return int64(r.OID)
	}
	return oidBootstrap
}

// aclText is an access list as relacl and nspacl show it; NULL for nil
// (the default: only the owner).
func aclText(list []topicstore.ACLItem) any {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, it := range list {
		out[i] = acl.FormatItem(it)
	}
	return out
}

// roles is src's role catalog, or an empty one.
func (src Source) roles() *acl.Doc {
	if src.Roles != nil {
		if d := src.Roles(); d != nil {
			return d
		}
	}
	return acl.NewDoc()
}
