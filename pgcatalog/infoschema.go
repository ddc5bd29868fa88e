package pgcatalog

import (
	"topicgate/acl"
	"topicgate/topicstore"
)

// InfoSchemaRows returns the rows of information_schema.view
// (catalog.InfoSchemaViews) as src shows them: one row per privilege of
// each grant on a topic the session sees, the owner's own included, as
// PostgreSQL lists a table's. table_privileges keeps the grants to or by
// a role whose privileges src.Role has, and those to PUBLIC;
// role_table_grants the same without PUBLIC's.
func InfoSchemaRows(view string, src Source) [][]any {
	d := src.roles()
	enabled := func(role string) bool { return role != "" && (role == src.Role || d.HasPrivsOf(src.Role, role)) }
	var rows [][]any
	for _, ti := range src.Topics() {
		owner := ti.Config.Owner
		if owner == "" {
			owner = d.Bootstrap()
		}
		if owner == "" {
			owner = src.User
		}
		for _, it := range acl.Effective(ti.Config.ACL, owner, acl.TopicPrivs) {
			public := it.Grantee == ""
			if !enabled(it.Grantor) && !enabled(it.Grantee) && !(public && view == "table_privileges") {
				continue
			}
			grantee := it.Grantee
			if public {
				grantee = "PUBLIC"
			}
			rows = append(rows, privilegeRows(it, grantee, owner, src.Database, &ti.Config, d)...)
		}
	}
	return rows
}

// privilegeRows are one grant's rows, a privilege each.
func privilegeRows(it acl.Item, grantee, owner, database string, cfg *topicstore.TopicConfig, d *acl.Doc) [][]any {
	var rows [][]any
	privs := acl.Priv(it.Privs)
	for _, name := range privs.Names() {
		p, _ := acl.ParsePriv(name)
		grantable := "NO"
		if acl.Priv(it.GrantOptions)&p != 0 || (it.Grantee != "" && d.HasPrivsOf(it.Grantee, owner)) {
			grantable = "YES"
		}
		hierarchy := "NO"
		if p == acl.Select {
			hierarchy = "YES"
		}
		rows = append(rows, []any{it.Grantor, grantee, database, "public", cfg.Name, name, grantable, hierarchy})
	}
	return rows
}
