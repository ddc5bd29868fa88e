package pgcatalog

import (
	"time"

	"topicgate/acl"
	"topicgate/eval"
	"topicgate/planner/catalog"
	"topicgate/sql/values"
	"topicgate/topicstore"
)

// The pg_catalog tables psql's describe commands read (planner's
// PgCatalogViews): topics are tables (relkind 'r') of the public schema,
// the sys views are views of a sys schema, which is not on the search path
// (pg_table_is_visible is false for them, as for any schema not on it).
// Every column is a topic's message column (pg_attribute), with the types
// of pg_type; the tables topicgate has nothing for have no rows.
const (
	oidPgCatalogNS = catalog.OIDPgCatalogNS
	oidPublicNS    = catalog.OIDPublicNS
	oidSysNS       = catalog.OIDSysNS
	oidSysViews    = catalog.OIDSysViews   // + the view's rank by name
	oidFirstTopic  = catalog.OIDFirstTopic // + the topic's store ID
	oidBootstrap   = 10                    // the owner of everything
	oidHeapAM      = 2
	oidDatabase    = 5
	oidPgDefaultTS = 1663
	oidPgGlobalTS  = 1664
	oidDefaultColl = 100
	oidCColl       = 950
	oidPosixColl   = 951
	oidPgClassRel  = eval.OIDPgClassRel
	encodingUTF8   = eval.EncodingUTF8
)

// Source is what the tables show besides the built-in objects: the
// store's topics and the session that reads them. The functions are
// called only by the tables that show what they return.
type Source struct {
	Database, User string
	// Topics lists the store's topics (pg_class, pg_attribute).
	Topics func() []topicstore.TopicInfo
	// Settings are pg_settings' rows, by column name.
	Settings func() []map[string]any
	// Cursors are the session's open cursors (pg_cursors).
	Cursors func() []Cursor
	// Roles is the role catalog (pg_roles, pg_auth_members, owners);
	// nil: no role exists.
	Roles func() *acl.Doc
	// Role is the current user (information_schema's enabled roles).
	Role string
}

// Cursor is one open cursor as pg_cursors shows it.
type Cursor struct {
	Name, Statement string
	Holdable        bool
	Created         time.Time
}

// Rows returns the rows of pg_catalog.table (a table of
// catalog.PgCatalogViews) as src shows it, every column in the table's
// order (catalogRow).
func Rows(table string, src Source) [][]any {
	var rows [][]any
	add := func(vals map[string]any) { rows = append(rows, catalogRow(table, vals)) }
	switch table {
	case "pg_namespace":
		for _, ns := range []struct {
			oid  int64
			name string
		}{{oidPgCatalogNS, "pg_catalog"}, {oidPublicNS, "public"}, {oidSysNS, "sys"}} {
			row := map[string]any{"oid": ns.oid, "nspname": ns.name, "nspowner": int64(oidBootstrap)}
			if ns.oid == oidPublicNS {
				d := src.roles()
				row["nspowner"] = roleOID(d, d.SchemaOwnerName())
				row["nspacl"] = aclText(d.SchemaACL)
			}
			add(row)
		}
	case "pg_am":
		add(map[string]any{"oid": int64(oidHeapAM), "amname": "heap", "amtype": "t"})
	case "pg_database":
		add(map[string]any{"oid": int64(oidDatabase), "datname": src.Database, "datdba": int64(oidBootstrap),
			"encoding": int64(encodingUTF8), "datcollate": "C", "datctype": "C", "datlocprovider": "c",
			"dattablespace": int64(oidPgDefaultTS), "datallowconn": true, "datconnlimit": int64(-1)})
	case "pg_tablespace":
		add(map[string]any{"oid": int64(oidPgDefaultTS), "spcname": "pg_default", "spcowner": int64(oidBootstrap)})
		add(map[string]any{"oid": int64(oidPgGlobalTS), "spcname": "pg_global", "spcowner": int64(oidBootstrap)})
	case "pg_roles", "pg_authid":
		roleRows(table, src, add)
	case "pg_auth_members":
		memberRows(src, add)
	case "pg_default_acl":
		defaultACLRows(src, add)
	case "pg_collation":
		for _, c := range []struct {
			oid      int64
			name     string
			provider string
			enc      int64
			coll     any
		}{{oidDefaultColl, "default", "d", -1, nil}, {oidCColl, "C", "c", -1, "C"}, {oidPosixColl, "POSIX", "c", -1, "POSIX"}} {
			add(map[string]any{"oid": c.oid, "collname": c.name, "collnamespace": int64(oidPgCatalogNS),
				"collowner": int64(oidBootstrap), "collprovider": c.provider, "collisdeterministic": true,
				"collencoding": c.enc, "collcollate": c.coll, "collctype": c.coll})
		}
	case "pg_type":
		for _, t := range pgTypes {
			typtype := "b"
			add(map[string]any{"oid": t.oid, "typname": t.name, "typnamespace": int64(oidPgCatalogNS),
				"typowner": int64(oidBootstrap), "typlen": t.len, "typbyval": t.len > 0 && t.len <= 8,
				"typtype": typtype, "typcategory": t.cat, "typisdefined": true, "typdelim": ",",
				"typelem": t.elem, "typarray": t.array, "typtypmod": int64(-1),
				"typcollation": typeCollation(t.oid), "typinput": func() int64 { o, _ := typeInput(t.oid, t.elem); return o }()})
		}
	case "pg_proc":
		// The types' input functions and the few other built-ins
		// catalog.PgProcs lists; no user functions (\df shows none).
		procRows(add)
	case "pg_language":
		// The language of every function in pg_proc; no procedural
		// language (lanplcallfoid 0), so \dL lists none.
		add(map[string]any{"oid": int64(eval.OIDInternalLang), "lanname": "internal", "lanowner": int64(oidBootstrap)})
	case "pg_settings":
		for _, r := range src.Settings() {
			add(r)
		}
	case "pg_cursors":
		for _, c := range src.Cursors() {
			add(map[string]any{"name": c.Name, "statement": c.Statement, "is_holdable": c.Holdable,
				"is_binary": false, "is_scrollable": false, "creation_time": c.Created})
		}
	case "pg_class":
		d := src.roles()
		for _, r := range catalogRels(src.Topics()) {
			row := map[string]any{"oid": r.oid, "relname": r.name, "relnamespace": r.ns, "relkind": r.kind,
				"relowner": roleOID(d, r.owner), "relacl": aclText(r.acl), "relam": map[bool]int64{true: oidHeapAM}[r.kind == "r"],
				"reltuples": r.tuples, "relpersistence": "p", "relreplident": replIdent(r),
				"relnatts": int64(len(r.names))}
			if r.options != nil {
				row["reloptions"] = r.options
			}
			add(row)
		}
	case "pg_attribute":
		for _, r := range catalogRels(src.Topics()) {
			for i, t := range r.types {
				oid := int64(t.OID())
				add(map[string]any{"attrelid": r.oid, "attname": r.names[i], "atttypid": oid, "atttypmod": int64(-1),
					"attnum": int64(i + 1), "attcollation": typeCollation(oid), "attstorage": attStorage(oid),
					"attstattarget": int64(-1), "attlen": pgTypeLen(oid), "attislocal": true})
			}
		}
	}
	return rows
}

// catalogRow lays out vals (by column name) in the table's column order;
// a column not given is its type's zero (false, 0, ”), or NULL for text,
// arrays and timestamps, as PostgreSQL's NOT NULL catalog columns and its
// nullable ones (pg_node_tree, aclitem[], ...) read.
func catalogRow(table string, vals map[string]any) []any {
	v := catalog.PgCatalogViews[table]
	row := make([]any, len(v.Names))
	for i, n := range v.Names {
		if x, ok := vals[n]; ok {
			row[i] = x
			continue
		}
		if i >= v.Star() { // tableoid
			row[i] = catalog.PgCatalogOIDs[table]
			continue
		}
		switch t := v.Types[i]; {
		case t == values.TBool:
			row[i] = false
		case t == values.TFloat8:
			row[i] = float64(0)
		case t.IsInt():
			row[i] = int64(0)
		case t == values.TName || t == values.TChar:
			row[i] = ""
		}
	}
	return row
}

// procRows are pg_proc's rows.
func procRows(add func(map[string]any)) {
	for _, p := range catalog.PgProcs {
		// proargtypes is an oidvector in PostgreSQL; here an oid[] with
		// the same elements (pgcli casts it to regtype[]).
		args := append([]int64{}, p.Args...)
		add(map[string]any{"oid": p.OID, "proname": p.Name, "pronamespace": int64(oidPgCatalogNS),
			"proowner": int64(oidBootstrap), "prolang": int64(eval.OIDInternalLang), "prokind": "f",
			"provolatile": p.Volatile, "proparallel": p.Parallel, "proisstrict": true,
			"pronargs": int64(len(p.Args)), "prorettype": p.Result, "proargtypes": args,
			"prosrc": p.Src})
	}
}
