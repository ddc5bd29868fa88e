package catalog

import (
	"strings"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// PgProc is one row of the emulated pg_proc: a built-in function with
// PostgreSQL 15's OID, signature and attributes, all in language internal
// (compiled into the server). Only functions topicgate runs are listed:
// the input functions of the types pg_type has (their typinput) and a few
// the executor implements under the same names (psql's \sf shows them).
type PgProc struct {
	OID      int64
	Name     string
	Args     []int64 // argument type OIDs
	Result   int64   // result type OID
	Volatile string  // provolatile: i, s or v
	Parallel string  // proparallel: s, r or u
	Src      string  // prosrc: the C symbol in PostgreSQL
}

const (
	oidCstring  = 2275
	oidAnyarray = 2277
)

var cstring1 = []int64{oidCstring}
var cstring3 = []int64{oidCstring, 26, 23} // cstring, oid, integer

// PgProcs are pg_proc's rows (recorded from PostgreSQL 15.18's pg_proc).
var PgProcs = []PgProc{
	{34, "namein", cstring1, 19, "i", "s", "namein"},
	{38, "int2in", cstring1, 21, "i", "s", "int2in"},
	{42, "int4in", cstring1, 23, "i", "s", "int4in"},
	{46, "textin", cstring1, 25, "i", "s", "textin"},
	{89, "version", nil, 25, "s", "s", "pgsql_version"},
	{200, "float4in", cstring1, 700, "i", "s", "float4in"},
	{214, "float8in", cstring1, 701, "i", "s", "float8in"},
	{321, "json_in", cstring1, 114, "i", "s", "json_in"},
	{460, "int8in", cstring1, 20, "i", "s", "int8in"},
	{750, "array_in", cstring3, oidAnyarray, "s", "s", "array_in"},
	{861, "current_database", nil, 19, "s", "s", "current_database"},
	{1046, "varcharin", cstring3, 1043, "i", "s", "varcharin"},
	{1084, "date_in", cstring1, 1082, "s", "s", "date_in"},
	{1150, "timestamptz_in", cstring3, 1184, "s", "s", "timestamptz_in"},
	{1160, "interval_in", cstring3, 1186, "s", "s", "interval_in"},
	{1242, "boolin", cstring1, 16, "i", "s", "boolin"},
	{1244, "byteain", cstring1, 17, "i", "s", "byteain"},
	{1245, "charin", cstring1, 18, "i", "s", "charin"},
	{1299, "now", nil, 1184, "s", "s", "now"},
	{1312, "timestamp_in", cstring3, 1114, "s", "s", "timestamp_in"},
	{1701, "numeric_in", cstring3, 1700, "i", "s", "numeric_in"},
	{1798, "oidin", cstring1, 26, "i", "s", "oidin"},
	{2026, "pg_backend_pid", nil, 23, "s", "r", "pg_backend_pid"},
	{3806, "jsonb_in", cstring1, 3802, "i", "s", "jsonb_in"},
}

// PgProcByOID finds a pg_proc row.
func PgProcByOID(oid int64) (PgProc, bool) {
	for _, p := range PgProcs {
		if p.OID == oid {
			return p, true
		}
	}
	return PgProc{}, false
}

// RegprocOID resolves 'name'::regproc as PostgreSQL does: a number is an
// OID, a name (optionally pg_catalog-qualified) a function of pg_proc;
// 42883 for none, 3F000 for a schema that does not exist.
func RegprocOID(s string) (int64, error) {
	if n, err := values.ParseText(s, values.TInt8); err == nil {
		return n.(int64), nil
	}
	name := strings.TrimSpace(s)
	if schema, rest, ok := strings.Cut(name, "."); ok {
		switch strings.ToLower(schema) {
		case "pg_catalog":
			name = rest
		case "public", "sys":
			return 0, pgerror.Newf(pgerror.CodeUndefinedFunction, "function \"%s\" does not exist", s)
		default:
			return 0, pgerror.Newf(pgerror.CodeInvalidSchemaName, "schema \"%s\" does not exist", schema)
		}
	}
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	} else {
		name = strings.ToLower(name)
	}
	for _, p := range PgProcs {
		if p.Name == name {
			return p.OID, nil
		}
	}
	return 0, pgerror.Newf(pgerror.CodeUndefinedFunction, "function \"%s\" does not exist", s)
}
