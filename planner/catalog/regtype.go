package catalog

import (
	"strings"

	"topicgate/sql/pgerror"
)

// regtypeOIDs resolve 'name'::regtype for the types the emulated pg_type
// lists (pgcatalog/types.go) and the pseudo-types pg_proc's results
// name, under PostgreSQL's names and its format_type spellings.
var regtypeOIDs = map[string]int64{
	"bool": 16, "boolean": 16, "bytea": 17, `"char"`: 18, "char": 18, "name": 19, "int8": 20, "bigint": 20,
	"int2": 21, "smallint": 21, "int4": 23, "integer": 23, "int": 23, "text": 25, "oid": 26, "json": 114,
	"float4": 700, "real": 700, "float8": 701, "double precision": 701, "varchar": 1043,
	"character varying": 1043, "date": 1082, "timestamp": 1114, "timestamp without time zone": 1114,
	"timestamptz": 1184, "timestamp with time zone": 1184, "interval": 1186, "numeric": 1700, "jsonb": 3802,
	"record": 2249, "cstring": 2275, "anyarray": 2277, "void": 2278, "trigger": 2279, "anyelement": 2283,
	"bool[]": 1000, "boolean[]": 1000, "int4[]": 1007, "integer[]": 1007, "text[]": 1009, "int8[]": 1016,
	"bigint[]": 1016,
}

// RegtypeOID resolves 'name'::regtype (42704 if no such type).
func RegtypeOID(s string) (int64, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	name = strings.TrimPrefix(name, "pg_catalog.")
	oid, found := regtypeOIDs[name]
	if !found {
		return 0, pgerror.Newf(pgerror.CodeUndefinedObject, "type \"%s\" does not exist", s)
	}
	return oid, nil
}
