package pgcatalog

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

func pgTypeLen(oid int64) int64 {
	for _, t := range pgTypes {
		if t.oid == oid {
			return t.len
		}
	}
	return -1
}
