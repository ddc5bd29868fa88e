package executor

import (
	"strings"

	"topicgate/planner"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// The catalog functions of psql's less common describe commands (\do,
// \dC, \dc, \dO, \dX, \dF*, \dd, \dx+, \sf, \sv): visibility of the kinds
// of objects topicgate has none of, encodings, pg_describe_object, and
// pg_proc's functions (pg_get_functiondef and friends).

// pgDescribeFns join builtins (planner.Builtins declares them).
var pgDescribeFns = map[string]builtin{
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
	"getdatabaseencoding":          func(*evalCtx, []any) (any, error) { return "UTF8", nil },
	"pg_char_to_encoding": func(_ *evalCtx, a []any) (any, error) {
		if s, _ := a[0].(string); strings.EqualFold(s, "UTF8") || strings.EqualFold(s, "UTF-8") {
			return int64(encodingUTF8), nil
		}
		return int64(-1), nil
	},
	"pg_describe_object":        describeObject,
	"pg_get_functiondef":        functionDef,
	"pg_get_function_result":    functionResult,
	"pg_get_function_arguments": functionArgs,
	// No function has an SQL-standard body (they are all internal).
	"pg_get_function_sqlbody": nullFn,
	"format":                  fnFormat,
	// array_remove(a, x): a without the elements equal to x (psql's \sv
	// strips the check options from reloptions).
	"array_remove": func(_ *evalCtx, a []any) (any, error) {
		x := values.KeyText(a[1])
		var out []string
		switch arr := a[0].(type) {
		case []string:
			out = []string{}
			for _, e := range arr {
				if e != x {
					out = append(out, e)
				}
			}
			return out, nil
		}
		return a[0], nil
	},
}

// fnFormat is format(fmt, args...) with the specifiers %s, %I, %L and %%
// (psql's \dX: format('%s FROM %s', ...)); a NULL is ” for %s, NULL for
// %L, and an error for %I, as in PostgreSQL.
func fnFormat(_ *evalCtx, a []any) (any, error) {
	f, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	var b strings.Builder
	next := 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i == len(f) {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "unterminated format() type specifier")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(a) {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "too few arguments for format()")
		}
		v := a[next]
		next++
		switch f[i] {
		case 's':
			if v != nil {
				b.WriteString(values.FormatText(v))
			}
		case 'I':
			if v == nil {
				return nil, pgerror.New(pgerror.CodeNullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			b.WriteString(quoteIdent(values.FormatText(v)))
		case 'L':
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(quoteLiteral(values.FormatText(v)))
			}
		default:
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized format() type specifier \"%c\"", f[i])
		}
	}
	return b.String(), nil
}

func visible(_ *evalCtx, a []any) (any, error) { return true, nil }

// describeObject is pg_describe_object(classid, objid, objsubid): the
// object's description as PostgreSQL words it ("table orders", "view
// sys.topics", "function now()"), NULL for an object topicgate does not
// have.
func describeObject(ec *evalCtx, a []any) (any, error) {
	class, _ := a[0].(int64)
	oid, _ := a[1].(int64)
	sub, _ := a[2].(int64)
	switch class {
	case oidPgClassRel:
		r, ok := ec.sess.relOf(oid)
		if !ok {
			return nil, nil
		}
		kind := map[string]string{"r": "table", "v": "view"}[r.kind]
		name := r.name
		if r.ns == oidSysNS {
			name = "sys." + name
		}
		desc := kind + " " + name
		if sub > 0 && int(sub) <= len(r.names) {
			desc = "column " + r.names[sub-1] + " of " + desc
		}
		return desc, nil
	case planner.PgCatalogOIDs["pg_proc"]:
		if p, ok := planner.PgProcByOID(oid); ok {
			return "function " + p.Name + "(" + argTypes(p) + ")", nil
		}
	case planner.PgCatalogOIDs["pg_type"]:
		if n, ok := formatTypeNames[oid]; ok {
			return "type " + n, nil
		}
	case planner.PgCatalogOIDs["pg_namespace"]:
		switch oid {
		case oidPgCatalogNS:
			return "schema pg_catalog", nil
		case oidPublicNS:
			return "schema public", nil
		case oidSysNS:
			return "schema sys", nil
		}
	case planner.PgCatalogOIDs["pg_language"]:
		if oid == oidInternalLang {
			return "language internal", nil
		}
	}
	return nil, nil
}

const oidInternalLang = 12

func argTypes(p planner.PgProc) string {
	var names []string
	for _, t := range p.Args {
		names = append(names, formatTypeNames[t])
	}
	return strings.Join(names, ", ")
}

func functionResult(_ *evalCtx, a []any) (any, error) {
	oid, _ := a[0].(int64)
	p, ok := planner.PgProcByOID(oid)
	if !ok {
		return nil, nil
	}
	return formatTypeNames[p.Result], nil
}

func functionArgs(_ *evalCtx, a []any) (any, error) {
	oid, _ := a[0].(int64)
	p, ok := planner.PgProcByOID(oid)
	if !ok {
		return nil, nil
	}
	return argTypes(p), nil
}

// functionDef is pg_get_functiondef: PostgreSQL's CREATE OR REPLACE
// FUNCTION text of a built-in function (psql's \sf), NULL for no function.
func functionDef(_ *evalCtx, a []any) (any, error) {
	oid, _ := a[0].(int64)
	p, ok := planner.PgProcByOID(oid)
	if !ok {
		return nil, nil
	}
	vol := map[string]string{"i": "IMMUTABLE", "s": "STABLE", "v": "VOLATILE"}[p.Volatile]
	par := map[string]string{"s": " PARALLEL SAFE", "r": " PARALLEL RESTRICTED", "u": ""}[p.Parallel]
	return "CREATE OR REPLACE FUNCTION pg_catalog." + p.Name + "(" + argTypes(p) + ")\n" +
		" RETURNS " + formatTypeNames[p.Result] + "\n" +
		" LANGUAGE internal\n" +
		" " + vol + par + " STRICT\n" +
		"AS $function$" + p.Src + "$function$\n", nil
}

// procRows are pg_proc's rows.
func procRows(add func(map[string]any)) {
	for _, p := range planner.PgProcs {
		// proargtypes is an oidvector in PostgreSQL; here an oid[] with
		// the same elements (pgcli casts it to regtype[]).
		args := append([]int64{}, p.Args...)
		add(map[string]any{"oid": p.OID, "proname": p.Name, "pronamespace": int64(oidPgCatalogNS),
			"proowner": int64(oidBootstrap), "prolang": int64(oidInternalLang), "prokind": "f",
			"provolatile": p.Volatile, "proparallel": p.Parallel, "proisstrict": true,
			"pronargs": int64(len(p.Args)), "prorettype": p.Result, "proargtypes": args,
			"prosrc": p.Src})
	}
}
