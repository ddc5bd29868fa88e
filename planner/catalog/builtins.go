package catalog

import (
	"sort"

	"topicgate/sql/values"
)

// funcSig describes a builtin's argument types (for inference) and result.
type funcSig struct {
	min, max int           // argument count bounds; max -1 = variadic
	args     []values.Type // expected types for inference; TUnknown = any; last repeats
	result   func(args []values.Type) values.Type
}

// Min and Max are the argument count bounds (Max -1: variadic).
func (s funcSig) Min() int { return s.min }
func (s funcSig) Max() int { return s.max }

// ArgType is the declared type of argument i (TUnknown: any).
func (s funcSig) ArgType(i int) values.Type {
	if len(s.args) == 0 {
		return values.TUnknown
	}
	return s.args[min(i, len(s.args)-1)]
}

// Result is the result type of a call whose bound arguments have the
// types args.
func (s funcSig) Result(args []values.Type) values.Type { return s.result(args) }

func fixed(t values.Type) func([]values.Type) values.Type {
	return func([]values.Type) values.Type { return t }
}

func sameAsFirst(args []values.Type) values.Type {
	if len(args) == 0 || args[0] == values.TUnknown {
		return values.TText
	}
	return args[0]
}

// Builtin is one scalar builtin function, declared once, here: its
// signature (argument count and types for inference, result type),
// whether it sees NULL arguments, and its ID. A bound call carries its
// entry (plantree.FuncExpr.Fn); package eval keeps the implementations in
// a table indexed by ID, filled at its package init from the
// implementations it registers under these names, and it panics at init
// (so no server or test binary starts) if a declared function has no
// implementation or an implementation has no declaration.
type Builtin struct {
	Name string
	// ID is the entry's index in BuiltinList (names in order).
	ID int
	// NullAware functions are called with NULL arguments; any other
	// returns NULL when an argument is NULL (PostgreSQL's strict).
	NullAware bool
	funcSig
}

// Builtins are the scalar builtin functions by name; BuiltinList the same
// entries by ID.
var Builtins, BuiltinList = declareBuiltins()

// nullAware lists the builtins that see NULL arguments: concat skips
// them, current_setting's missing_ok may be NULL, greatest and least
// ignore them, quote_nullable prints NULL, format_type names a type
// whatever its typmod (NULL included), format formats NULL arguments.
var nullAware = map[string]bool{"concat": true, "current_setting": true, "greatest": true, "least": true,
	"quote_nullable": true, "format_type": true, "format": true}

func declareBuiltins() (map[string]*Builtin, []*Builtin) {
	names := make([]string, 0, len(builtinSigs)+len(commonBuiltins))
	sigs := make(map[string]funcSig, cap(names))
	for _, m := range []map[string]funcSig{builtinSigs, commonBuiltins} {
		for name, sig := range m {
			if _, dup := sigs[name]; dup {
				panic("builtin " + name + " is declared twice")
			}
			sigs[name] = sig
			names = append(names, name)
		}
	}
	sort.Strings(names)
	byName := make(map[string]*Builtin, len(names))
	list := make([]*Builtin, len(names))
	for i, name := range names {
		list[i] = &Builtin{Name: name, ID: i, NullAware: nullAware[name], funcSig: sigs[name]}
		byName[name] = list[i]
	}
	for name := range nullAware {
		if byName[name] == nil {
			panic("null-aware builtin " + name + " is not declared")
		}
	}
	return byName, list
}

// builtinSigs are the signatures of the core builtins (builtins_common.go
// has the rest).
var builtinSigs = map[string]funcSig{
	"length":                {1, 1, []values.Type{values.TUnknown}, fixed(values.TInt4)},
	"octet_length":          {1, 1, []values.Type{values.TUnknown}, fixed(values.TInt4)},
	"char_length":           {1, 1, []values.Type{values.TText}, fixed(values.TInt4)},
	"convert_from":          {2, 2, []values.Type{values.TBytea, values.TText}, fixed(values.TText)},
	"convert_to":            {2, 2, []values.Type{values.TText, values.TText}, fixed(values.TBytea)},
	"encode":                {2, 2, []values.Type{values.TBytea, values.TText}, fixed(values.TText)},
	"decode":                {2, 2, []values.Type{values.TText, values.TText}, fixed(values.TBytea)},
	"lower":                 {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"upper":                 {1, 1, []values.Type{values.TText}, fixed(values.TText)},
	"substr":                {2, 3, []values.Type{values.TUnknown, values.TInt8, values.TInt8}, sameAsFirst},
	"substring":             {2, 3, []values.Type{values.TUnknown, values.TInt8, values.TInt8}, sameAsFirst},
	"concat":                {0, -1, []values.Type{values.TText}, fixed(values.TText)},
	"md5":                   {1, 1, []values.Type{values.TUnknown}, fixed(values.TText)},
	"now":                   {0, 0, nil, fixed(values.TTimestamptz)},
	"current_timestamp":     {0, 0, nil, fixed(values.TTimestamptz)},
	"statement_timestamp":   {0, 0, nil, fixed(values.TTimestamptz)},
	"transaction_timestamp": {0, 0, nil, fixed(values.TTimestamptz)},
	"clock_timestamp":       {0, 0, nil, fixed(values.TTimestamptz)},
	"to_timestamp":          {1, 1, []values.Type{values.TFloat8}, fixed(values.TTimestamptz)},
	"date_part":             {2, 2, []values.Type{values.TText, values.TUnknown}, fixed(values.TFloat8)},
	"extract":               {2, 2, []values.Type{values.TText, values.TUnknown}, fixed(values.TFloat8)},
	"abs":                   {1, 1, []values.Type{values.TUnknown}, sameAsFirst},
	"round":                 {1, 2, []values.Type{values.TUnknown, values.TInt8}, roundType},
	"floor":                 {1, 1, []values.Type{values.TUnknown}, roundType},
	"ceil":                  {1, 1, []values.Type{values.TUnknown}, roundType},
	"to_hex":                {1, 1, []values.Type{values.TInt8}, fixed(values.TText)},
	"pg_size_pretty":        {1, 1, []values.Type{values.TInt8}, fixed(values.TText)},
	"version":               {0, 0, nil, fixed(values.TText)},
	"current_database":      {0, 0, nil, fixed(values.TName)},
	"current_schema":        {0, 0, nil, fixed(values.TName)},
	"current_user":          {0, 0, nil, fixed(values.TName)},
	"session_user":          {0, 0, nil, fixed(values.TName)},
	"current_setting":       {1, 2, []values.Type{values.TText, values.TBool}, fixed(values.TText)},
	"set_config":            {3, 3, []values.Type{values.TText, values.TText, values.TBool}, fixed(values.TText)},
	"pg_backend_pid":        {0, 0, nil, fixed(values.TInt4)},
	"jsonb_typeof":          {1, 1, []values.Type{values.TJSONB}, fixed(values.TText)},
	"jsonb_pretty":          {1, 1, []values.Type{values.TJSONB}, fixed(values.TText)},
	"to_jsonb":              {1, 1, []values.Type{values.TUnknown}, fixed(values.TJSONB)},
	"array_length":          {2, 2, []values.Type{values.TUnknown, values.TInt8}, fixed(values.TInt4)},
	"cardinality":           {1, 1, []values.Type{values.TUnknown}, fixed(values.TInt4)},
	"greatest":              {1, -1, []values.Type{values.TUnknown}, sameAsFirst},
	"least":                 {1, -1, []values.Type{values.TUnknown}, sameAsFirst},
}
