package executor

import (
	"sort"

	"topicgate/eval"
	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/planner/topicopts"
	"topicgate/sql/values"
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

// pgTypes are the rows of pg_type: the types topic and system view columns
// have, and the ones psql's queries cast to.
var pgTypes = []struct {
	oid      int64
	name     string
	len      int64
	cat      string
	elem     int64
	array    int64
	collates bool
}{
	{16, "bool", 1, "B", 0, 1000, false},
	{17, "bytea", -1, "U", 0, 1001, false},
	{18, "char", 1, "Z", 0, 1002, false},
	{19, "name", 64, "S", 0, 1003, true},
	{20, "int8", 8, "N", 0, 1016, false},
	{21, "int2", 2, "N", 0, 1005, false},
	{23, "int4", 4, "N", 0, 1007, false},
	{25, "text", -1, "S", 0, 1009, true},
	{26, "oid", 4, "N", 0, 1028, false},
	{114, "json", -1, "U", 0, 199, false},
	{700, "float4", 4, "N", 0, 1021, false},
	{701, "float8", 8, "N", 0, 1022, false},
	{1000, "_bool", -1, "A", 16, 0, false},
	{1007, "_int4", -1, "A", 23, 0, false},
	{1009, "_text", -1, "A", 25, 0, true},
	{1016, "_int8", -1, "A", 20, 0, false},
	{1043, "varchar", -1, "S", 0, 1015, true},
	{1082, "date", 4, "D", 0, 1182, false},
	{1114, "timestamp", 8, "D", 0, 1115, false},
	{1184, "timestamptz", 8, "D", 0, 1185, false},
	{1186, "interval", 16, "T", 0, 1187, false},
	{1700, "numeric", -1, "N", 0, 1231, false},
	{3802, "jsonb", -1, "U", 0, 3807, false},
}

// typeInputs are PostgreSQL's input functions of those types (pg_type.
// typinput, with their pg_proc OIDs): ruby-pg's typed results map types by
// them. Every array type's is array_in.
var typeInputs = map[int64]struct {
	oid  int64
	name string
}{
	16: {1242, "boolin"}, 17: {1244, "byteain"}, 18: {1245, "charin"}, 19: {34, "namein"}, 20: {460, "int8in"},
	21: {38, "int2in"}, 23: {42, "int4in"}, 25: {46, "textin"}, 26: {1798, "oidin"}, 114: {321, "json_in"},
	700: {200, "float4in"}, 701: {214, "float8in"}, 1043: {1046, "varcharin"}, 1082: {1084, "date_in"},
	1114: {1312, "timestamp_in"}, 1184: {1150, "timestamptz_in"}, 1186: {1160, "interval_in"},
	1700: {1701, "numeric_in"}, 3802: {3806, "jsonb_in"},
}

const oidArrayIn = 750

func typeInput(t int64, elem int64) (int64, string) {
	if elem != 0 {
		return oidArrayIn, "array_in"
	}
	in := typeInputs[t]
	return in.oid, in.name
}

// typeCollation is pg_type.typcollation of a type OID.
func typeCollation(oid int64) int64 {
	for _, t := range pgTypes {
		if t.oid == oid && t.collates {
			return oidDefaultColl
		}
	}
	return 0
}

// attStorage is pg_attribute.attstorage as PostgreSQL sets it for a type:
// varlena types are 'x' (extended), fixed-size ones 'p' (plain).
func attStorage(oid int64) string {
	for _, t := range pgTypes {
		if t.oid == oid {
			if t.len < 0 {
				return "x"
			}
			return "p"
		}
	}
	return "p"
}

// catalogRel is one relation of pg_class: a topic or a sys view.
type catalogRel struct {
	oid    int64
	name   string
	ns     int64
	kind   string
	tuples float64
	bytes  int64
	names  []string
	types  []values.Type
	// options are a topic's pg_class.reloptions, which psql's \d+ shows
	// as its Options footer (topicopts.TopicReloptions); nil for a view.
	options []string
}

// catalogRels lists the topics and the sys views, topics first.
func (s *Session) catalogRels() []catalogRel {
	var rels []catalogRel
	if s.eng == nil {
		return nil
	}
	var names []string
	var types []values.Type
	for c := plantree.ColPartition; c <= plantree.ColDelay; c++ {
		names = append(names, plantree.MsgColumns[c].Name)
		types = append(types, plantree.MsgColumns[c].Type)
	}
	topics := s.eng.store.Topics()
	sort.Slice(topics, func(i, j int) bool { return topics[i].Config.Name < topics[j].Config.Name })
	for _, t := range topics {
		var msgs, bytes int64
		for _, p := range t.Partitions {
			msgs += p.Messages
			bytes += p.Bytes
		}
		rels = append(rels, catalogRel{oid: int64(oidFirstTopic) + int64(t.ID), name: t.Config.Name, ns: oidPublicNS,
			kind: "r", tuples: float64(msgs), bytes: bytes, names: names, types: types, options: topicopts.TopicReloptions(t)})
	}
	for i, name := range catalog.SysViewNames() {
		v := catalog.SysViews[name]
		rels = append(rels, catalogRel{oid: int64(oidSysViews + i), name: name, ns: oidSysNS, kind: "v", tuples: -1,
			names: v.Names, types: v.Types})
	}
	for name, oid := range catalog.PgCatalogOIDs {
		v, ok := catalog.PgCatalogViews[name]
		if !ok {
			continue
		}
		kind := "r"
		if catalog.PgCatalogIsView[name] {
			kind = "v"
		}
		rels = append(rels, catalogRel{oid: oid, name: name, ns: oidPgCatalogNS, kind: kind, tuples: -1,
			names: v.Names[:v.Star()], types: v.Types[:v.Star()]})
	}
	sort.SliceStable(rels[len(topics):], func(i, j int) bool { return rels[len(topics)+i].oid < rels[len(topics)+j].oid })
	return rels
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

func (s *Session) pgCatalogRows(table string) [][]any {
	var rows [][]any
	add := func(vals map[string]any) { rows = append(rows, catalogRow(table, vals)) }
	switch table {
	case "pg_namespace":
		for _, ns := range []struct {
			oid  int64
			name string
		}{{oidPgCatalogNS, "pg_catalog"}, {oidPublicNS, "public"}, {oidSysNS, "sys"}} {
			add(map[string]any{"oid": ns.oid, "nspname": ns.name, "nspowner": int64(oidBootstrap)})
		}
	case "pg_am":
		add(map[string]any{"oid": int64(oidHeapAM), "amname": "heap", "amtype": "t"})
	case "pg_database":
		add(map[string]any{"oid": int64(oidDatabase), "datname": s.info.Database, "datdba": int64(oidBootstrap),
			"encoding": int64(encodingUTF8), "datcollate": "C", "datctype": "C", "datlocprovider": "c",
			"dattablespace": int64(oidPgDefaultTS), "datallowconn": true, "datconnlimit": int64(-1)})
	case "pg_tablespace":
		add(map[string]any{"oid": int64(oidPgDefaultTS), "spcname": "pg_default", "spcowner": int64(oidBootstrap)})
		add(map[string]any{"oid": int64(oidPgGlobalTS), "spcname": "pg_global", "spcowner": int64(oidBootstrap)})
	case "pg_roles", "pg_authid":
		// One role: the session's user owns everything (pg_get_userbyid).
		add(map[string]any{"oid": int64(oidBootstrap), "rolname": s.info.User, "rolsuper": true, "rolinherit": true,
			"rolcreaterole": true, "rolcreatedb": true, "rolcanlogin": true, "rolreplication": true,
			"rolconnlimit": int64(-1), "rolbypassrls": true})
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
		for _, r := range s.settings.catalogRows() {
			add(r)
		}
	case "pg_cursors":
		for _, c := range s.cursors {
			add(map[string]any{"name": c.name, "statement": c.statement, "is_holdable": c.hold,
				"is_binary": false, "is_scrollable": false, "creation_time": c.created})
		}
	case "pg_class":
		for _, r := range s.catalogRels() {
			row := map[string]any{"oid": r.oid, "relname": r.name, "relnamespace": r.ns, "relkind": r.kind,
				"relowner": int64(oidBootstrap), "relam": map[bool]int64{true: oidHeapAM}[r.kind == "r"],
				"reltuples": r.tuples, "relpersistence": "p", "relreplident": replIdent(r),
				"relnatts": int64(len(r.names))}
			if r.options != nil {
				row["reloptions"] = r.options
			}
			add(row)
		}
	case "pg_attribute":
		for _, r := range s.catalogRels() {
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

// replIdent is pg_class.relreplident: 'd' (default) for a topic, 'n'
// (nothing) for a view and for the catalog's own tables, as PostgreSQL
// has them (psql's \d+ prints "Replica Identity: ???" otherwise).
func replIdent(r catalogRel) string {
	if r.kind == "r" && r.ns != oidPgCatalogNS {
		return "d"
	}
	return "n"
}

func pgTypeLen(oid int64) int64 {
	for _, t := range pgTypes {
		if t.oid == oid {
			return t.len
		}
	}
	return -1
}

// relOf finds the relation of an OID (ok false for none).
func (s *Session) relOf(oid int64) (catalogRel, bool) {
	for _, r := range s.catalogRels() {
		if r.oid == oid {
			return r, true
		}
	}
	return catalogRel{}, false
}
