package values

// PostgreSQL type OIDs (pg_type.oid), as clients see them.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDChar        uint32 = 18
	OIDName        uint32 = 19
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt4        uint32 = 23
	OIDText        uint32 = 25
	OIDOid         uint32 = 26
	OIDJSON        uint32 = 114
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDUnknown     uint32 = 705
	OIDBoolArray   uint32 = 1000
	OIDInt4Array   uint32 = 1007
	OIDTextArray   uint32 = 1009
	OIDInt2Array   uint32 = 1005
	OIDInt8Array   uint32 = 1016
	OIDOidArray    uint32 = 1028
	OIDBpchar      uint32 = 1042
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTimestamp   uint32 = 1114
	OIDTimestamptz uint32 = 1184
	OIDInterval    uint32 = 1186
	OIDNumeric     uint32 = 1700
	OIDUUID        uint32 = 2950
	OIDJSONB       uint32 = 3802
)

// Type is the SQL type of an expression or column.
type Type uint8

// The SQL types topicgate knows. TUnknown is an untyped string literal or a
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
		return OIDBool
	case TInt2:
		return OIDInt2
	case TInt4:
		return OIDInt4
	case TInt8:
		return OIDInt8
	case TFloat8:
		return OIDFloat8
	case TNumeric:
		return OIDNumeric
	case TText, TUnknown, TNull:
		return OIDText
	case TBytea:
		return OIDBytea
	case TJSONB:
		return OIDJSONB
	case TJSON:
		return OIDJSON
	case TTimestamptz:
		return OIDTimestamptz
	case TDate:
		return OIDDate
	case TInterval:
		return OIDInterval
	case TInt8Array:
		return OIDInt8Array
	case TOidArray:
		return OIDOidArray
	case TInt4Array:
		return OIDInt4Array
	case TTextArray:
		return OIDTextArray
	case TBoolArray:
		return OIDBoolArray
	case TOid:
		return OIDOid
	case TName:
		return OIDName
	case TChar:
		return OIDChar
	}
	return OIDText
}

// TypeFromOID maps a client-declared parameter OID to a Type (TUnknown for
// 0 or types we do not model).
func TypeFromOID(oid uint32) Type {
	switch oid {
	case OIDBool:
		return TBool
	case OIDInt2:
		return TInt2
	case OIDInt4:
		return TInt4
	case OIDInt8:
		return TInt8
	case OIDFloat4, OIDFloat8:
		return TFloat8
	case OIDNumeric:
		return TNumeric
	case OIDText, OIDVarchar, OIDBpchar:
		return TText
	case OIDUUID:
		// No uuid type here (gen_random_uuid returns text): the wire decodes
		// a uuid parameter, binary (pgjdbc's setObject(UUID)) or text, to its
		// text form, which goes wherever text does, as PostgreSQL's
		// assignment cast of uuid to text does.
		return TText
	case OIDName:
		return TName
	case OIDBytea:
		return TBytea
	case OIDJSONB:
		return TJSONB
	case OIDJSON:
		return TJSON
	case OIDTimestamptz, OIDTimestamp:
		return TTimestamptz
	case OIDDate:
		return TDate
	case OIDInterval:
		return TInterval
	case OIDInt8Array, OIDInt2Array:
		return TInt8Array
	case OIDInt4Array:
		return TInt4Array
	case OIDOidArray:
		return TOidArray
	case OIDTextArray:
		return TTextArray
	case OIDBoolArray:
		return TBoolArray
	case OIDOid:
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
