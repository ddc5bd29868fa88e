package planner

// commonBuiltins are PostgreSQL's common string, math and date functions;
// declareBuiltins merges them with builtinSigs into Builtins. String functions count characters, not
// bytes, as PostgreSQL does for UTF8.
var commonBuiltins = map[string]funcSig{
	"position":        {2, 2, []Type{TText, TText}, fixed(TInt4)}, // position(sub IN s) arrives as (s, sub)
	"strpos":          {2, 2, []Type{TText, TText}, fixed(TInt4)},
	"replace":         {3, 3, []Type{TText}, fixed(TText)},
	"btrim":           {1, 2, []Type{TText}, fixed(TText)},
	"ltrim":           {1, 2, []Type{TText}, fixed(TText)},
	"rtrim":           {1, 2, []Type{TText}, fixed(TText)},
	"split_part":      {3, 3, []Type{TText, TText, TInt8}, fixed(TText)},
	"left":            {2, 2, []Type{TText, TInt8}, fixed(TText)},
	"right":           {2, 2, []Type{TText, TInt8}, fixed(TText)},
	"lpad":            {2, 3, []Type{TText, TInt8, TText}, fixed(TText)},
	"rpad":            {2, 3, []Type{TText, TInt8, TText}, fixed(TText)},
	"repeat":          {2, 2, []Type{TText, TInt8}, fixed(TText)},
	"reverse":         {1, 1, []Type{TText}, fixed(TText)},
	"initcap":         {1, 1, []Type{TText}, fixed(TText)},
	"starts_with":     {2, 2, []Type{TText, TText}, fixed(TBool)},
	"chr":             {1, 1, []Type{TInt8}, fixed(TText)},
	"ascii":           {1, 1, []Type{TText}, fixed(TInt4)},
	"sqrt":            {1, 1, []Type{TFloat8}, fixed(TFloat8)},
	"cbrt":            {1, 1, []Type{TFloat8}, fixed(TFloat8)},
	"power":           {2, 2, []Type{TFloat8}, fixed(TFloat8)},
	"pow":             {2, 2, []Type{TFloat8}, fixed(TFloat8)},
	"exp":             {1, 1, []Type{TFloat8}, fixed(TFloat8)},
	"ln":              {1, 1, []Type{TFloat8}, fixed(TFloat8)},
	"log":             {1, 2, []Type{TFloat8}, fixed(TFloat8)}, // log(x) is base 10, log(b, x) base b
	"trunc":           {1, 2, []Type{TUnknown, TInt8}, roundType},
	"pi":              {0, 0, nil, fixed(TFloat8)},
	"mod":             {2, 2, []Type{TUnknown}, intOrNumeric},
	"sign":            {1, 1, []Type{TUnknown}, sameAsFirst},
	"date_trunc":      {2, 2, []Type{TText, TTimestamptz}, fixed(TTimestamptz)},
	"gen_random_uuid": {0, 0, nil, fixed(TText)},
	"current_date":    {0, 0, nil, fixed(TDate)},
	"to_char":         {2, 2, []Type{TUnknown, TText}, fixed(TText)},
	"like_escape":     {2, 2, []Type{TUnknown, TUnknown}, sameAsFirst}, // LIKE ... ESCAPE (like.go)
	"quote_literal":   {1, 1, []Type{TText}, fixed(TText)},
	"quote_nullable":  {1, 1, []Type{TText}, fixed(TText)},
	"quote_ident":     {1, 1, []Type{TText}, fixed(TText)},
	"current_schemas": {1, 1, []Type{TBool}, fixed(TTextArray)},
	// Catalog functions of psql's \d queries (executor/pgcatalog.go).
	"pg_get_userbyid":                 {1, 1, []Type{TOid}, fixed(TName)},
	"pg_table_is_visible":             {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_encoding_to_char":             {1, 1, []Type{TInt4}, fixed(TName)},
	"array_to_string":                 {2, 2, []Type{TUnknown, TText}, fixed(TText)},
	"array_upper":                     {2, 2, []Type{TUnknown, TInt4}, fixed(TInt4)},
	"format_type":                     {2, 2, []Type{TOid, TInt4}, fixed(TText)},
	"regtypeout":                      {1, 1, []Type{TOid}, fixed(TText)},
	"pg_table_size":                   {1, 1, []Type{TOid}, fixed(TInt8)},
	"pg_total_relation_size":          {1, 1, []Type{TOid}, fixed(TInt8)},
	"pg_relation_size":                {1, 2, []Type{TOid, TText}, fixed(TInt8)},
	"pg_indexes_size":                 {1, 1, []Type{TOid}, fixed(TInt8)},
	"pg_database_size":                {1, 1, []Type{TUnknown}, fixed(TInt8)},
	"has_database_privilege":          {2, 3, []Type{TUnknown, TUnknown, TText}, fixed(TBool)},
	"has_table_privilege":             {2, 3, []Type{TUnknown, TUnknown, TText}, fixed(TBool)},
	"has_schema_privilege":            {2, 3, []Type{TUnknown, TUnknown, TText}, fixed(TBool)},
	"pg_function_is_visible":          {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_get_viewdef":                  {1, 2, []Type{TOid, TBool}, fixed(TText)},
	"pg_get_expr":                     {2, 3, []Type{TText, TOid, TBool}, fixed(TText)},
	"col_description":                 {2, 2, []Type{TOid, TInt4}, fixed(TText)},
	"obj_description":                 {1, 2, []Type{TOid, TName}, fixed(TText)},
	"shobj_description":               {2, 2, []Type{TOid, TName}, fixed(TText)},
	"pg_get_ruledef":                  {1, 2, []Type{TOid, TBool}, fixed(TText)},
	"pg_get_statisticsobjdef_columns": {1, 1, []Type{TOid}, fixed(TText)},
	"pg_get_function_result":          {1, 1, []Type{TOid}, fixed(TText)},
	"pg_get_functiondef":              {1, 1, []Type{TOid}, fixed(TText)},
	"pg_get_function_sqlbody":         {1, 1, []Type{TOid}, fixed(TText)},
	"pg_describe_object":              {3, 3, []Type{TOid, TOid, TInt4}, fixed(TText)},
	"pg_operator_is_visible":          {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_conversion_is_visible":        {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_collation_is_visible":         {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_statistics_obj_is_visible":    {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_opclass_is_visible":           {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_opfamily_is_visible":          {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_ts_config_is_visible":         {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_ts_dict_is_visible":           {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_ts_parser_is_visible":         {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_ts_template_is_visible":       {1, 1, []Type{TOid}, fixed(TBool)},
	"getdatabaseencoding":             {0, 0, nil, fixed(TName)},
	"pg_char_to_encoding":             {1, 1, []Type{TName}, fixed(TInt4)},
	"format":                          {1, -1, []Type{TText, TUnknown}, fixed(TText)},
	"array_remove":                    {2, 2, []Type{TUnknown, TUnknown}, sameAsFirst},
	"pg_get_function_arguments":       {1, 1, []Type{TOid}, fixed(TText)},
	"pg_get_indexdef":                 {1, 3, []Type{TOid, TInt4, TBool}, fixed(TText)},
	"pg_get_constraintdef":            {1, 2, []Type{TOid, TBool}, fixed(TText)},
	"pg_get_triggerdef":               {1, 2, []Type{TOid, TBool}, fixed(TText)},
	"pg_relation_is_publishable":      {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_type_is_visible":              {1, 1, []Type{TOid}, fixed(TBool)},
	"pg_tablespace_location":          {1, 1, []Type{TOid}, fixed(TText)},
}

// intOrNumeric is an integer when every argument is one, else numeric.
func intOrNumeric(args []Expr) Type {
	for _, a := range args {
		if !a.Type().IsInt() {
			return TNumeric
		}
	}
	return TInt8
}

// roundType is the type of round, trunc, floor and ceil, as PostgreSQL
// resolves them: numeric for a numeric (or any value with a scale
// argument), double precision for a float8 or an integer.
func roundType(args []Expr) Type {
	if len(args) == 2 {
		return TNumeric
	}
	switch args[0].Type() {
	case TFloat8, TInt2, TInt4, TInt8:
		return TFloat8
	}
	return TNumeric
}
