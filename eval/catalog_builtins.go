package eval

import (
	"fmt"
	"strconv"
	"strings"
	"topicgate/planner/catalog"
)

// The catalog functions psql's describe commands (\d and its variants,
// \do, \dC, \dc, \dO, \dX, \dF*, \dd, \dx+, \sf, \sv) call: visibility,
// sizes, type names, encodings, pg_describe_object, and pg_proc's
// functions (pg_get_functiondef and friends).

// OIDs the catalog functions and the executor's pg_catalog tables share.
const (
	OIDPgClassRel   = 1259 // pg_class's own OID, as pg_type.typrelid and classoid
	OIDInternalLang = 12   // pg_language's "internal"
	EncodingUTF8    = 6    // pg_database.encoding of UTF8
	// sysViewDefSuffix ends pg_get_viewdef's text of a system view.
	sysViewDefSuffix = "a topicgate system view, computed from the store's state"
)

// FormatTypeNames are format_type's names for the types topicgate's
// catalog lists.
var FormatTypeNames = map[int64]string{
	16: "boolean", 17: "bytea", 18: `"char"`, 19: "name", 20: "bigint", 21: "smallint", 23: "integer",
	25: "text", 26: "oid", 114: "json", 700: "real", 701: "double precision", 1000: "boolean[]",
	1007: "integer[]", 1009: "text[]", 1016: "bigint[]", 1043: "character varying", 1082: "date",
	1114: "timestamp without time zone", 1184: "timestamp with time zone", 1186: "interval",
	1700: "numeric", 3802: "jsonb",
	// The pseudo-types pg_proc's rows return.
	2249: "record", 2275: "cstring", 2277: "anyarray", 2278: "void", 2279: "trigger", 2283: "anyelement",
}

var catalogBuiltins = map[string]Func{
	"pg_get_userbyid": func(ctx Context, a []any) (any, error) {
		oid, ok := a[0].(int64)
		if !ok {
			return nil, nil
		}
		if name, ok := ctx.Catalog().RoleName(oid); ok {
			return name, nil
		}
		return fmt.Sprintf("unknown (OID=%d)", oid), nil
	},
	"pg_table_is_visible": func(_ Context, a []any) (any, error) {
		// Topics and pg_catalog tables: public and pg_catalog are on the
		// search path, sys is not.
		oid, _ := a[0].(int64)
		return oid >= catalog.OIDFirstTopic || oid < catalog.OIDSysNS && oid > 0, nil
	},
	"pg_type_is_visible":     func(_ Context, a []any) (any, error) { return a[0] != nil, nil },
	"pg_tablespace_location": func(_ Context, a []any) (any, error) { return "", nil },
	"pg_encoding_to_char": func(_ Context, a []any) (any, error) {
		if n, _ := a[0].(int64); n == EncodingUTF8 {
			return "UTF8", nil
		}
		return "", nil
	},
	"format_type": func(_ Context, a []any) (any, error) {
		oid, ok := a[0].(int64)
		if !ok {
			return nil, nil
		}
		if oid == 0 {
			return "-", nil
		}
		if n, ok := FormatTypeNames[oid]; ok {
			return n, nil
		}
		return "???", nil
	},
	// regtypeout is a regtype's text: the type's name as format_type
	// gives it, "-" for 0, the number for an OID no type has.
	"regtypeout": func(_ Context, a []any) (any, error) {
		oid, ok := a[0].(int64)
		switch {
		case !ok:
			return nil, nil
		case oid == 0:
			return "-", nil
		}
		if n, ok := FormatTypeNames[oid]; ok {
			return n, nil
		}
		return strconv.FormatInt(oid, 10), nil
	},
	"pg_table_size":          relSize,
	"pg_total_relation_size": relSize,
	"pg_relation_size":       relSize,
	"pg_indexes_size": func(_ Context, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return int64(0), nil
	},
	"pg_database_size": func(ctx Context, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return ctx.Catalog().DatabaseSize(), nil
	},
	"has_database_privilege": func(_ Context, a []any) (any, error) { return true, nil },
	"pg_cancel_backend":      signalFn(false),
	"pg_terminate_backend":   signalFn(true),
	"has_table_privilege":    privilegeFn("table"),
	"has_schema_privilege":   privilegeFn("schema"),
	"has_consumer_privilege": privilegeFn("consumer"),
	"pg_has_role":            privilegeFn("role"),
	"pg_function_is_visible": func(_ Context, a []any) (any, error) { return a[0] != nil, nil },
	"pg_get_viewdef": func(ctx Context, a []any) (any, error) {
		oid, _ := a[0].(int64)
		r, ok := ctx.Catalog().Relation(oid)
		if !ok || r.Kind != "v" {
			return nil, nil
		}
		schema := "sys."
		if r.Namespace == catalog.OIDPgCatalogNS {
			schema = "pg_catalog."
		}
		return " SELECT " + strings.Join(r.Columns, ",\n    ") + "\n   FROM " + schema + r.Name + "; -- " + sysViewDefSuffix, nil
	},
	// Nothing has a default, a comment (but schema public's, which
	// initdb gives it), a rule, an extended statistic or an expression:
	// these answer NULL.
	"pg_get_expr":     nullFn,
	"col_description": nullFn,
	"obj_description": func(_ Context, a []any) (any, error) {
		if oid, _ := a[0].(int64); oid == catalog.OIDPublicNS && len(a) == 2 && a[1] == "pg_namespace" {
			return "standard public schema", nil
		}
		return nil, nil
	},
	"shobj_description":               nullFn,
	"pg_get_ruledef":                  nullFn,
	"pg_get_statisticsobjdef_columns": nullFn,
	"pg_get_indexdef":                 nullFn,
	"pg_get_constraintdef":            nullFn,
	"pg_get_triggerdef":               nullFn,
	"pg_relation_is_publishable": func(_ Context, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return false, nil
	},
	// Every object of these kinds would be in pg_catalog or public, both
	// on the search path; there are none (their tables have no rows).
	"pg_operator_is_visible":       visible,
	"pg_conversion_is_visible":     visible,
	"pg_collation_is_visible":      visible,
	"pg_statistics_obj_is_visible": visible,
	"pg_opclass_is_visible":        visible,
	"pg_opfamily_is_visible":       visible,
	"pg_ts_config_is_visible":      visible,
	"pg_ts_dict_is_visible":        visible,
	"pg_ts_parser_is_visible":      visible,
	"pg_ts_template_is_visible":    visible,
	"getdatabaseencoding":          func(Context, []any) (any, error) { return "UTF8", nil },
	"pg_char_to_encoding": func(_ Context, a []any) (any, error) {
		if s, _ := a[0].(string); strings.EqualFold(s, "UTF8") || strings.EqualFold(s, "UTF-8") {
			return int64(EncodingUTF8), nil
		}
		return int64(-1), nil
	},
	"pg_describe_object":        describeObject,
	"pg_get_functiondef":        functionDef,
	"pg_get_function_result":    functionResult,
	"pg_get_function_arguments": functionArgs,
	// No function has an SQL-standard body (they are all internal).
	"pg_get_function_sqlbody": nullFn,
}

func nullFn(Context, []any) (any, error) { return nil, nil }

func visible(_ Context, a []any) (any, error) { return true, nil }

// relSize is pg_table_size and friends: a topic's stored bytes (its
// partitions' retained messages), 0 for a view, NULL for no relation.
func relSize(ctx Context, a []any) (any, error) {
	oid, ok := a[0].(int64)
	if !ok {
		return nil, nil
	}
	r, ok := ctx.Catalog().Relation(oid)
	if !ok {
		return nil, nil
	}
	return r.Bytes, nil
}

// describeObject is pg_describe_object(classid, objid, objsubid): the
// object's description as PostgreSQL words it ("table orders", "view
// sys.topics", "function now()"), NULL for an object topicgate does not
// have.
func describeObject(ctx Context, a []any) (any, error) {
	class, _ := a[0].(int64)
	oid, _ := a[1].(int64)
	sub, _ := a[2].(int64)
	switch class {
	case OIDPgClassRel:
		r, ok := ctx.Catalog().Relation(oid)
		if !ok {
			return nil, nil
		}
		kind := map[string]string{"r": "table", "v": "view"}[r.Kind]
		name := r.Name
		if r.Namespace == catalog.OIDSysNS {
			name = "sys." + name
		}
		desc := kind + " " + name
		if sub > 0 && int(sub) <= len(r.Columns) {
			desc = "column " + r.Columns[sub-1] + " of " + desc
		}
		return desc, nil
	case catalog.PgCatalogOIDs["pg_proc"]:
		if p, ok := catalog.PgProcByOID(oid); ok {
			return "function " + p.Name + "(" + argTypes(p) + ")", nil
		}
	case catalog.PgCatalogOIDs["pg_type"]:
		if n, ok := FormatTypeNames[oid]; ok {
			return "type " + n, nil
		}
	case catalog.PgCatalogOIDs["pg_namespace"]:
		switch oid {
		case catalog.OIDPgCatalogNS:
			return "schema pg_catalog", nil
		case catalog.OIDPublicNS:
			return "schema public", nil
		case catalog.OIDSysNS:
			return "schema sys", nil
		}
	case catalog.PgCatalogOIDs["pg_language"]:
		if oid == OIDInternalLang {
			return "language internal", nil
		}
	}
	return nil, nil
}

func argTypes(p catalog.PgProc) string {
	var names []string
	for _, t := range p.Args {
		names = append(names, FormatTypeNames[t])
	}
	return strings.Join(names, ", ")
}

func functionResult(_ Context, a []any) (any, error) {
	oid, _ := a[0].(int64)
	p, ok := catalog.PgProcByOID(oid)
	if !ok {
		return nil, nil
	}
	return FormatTypeNames[p.Result], nil
}

func functionArgs(_ Context, a []any) (any, error) {
	oid, _ := a[0].(int64)
	p, ok := catalog.PgProcByOID(oid)
	if !ok {
		return nil, nil
	}
	return argTypes(p), nil
}

// functionDef is pg_get_functiondef: PostgreSQL's CREATE OR REPLACE
// FUNCTION text of a built-in function (psql's \sf), NULL for no function.
func functionDef(_ Context, a []any) (any, error) {
	oid, _ := a[0].(int64)
	p, ok := catalog.PgProcByOID(oid)
	if !ok {
		return nil, nil
	}
	vol := map[string]string{"i": "IMMUTABLE", "s": "STABLE", "v": "VOLATILE"}[p.Volatile]
	par := map[string]string{"s": " PARALLEL SAFE", "r": " PARALLEL RESTRICTED", "u": ""}[p.Parallel]
	return "CREATE OR REPLACE FUNCTION pg_catalog." + p.Name + "(" + argTypes(p) + ")\n" +
		" RETURNS " + FormatTypeNames[p.Result] + "\n" +
		" LANGUAGE internal\n" +
		" " + vol + par + " STRICT\n" +
		"AS $function$" + p.Src + "$function$\n", nil
}

// privilegeFn is has_<kind>_privilege([role,] object, privileges) and
// pg_has_role: the role defaults to the current user; names or OIDs.
func privilegeFn(kind string) func(Context, []any) (any, error) {
	return func(ctx Context, a []any) (any, error) {
		for _, x := range a {
			if x == nil {
				return nil, nil
			}
		}
		var role any
		obj, privs := a[0], a[1]
		if len(a) == 3 {
			role, obj, privs = a[0], a[1], a[2]
		}
		p, _ := privs.(string)
		return ctx.Catalog().Privilege(kind, role, obj, p)
	}
}

// signalFn is pg_cancel_backend(pid) (terminate false) and
// pg_terminate_backend(pid [, timeout]).
func signalFn(terminate bool) func(Context, []any) (any, error) {
	return func(ctx Context, a []any) (any, error) {
		pid, ok := a[0].(int64)
		if !ok {
			return nil, nil
		}
		return ctx.Catalog().Signal(pid, terminate)
	}
}
