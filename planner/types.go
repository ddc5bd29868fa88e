package planner

// PostgreSQL type OIDs (pg_type.oid), as clients see them.
const (
	oidBool        uint32 = 16
	oidBytea       uint32 = 17
	oidChar        uint32 = 18
	oidName        uint32 = 19
	oidInt8        uint32 = 20
	oidInt2        uint32 = 21
	oidInt4        uint32 = 23
	oidText        uint32 = 25
	oidOid         uint32 = 26
	oidJSON        uint32 = 114
	oidFloat4      uint32 = 700
	oidFloat8      uint32 = 701
	oidBoolArray   uint32 = 1000
	oidInt4Array   uint32 = 1007
	oidTextArray   uint32 = 1009
	oidInt2Array   uint32 = 1005
	oidInt8Array   uint32 = 1016
	oidOidArray    uint32 = 1028
	oidBpchar      uint32 = 1042
	oidVarchar     uint32 = 1043
	oidDate        uint32 = 1082
	oidTimestamp   uint32 = 1114
	oidTimestamptz uint32 = 1184
	oidInterval    uint32 = 1186
	oidNumeric     uint32 = 1700
	oidUUID        uint32 = 2950
	oidJSONB       uint32 = 3802
)

// Type is the SQL type of an expression or column.
type Type uint8

// Types the planner knows. TUnknown is an untyped string literal or a
// parameter whose type is not yet inferred; it resolves from context, as in
// PostgreSQL.
const (
	TUnknown Type = iota
	TNull
	TBool
	TInt2
	TInt4
	TInt8
	TFloat8
	TNumeric
	TText
	TBytea
	TJSONB
	TJSON
	TTimestamptz
	TInterval
	TInt8Array
	TInt4Array
	TTextArray
	TBoolArray
	TOid
	TName
	TChar
	TDate     // a calendar day: a time.Time at 00:00 UTC
	TOidArray // oid[]: []int64, as int8[]; clients see OID 1028
)

var typeNames = [...]string{
	TUnknown: "unknown", TNull: "null", TBool: "boolean", TInt2: "smallint", TInt4: "integer",
	TInt8: "bigint", TFloat8: "double precision", TNumeric: "numeric", TText: "text",
	TBytea: "bytea", TJSONB: "jsonb", TJSON: "json", TTimestamptz: "timestamp with time zone",
	TInterval: "interval", TInt8Array: "bigint[]", TInt4Array: "integer[]", TTextArray: "text[]",
	TBoolArray: "boolean[]", TOid: "oid", TName: "name", TChar: "\"char\"", TDate: "date",
	TOidArray: "oid[]",
}

func (t Type) String() string { return typeNames[t] }

// OID returns the PostgreSQL type OID of t.
func (t Type) OID() uint32 {
	switch t {
	case TBool:
		return oidBool
	case TInt2:
		return oidInt2
	case TInt4:
		return oidInt4
	case TInt8:
		return oidInt8
	case TFloat8:
		return oidFloat8
	case TNumeric:
		return oidNumeric
	case TText, TUnknown, TNull:
		return oidText
	case TBytea:
		return oidBytea
	case TJSONB:
		return oidJSONB
	case TJSON:
		return oidJSON
	case TTimestamptz:
		return oidTimestamptz
	case TDate:
		return oidDate
	case TInterval:
		return oidInterval
	case TInt8Array:
		return oidInt8Array
	case TOidArray:
		return oidOidArray
	case TInt4Array:
		return oidInt4Array
	case TTextArray:
		return oidTextArray
	case TBoolArray:
		return oidBoolArray
	case TOid:
		return oidOid
	case TName:
		return oidName
	case TChar:
		return oidChar
	}
	return oidText
}

// TypeFromOID maps a client-declared parameter OID to a Type (TUnknown for
// 0 or types we do not model).
func TypeFromOID(oid uint32) Type {
	switch oid {
	case oidBool:
		return TBool
	case oidInt2:
		return TInt2
	case oidInt4:
		return TInt4
	case oidInt8:
		return TInt8
	case oidFloat4, oidFloat8:
		return TFloat8
	case oidNumeric:
		return TNumeric
	case oidText, oidVarchar, oidBpchar:
		return TText
	case oidUUID:
		// No uuid type here (gen_random_uuid returns text): the wire decodes
		// a uuid parameter, binary (pgjdbc's setObject(UUID)) or text, to its
		// text form, which goes wherever text does, as PostgreSQL's
		// assignment cast of uuid to text does.
		return TText
	case oidName:
		return TName
	case oidBytea:
		return TBytea
	case oidJSONB:
		return TJSONB
	case oidJSON:
		return TJSON
	case oidTimestamptz, oidTimestamp:
		return TTimestamptz
	case oidDate:
		return TDate
	case oidInterval:
		return TInterval
	case oidInt8Array, oidInt2Array:
		return TInt8Array
	case oidInt4Array:
		return TInt4Array
	case oidOidArray:
		return TOidArray
	case oidTextArray:
		return TTextArray
	case oidBoolArray:
		return TBoolArray
	case oidOid:
		return TOid
	}
	return TUnknown
}

// TypeFromName maps a normalized cast type name (see sql.Cast) to a Type.
func TypeFromName(name string) (Type, bool) {
	switch name {
	case "bool", "boolean":
		return TBool, true
	case "int2", "smallint":
		return TInt2, true
	case "int4", "int", "integer":
		return TInt4, true
	case "int8", "bigint":
		return TInt8, true
	case "float8", "float4", "real", "double precision", "float":
		return TFloat8, true
	case "numeric", "decimal":
		return TNumeric, true
	case "text", "varchar", "bpchar", "character varying", "char", "character", "string":
		return TText, true
	case "name":
		return TName, true
	case "bytea":
		return TBytea, true
	case "jsonb":
		return TJSONB, true
	case "json":
		return TJSON, true
	case "timestamptz", "timestamp":
		return TTimestamptz, true
	case "date":
		return TDate, true
	case "interval":
		return TInterval, true
	case "int8[]", "bigint[]", "int2[]", "smallint[]", "int2vector", "oidvector":
		return TInt8Array, true
	case "oid[]", "regtype[]", "regclass[]", "regproc[]":
		return TOidArray, true
	case "int4[]", "integer[]", "int[]":
		return TInt4Array, true
	case "text[]", "varchar[]", "name[]", "\"char\"[]", "char[]", "aclitem[]":
		return TTextArray, true
	case "bool[]", "boolean[]":
		return TBoolArray, true
	case "oid", "regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole", "regoper", "regoperator", "regconfig":
		return TOid, true
	case "\"char\"":
		return TChar, true
	}
	return TUnknown, false
}

// IsNumeric reports whether t is an integer, float or numeric type.
func (t Type) IsNumeric() bool {
	switch t {
	case TInt2, TInt4, TInt8, TFloat8, TNumeric, TOid:
		return true
	}
	return false
}

// IsInt reports whether t is an integer type.
func (t Type) IsInt() bool { return t == TInt2 || t == TInt4 || t == TInt8 || t == TOid }

// IsText reports whether t is a string type.
func (t Type) IsText() bool { return t == TText || t == TName || t == TChar || t == TUnknown }

// ElemType returns the element type of an array type.
func (t Type) ElemType() Type {
	switch t {
	case TInt8Array:
		return TInt8
	case TOidArray:
		return TOid
	case TInt4Array:
		return TInt4
	case TTextArray:
		return TText
	case TBoolArray:
		return TBool
	}
	return TUnknown
}

// ArrayOf returns the array type of t.
func ArrayOf(t Type) Type {
	switch t {
	case TInt8, TInt2:
		return TInt8Array
	case TOid:
		return TOidArray
	case TInt4:
		return TInt4Array
	case TBool:
		return TBoolArray
	}
	return TTextArray
}
