package catalog

import "topicgate/sql/values"

// commonBuiltins are PostgreSQL's common string, math and date functions;
// declareBuiltins merges them with builtinSigs into Builtins. String functions count characters, not
// bytes, as PostgreSQL does for UTF8.
var commonBuiltins = map[string]funcSig{
	"position":        {2, 2, []values.Type{values.TUnknown}, fixed(values.TInt4)}, // position(sub IN s) arrives as (s, sub); text or bytea
	"strpos":          {2, 2, []values.Type{values.TText, values.TText}, fixed(values.TInt4)},
	"replace":         {3, 3, []values.Type{values.TText}, fixed(values.TText)},
	"btrim":           {1, 2, []values.Type{values.TText}, fixed(values.TText)},
	"ltrim":           {1, 2, []values.Type{values.TText}, fixed(values.TText)},
	"rtrim":           {1, 2, []values.Type{values.TText}, fixed(values.TText)},
	"split_part":      {3, 3, []values.Type{values.TText, values.TText, values.TInt8}, fixed(values.TText)},
	"left":            {2, 2, []values.Type{values.TText, values.TInt8}, fixed(values.TText)},
	"right":           {2, 2, []values.Type{values.TText, values.TInt8}, fixed(values.TText)},
	"lpad":            {2, 3, []values.Type{values.TText, values.TInt8, values.TText}, fixed(values.TText)},
	"rpad":            {2, 3, []values.Type{values.TText, values.TInt8, values.TText}, fixed(values.TText)},
	"repeat":          {2, 2, []values.Type{values.TText, values.TInt8}, fixed(values.TText)},
	"reverse":         {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"initcap":         {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"starts_with":     {2, 2, []values.Type{values.TText, values.TText}, fixed(values.TBool)},
	"chr":             {1, 1, []values.Type{values.TInt8}, fixed(values.TText)},
	"ascii":           {1, 1, []values.Type{values.TText}, fixed(values.TInt4)},
	"sqrt":            {1, 1, []values.Type{values.TFloat8}, fixed(values.TFloat8)},
	"cbrt":            {1, 1, []values.Type{values.TFloat8}, fixed(values.TFloat8)},
	"power":           {2, 2, []values.Type{values.TFloat8}, fixed(values.TFloat8)},
	"pow":             {2, 2, []values.Type{values.TFloat8}, fixed(values.TFloat8)},
	"exp":             {1, 1, []values.Type{values.TFloat8}, fixed(values.TFloat8)},
	"ln":              {1, 1, []values.Type{values.TFloat8}, fixed(values.TFloat8)},
	"log":             {1, 2, []values.Type{values.TFloat8}, fixed(values.TFloat8)}, // log(x) is base 10, log(b, x) base b
	"trunc":           {1, 2, []values.Type{values.TUnknown, values.TInt8}, roundType},
	"pi":              {0, 0, nil, fixed(values.TFloat8)},
	"mod":             {2, 2, []values.Type{values.TUnknown}, intOrNumeric},
	"sign":            {1, 1, []values.Type{values.TUnknown}, sameAsFirst},
	"date_trunc":      {2, 2, []values.Type{values.TText, values.TTimestamptz}, fixed(values.TTimestamptz)},
	"gen_random_uuid": {0, 0, nil, fixed(values.TText)},
	"current_date":    {0, 0, nil, fixed(values.TDate)},
	"to_char":         {2, 2, []values.Type{values.TUnknown, values.TText}, fixed(values.TText)},
	"like_escape":     {2, 2, []values.Type{values.TUnknown, values.TUnknown}, sameAsFirst}, // LIKE ... ESCAPE (planner/scalar/like.go)
	"quote_literal":   {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"quote_nullable":  {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"quote_ident":     {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"current_schemas": {1, 1, []values.Type{values.TBool}, fixed(values.TTextArray)},
	// Catalog functions of psql's \d queries (package pgcatalog).
	"pg_get_userbyid":                 {1, 1, []values.Type{values.TOid}, fixed(values.TName)},
	"pg_table_is_visible":             {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_encoding_to_char":             {1, 1, []values.Type{values.TInt4}, fixed(values.TName)},
	"array_to_string":                 {2, 2, []values.Type{values.TUnknown, values.TText}, fixed(values.TText)},
	"array_upper":                     {2, 2, []values.Type{values.TUnknown, values.TInt4}, fixed(values.TInt4)},
	"format_type":                     {2, 2, []values.Type{values.TOid, values.TInt4}, fixed(values.TText)},
	"regtypeout":                      {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
	"pg_table_size":                   {1, 1, []values.Type{values.TOid}, fixed(values.TInt8)},
	"pg_total_relation_size":          {1, 1, []values.Type{values.TOid}, fixed(values.TInt8)},
	"pg_relation_size":                {1, 2, []values.Type{values.TOid, values.TText}, fixed(values.TInt8)},
	"pg_indexes_size":                 {1, 1, []values.Type{values.TOid}, fixed(values.TInt8)},
	"pg_database_size":                {1, 1, []values.Type{values.TUnknown}, fixed(values.TInt8)},
	"has_database_privilege":          {2, 3, []values.Type{values.TUnknown, values.TUnknown, values.TText}, fixed(values.TBool)},
	"has_table_privilege":             {2, 3, []values.Type{values.TUnknown, values.TUnknown, values.TText}, fixed(values.TBool)},
	"has_schema_privilege":            {2, 3, []values.Type{values.TUnknown, values.TUnknown, values.TText}, fixed(values.TBool)},
	"has_consumer_privilege":          {2, 3, []values.Type{values.TUnknown, values.TUnknown, values.TText}, fixed(values.TBool)},
	"pg_has_role":                     {2, 3, []values.Type{values.TUnknown, values.TUnknown, values.TText}, fixed(values.TBool)},
	"pg_cancel_backend":               {1, 1, []values.Type{values.TInt4}, fixed(values.TBool)},
	"pg_terminate_backend":            {1, 2, []values.Type{values.TInt4, values.TInt8}, fixed(values.TBool)},
	"pg_function_is_visible":          {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_get_viewdef":                  {1, 2, []values.Type{values.TOid, values.TBool}, fixed(values.TText)},
	"pg_get_expr":                     {2, 3, []values.Type{values.TText, values.TOid, values.TBool}, fixed(values.TText)},
	"col_description":                 {2, 2, []values.Type{values.TOid, values.TInt4}, fixed(values.TText)},
	"obj_description":                 {1, 2, []values.Type{values.TOid, values.TName}, fixed(values.TText)},
	"shobj_description":               {2, 2, []values.Type{values.TOid, values.TName}, fixed(values.TText)},
	"pg_get_ruledef":                  {1, 2, []values.Type{values.TOid, values.TBool}, fixed(values.TText)},
	"pg_get_statisticsobjdef_columns": {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
	"pg_get_function_result":          {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
	"pg_get_functiondef":              {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
	"pg_get_function_sqlbody":         {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
	"pg_describe_object":              {3, 3, []values.Type{values.TOid, values.TOid, values.TInt4}, fixed(values.TText)},
	"pg_operator_is_visible":          {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_conversion_is_visible":        {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_collation_is_visible":         {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_statistics_obj_is_visible":    {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_opclass_is_visible":           {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_opfamily_is_visible":          {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_ts_config_is_visible":         {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_ts_dict_is_visible":           {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_ts_parser_is_visible":         {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_ts_template_is_visible":       {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"getdatabaseencoding":             {0, 0, nil, fixed(values.TName)},
	"pg_char_to_encoding":             {1, 1, []values.Type{values.TName}, fixed(values.TInt4)},
	"format":                          {1, -1, []values.Type{values.TText, values.TUnknown}, fixed(values.TText)},
	"array_remove":                    {2, 2, []values.Type{values.TUnknown, values.TUnknown}, sameAsFirst},
	"pg_get_function_arguments":       {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
	"pg_get_indexdef":                 {1, 3, []values.Type{values.TOid, values.TInt4, values.TBool}, fixed(values.TText)},
	"pg_get_constraintdef":            {1, 2, []values.Type{values.TOid, values.TBool}, fixed(values.TText)},
	"pg_get_triggerdef":               {1, 2, []values.Type{values.TOid, values.TBool}, fixed(values.TText)},
	"pg_relation_is_publishable":      {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_type_is_visible":              {1, 1, []values.Type{values.TOid}, fixed(values.TBool)},
	"pg_tablespace_location":          {1, 1, []values.Type{values.TOid}, fixed(values.TText)},
}

// intOrNumeric is an integer when every argument is one, else numeric.
func intOrNumeric(args []values.Type) values.Type {
	for _, a := range args {
		if !a.IsInt() {
			return values.TNumeric
		}
	}
	return values.TInt8
}

// roundType is the type of round, trunc, floor and ceil, as PostgreSQL
// resolves them: numeric for a numeric (or any value with a scale
// argument), double precision for a float8 or an integer.
func roundType(args []values.Type) values.Type {
	if len(args) == 2 {
		return values.TNumeric
	}
	switch args[0] {
	case values.TFloat8, values.TInt2, values.TInt4, values.TInt8:
		return values.TFloat8
	}
	return values.TNumeric
}
