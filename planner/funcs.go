package planner

import (
	"sort"
	"strings"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// funcSig describes a builtin's argument types (for inference) and result.
type funcSig struct {
	min, max int    // argument count bounds; max -1 = variadic
	args     []Type // expected types for inference; TUnknown = any; last repeats
	result   func(args []Expr) Type
}

// Min and Max are the argument count bounds (Max -1: variadic).
func (s funcSig) Min() int { return s.min }
func (s funcSig) Max() int { return s.max }

// ArgType is the declared type of argument i (TUnknown: any).
func (s funcSig) ArgType(i int) Type {
	if len(s.args) == 0 {
		return TUnknown
	}
	return s.args[min(i, len(s.args)-1)]
}

func fixed(t Type) func([]Expr) Type { return func([]Expr) Type { return t } }

func sameAsFirst(args []Expr) Type {
	if len(args) == 0 || args[0].Type() == TUnknown {
		return TText
	}
	return args[0].Type()
}

// Builtin is one scalar builtin function, declared once, here: its
// signature (argument count and types for inference, result type),
// whether it sees NULL arguments, and its ID. A bound call carries its
// entry (FuncExpr.Fn); the executor keeps the implementations in a table
// indexed by ID, filled at its package init from the implementations it
// registers under these names, and it panics at init (so no server or test
// binary starts) if a declared function has no implementation or an
// implementation has no declaration.
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

// builtinSigs are the signatures of the core builtins (funcs_common.go
// has the rest).
var builtinSigs = map[string]funcSig{
	"length":                {1, 1, []Type{TUnknown}, fixed(TInt4)},
	"octet_length":          {1, 1, []Type{TUnknown}, fixed(TInt4)},
	"char_length":           {1, 1, []Type{TText}, fixed(TInt4)},
	"convert_from":          {2, 2, []Type{TBytea, TText}, fixed(TText)},
	"convert_to":            {2, 2, []Type{TText, TText}, fixed(TBytea)},
	"encode":                {2, 2, []Type{TBytea, TText}, fixed(TText)},
	"decode":                {2, 2, []Type{TText, TText}, fixed(TBytea)},
	"lower":                 {1, 1, []Type{TText}, fixed(TText)},
	"upper":                 {1, 1, []Type{TText}, fixed(TText)},
	"substr":                {2, 3, []Type{TUnknown, TInt8, TInt8}, sameAsFirst},
	"substring":             {2, 3, []Type{TUnknown, TInt8, TInt8}, sameAsFirst},
	"concat":                {0, -1, []Type{TText}, fixed(TText)},
	"md5":                   {1, 1, []Type{TUnknown}, fixed(TText)},
	"now":                   {0, 0, nil, fixed(TTimestamptz)},
	"current_timestamp":     {0, 0, nil, fixed(TTimestamptz)},
	"statement_timestamp":   {0, 0, nil, fixed(TTimestamptz)},
	"transaction_timestamp": {0, 0, nil, fixed(TTimestamptz)},
	"clock_timestamp":       {0, 0, nil, fixed(TTimestamptz)},
	"to_timestamp":          {1, 1, []Type{TFloat8}, fixed(TTimestamptz)},
	"date_part":             {2, 2, []Type{TText, TUnknown}, fixed(TFloat8)},
	"extract":               {2, 2, []Type{TText, TUnknown}, fixed(TFloat8)},
	"abs":                   {1, 1, []Type{TUnknown}, sameAsFirst},
	"round":                 {1, 2, []Type{TUnknown, TInt8}, roundType},
	"floor":                 {1, 1, []Type{TUnknown}, roundType},
	"ceil":                  {1, 1, []Type{TUnknown}, roundType},
	"to_hex":                {1, 1, []Type{TInt8}, fixed(TText)},
	"pg_size_pretty":        {1, 1, []Type{TInt8}, fixed(TText)},
	"version":               {0, 0, nil, fixed(TText)},
	"current_database":      {0, 0, nil, fixed(TName)},
	"current_schema":        {0, 0, nil, fixed(TName)},
	"current_user":          {0, 0, nil, fixed(TName)},
	"session_user":          {0, 0, nil, fixed(TName)},
	"current_setting":       {1, 2, []Type{TText, TBool}, fixed(TText)},
	"set_config":            {3, 3, []Type{TText, TText, TBool}, fixed(TText)},
	"pg_backend_pid":        {0, 0, nil, fixed(TInt4)},
	"jsonb_typeof":          {1, 1, []Type{TJSONB}, fixed(TText)},
	"jsonb_pretty":          {1, 1, []Type{TJSONB}, fixed(TText)},
	"to_jsonb":              {1, 1, []Type{TUnknown}, fixed(TJSONB)},
	"array_length":          {2, 2, []Type{TUnknown, TInt8}, fixed(TInt4)},
	"cardinality":           {1, 1, []Type{TUnknown}, fixed(TInt4)},
	"greatest":              {1, -1, []Type{TUnknown}, sameAsFirst},
	"least":                 {1, -1, []Type{TUnknown}, sameAsFirst},
}

var aggregates = map[string]bool{"count": true, "sum": true, "min": true, "max": true, "avg": true,
	"string_agg": true, "bool_and": true, "bool_or": true, "every": true, "array_agg": true}

func (b *binder) bindFunc(x *sql.FuncCall) (Expr, error) {
	if x.Over != nil {
		return b.noSRF("!window function calls cannot contain set-returning function calls", func() (Expr, error) { return b.bindWindow(x) })
	}
	if windowOnly[x.Name] {
		return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "window function %s requires an OVER clause", x.Name)
	}
	if aggregates[x.Name] {
		return b.noSRF("!aggregate function calls cannot contain set-returning function calls", func() (Expr, error) { return b.bindAgg(x) })
	}
	if SetReturning[x.Name] && x.Filter == nil && len(x.Order) == 0 {
		return b.bindSRF(x)
	}
	if recordSRFs[x.Name] != nil {
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "%s returns records, which only FROM takes: SELECT ... FROM %s(...)", x.Name, x.Name)
	}
	if x.Filter != nil {
		return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "FILTER specified, but %s is not an aggregate function", x.Name)
	}
	if len(x.Order) > 0 {
		return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "ORDER BY specified, but %s is not an aggregate function", x.Name)
	}
	if x.Name == "pg_typeof" && len(x.Args) == 1 { // known when planning
		a, err := b.bind(x.Args[0], TUnknown)
		if err != nil {
			return nil, err
		}
		name := a.Type().String()
		if a.Type() == TNull {
			name = TUnknown.String()
		}
		return &ConstExpr{V: name, T: TText}, nil
	}
	sig, ok := Builtins[x.Name]
	if !ok {
		// Named with its argument types, as PostgreSQL does.
		var types []string
		for _, a := range x.Args {
			e, err := b.bind(a, TUnknown)
			if err != nil {
				return nil, err
			}
			t := e.Type()
			if isUntyped(e) {
				t = TUnknown
			}
			types = append(types, t.String())
		}
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, strings.Join(types, ", ")).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	if len(x.Args) < sig.min || (sig.max >= 0 && len(x.Args) > sig.max) {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
	}
	args := make([]Expr, len(x.Args))
	for i, a := range x.Args {
		want := sig.ArgType(i)
		var err error
		if args[i], err = b.bind(a, want); err != nil {
			return nil, err
		}
		if isUntyped(args[i]) {
			if args[i], err = coerce(args[i], TText); err != nil {
				return nil, err
			}
		}
		if want != TUnknown && args[i].Type() != want && args[i].Type() != TNull {
			at := args[i].Type()
			okCast := (want.IsNumeric() && at.IsNumeric()) || (want.IsText() && at.IsText()) || want == TText ||
				(want == TTimestamptz && at == TDate)
			if !okCast {
				return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, at).
					WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
			}
			if want != at {
				args[i] = &CastExpr{X: args[i], T: want}
			}
		}
	}
	if (x.Name == "substr" || x.Name == "substring") && len(args) > 0 {
		if at := args[0].Type(); !at.IsText() && at != TBytea && at != TNull {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, at).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
	}
	if volatileFuncs[x.Name] && b.scope != nil && b.scope.outerUse != nil {
		b.scope.outerUse.volatile = true
	}
	return &FuncExpr{Name: x.Name, Args: args, T: sig.result(args), Fn: sig}, nil
}

func (b *binder) bindAgg(x *sql.FuncCall) (Expr, error) {
	if !b.allowAgg {
		return nil, pgerror.Newf(pgerror.CodeGroupingError, "aggregate functions are not allowed here")
	}
	agg := &AggExpr{Name: x.Name, Distinct: x.Distinct}
	if x.Filter != nil {
		b.allowAgg = false
		f, err := b.bind(x.Filter, TBool)
		b.allowAgg = true
		if err != nil {
			return nil, err
		}
		if err := wantType(f, TBool, "argument of FILTER"); err != nil {
			return nil, err
		}
		agg.Filter = f
	}
	for i, o := range x.Order {
		b.allowAgg = false
		e, err := b.bind(o.Expr, TUnknown)
		b.allowAgg = true
		if err != nil {
			return nil, err
		}
		nf := o.Desc // PostgreSQL: NULLS FIRST for DESC, LAST for ASC
		if o.NullsFirst != nil {
			nf = *o.NullsFirst
		}
		agg.Order = append(agg.Order, e)
		agg.OrderBy = append(agg.OrderBy, SortKey{Idx: i, Desc: o.Desc, NullsFirst: nf})
	}
	if x.Star || (x.Name == "count" && len(x.Args) == 0) {
		if x.Name != "count" {
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "%s(*) is not valid", x.Name)
		}
		agg.T = TInt8
		b.aggs = append(b.aggs, agg)
		return agg, nil
	}
	nargs := 1
	if x.Name == "string_agg" {
		nargs = 2
	}
	if len(x.Args) != nargs {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
	}
	want := TUnknown
	switch x.Name {
	case "bool_and", "bool_or", "every":
		want = TBool
	case "string_agg":
		want = TText
	}
	b.allowAgg = b.argAggs
	b.argAggs = false
	arg, err := b.bind(x.Args[0], want)
	if err == nil && isUntyped(arg) {
		target := want
		if target == TUnknown {
			target = TText
		}
		arg, err = coerce(arg, target)
	}
	if err == nil && nargs == 2 {
		agg.Sep, err = b.bind(x.Args[1], arg.Type())
		if err == nil && isUntyped(agg.Sep) {
			agg.Sep, err = coerce(agg.Sep, arg.Type())
		}
	}
	b.allowAgg = true
	if err != nil {
		return nil, err
	}
	agg.Arg = arg
	switch x.Name {
	case "bool_and", "bool_or", "every":
		if err := wantType(arg, TBool, "argument of "+x.Name); err != nil {
			return nil, err
		}
		agg.T = TBool
	case "string_agg":
		t := arg.Type()
		if (t != TText && t != TBytea && !t.IsText()) || agg.Sep.Type() != t && agg.Sep.Type() != TNull {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function string_agg(%s, %s) does not exist", t, agg.Sep.Type())
		}
		agg.T = t
		if t.IsText() {
			agg.T = TText
		}
	case "array_agg":
		switch {
		case arg.Type() == TOid:
			agg.T = TOidArray
		case arg.Type().IsInt():
			agg.T = TInt8Array
		case arg.Type().IsText():
			agg.T = TTextArray
		case arg.Type() == TBool:
			agg.T = TBoolArray
		default:
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "array_agg(%s) is not supported", arg.Type())
		}
	case "count":
		agg.T = TInt8
	case "sum":
		if !arg.Type().IsNumeric() && arg.Type() != TInterval {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function sum(%s) does not exist", arg.Type())
		}
		// As in PostgreSQL: sum(smallint|integer) is a bigint,
		// sum(bigint) a numeric (it cannot overflow).
		agg.T = arg.Type()
		switch arg.Type() {
		case TInt2, TInt4:
			agg.T = TInt8
		case TInt8:
			agg.T = TNumeric
		}
	case "avg":
		if !arg.Type().IsNumeric() {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function avg(%s) does not exist", arg.Type())
		}
		agg.T = TNumeric // of integers and numerics, as in PostgreSQL
		if arg.Type() == TFloat8 {
			agg.T = TFloat8
		}
	default:
		agg.T = arg.Type()
	}
	b.aggs = append(b.aggs, agg)
	return agg, nil
}
