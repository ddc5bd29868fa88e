package pgcatalog

import (
	"cmp"
	"slices"

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

// oidFirstDefaultACL numbers pg_default_acl's rows (+ the entry's rank
// in the role document): PostgreSQL gives each an OID of its own, which
// nothing topicgate emulates joins on.
const oidFirstDefaultACL = 16200

// defaultACLRows adds pg_default_acl's rows: the role document's
// default privileges (ALTER DEFAULT PRIVILEGES), for every schema
// (defaclnamespace 0: topicgate keeps no per-schema ones). A topic's are
// a table's (defaclobjtype 'r'); a consumer's are a sequence's ('S'), as
// its USAGE is modelled on a sequence's and ON SEQUENCES is ON CONSUMERS.
func defaultACLRows(src Source, add func(map[string]any)) {
	d := src.roles()
	for i, def := range d.Defaults {
		kind := "r"
		if def.Kind == acl.KindConsumer {
			kind = "S"
		}
		add(map[string]any{"oid": int64(oidFirstDefaultACL + i), "defaclrole": roleOID(d, def.Role),
			"defaclnamespace": int64(0), "defaclobjtype": kind, "defaclacl": aclText(sortedACL(d, def.ACL))})
	}
}

// sortedACL is list in the order PostgreSQL stores a default ACL
// (aclitemsort): by grantee OID (PUBLIC, 0, first), grantor OID, then
// privileges.
func sortedACL(d *acl.Doc, list []topicstore.ACLItem) []topicstore.ACLItem {
	oid := func(name string) int64 {
		if name == "" {
			return 0
		}
		return roleOID(d, name)
	}
	out := slices.Clone(list)
	slices.SortStableFunc(out, func(a, b topicstore.ACLItem) int {
		return cmp.Or(cmp.Compare(oid(a.Grantee), oid(b.Grantee)), cmp.Compare(oid(a.Grantor), oid(b.Grantor)),
			cmp.Compare(a.Privs, b.Privs), cmp.Compare(a.GrantOptions, b.GrantOptions))
	})
	return out
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
