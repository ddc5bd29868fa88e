package planner

import (
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// funcSig describes a builtin's argument types (for inference) and result.
type funcSig struct {
	min, max int    // argument count bounds; max -1 = variadic
	args     []Type // expected types for inference; TUnknown = any; last repeats
	result   func(args []Expr) Type
}

func fixed(t Type) func([]Expr) Type { return func([]Expr) Type { return t } }

func sameAsFirst(args []Expr) Type {
	if len(args) == 0 || args[0].Type() == TUnknown {
		return TText
	}
	return args[0].Type()
}

// Builtins lists the scalar functions the executor implements (the
// executor's table must have the same names; a test checks it).
var Builtins = map[string]funcSig{
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
	"round":                 {1, 2, []Type{TFloat8, TInt8}, fixed(TFloat8)},
	"floor":                 {1, 1, []Type{TFloat8}, fixed(TFloat8)},
	"ceil":                  {1, 1, []Type{TFloat8}, fixed(TFloat8)},
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

var aggregates = map[string]bool{"count": true, "sum": true, "min": true, "max": true, "avg": true}

func (b *binder) bindFunc(x *sql.FuncCall) (Expr, error) {
	if aggregates[x.Name] {
		return b.bindAgg(x)
	}
	sig, ok := Builtins[x.Name]
	if !ok {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not exist", x.Name)
	}
	if len(x.Args) < sig.min || (sig.max >= 0 && len(x.Args) > sig.max) {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
	}
	args := make([]Expr, len(x.Args))
	for i, a := range x.Args {
		want := TUnknown
		if len(sig.args) > 0 {
			want = sig.args[min(i, len(sig.args)-1)]
		}
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
			okCast := (want.IsNumeric() && at.IsNumeric()) || (want.IsText() && at.IsText()) || want == TText
			if !okCast {
				return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, at).
					WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
			}
			if want != at {
				args[i] = &CastExpr{X: args[i], T: want}
			}
		}
	}
	return &FuncExpr{Name: x.Name, Args: args, T: sig.result(args)}, nil
}

func (b *binder) bindAgg(x *sql.FuncCall) (Expr, error) {
	if !b.allowAgg {
		return nil, pgerror.Newf(pgerror.CodeGroupingError, "aggregate functions are not allowed here")
	}
	agg := &AggExpr{Name: x.Name, Distinct: x.Distinct}
	if x.Star || (x.Name == "count" && len(x.Args) == 0) {
		if x.Name != "count" {
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "%s(*) is not valid", x.Name)
		}
		agg.T = TInt8
		b.aggs = append(b.aggs, agg)
		return agg, nil
	}
	if len(x.Args) != 1 {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
	}
	b.allowAgg = false
	arg, err := b.bind(x.Args[0], TUnknown)
	b.allowAgg = true
	if err != nil {
		return nil, err
	}
	agg.Arg = arg
	switch x.Name {
	case "count":
		agg.T = TInt8
	case "sum":
		if !arg.Type().IsNumeric() && arg.Type() != TInterval {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function sum(%s) does not exist", arg.Type())
		}
		agg.T = arg.Type()
		if arg.Type().IsInt() {
			agg.T = TInt8
		}
	case "avg":
		if !arg.Type().IsNumeric() {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function avg(%s) does not exist", arg.Type())
		}
		agg.T = TFloat8
	default:
		agg.T = arg.Type()
	}
	b.aggs = append(b.aggs, agg)
	return agg, nil
}
