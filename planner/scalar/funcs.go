package scalar

import (
	"strings"
	"topicgate/sql/values"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// volatileFuncs return a new value at every call.
var volatileFuncs = map[string]bool{"clock_timestamp": true, "gen_random_uuid": true}

var aggregates = map[string]bool{"count": true, "sum": true, "min": true, "max": true, "avg": true,
	"string_agg": true, "bool_and": true, "bool_or": true, "every": true, "array_agg": true}

// IsAggregate reports whether the function name is an aggregate.
func IsAggregate(name string) bool { return aggregates[name] }

func (b *Binder) bindFunc(x *sql.FuncCall) (plantree.Expr, error) {
	if x.Over != nil {
		return b.noSRF("!window function calls cannot contain set-returning function calls", func() (plantree.Expr, error) { return b.bindWindow(x) })
	}
	if windowOnly[x.Name] {
		return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "window function %s requires an OVER clause", x.Name)
	}
	if aggregates[x.Name] {
		return b.noSRF("!aggregate function calls cannot contain set-returning function calls", func() (plantree.Expr, error) { return b.bindAgg(x) })
	}
	if setReturning[x.Name] && x.Filter == nil && len(x.Order) == 0 {
		return b.BindSRF(x)
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
		a, err := b.Bind(x.Args[0], values.TUnknown)
		if err != nil {
			return nil, err
		}
		name := a.Type().String()
		if a.Type() == values.TNull {
			name = values.TUnknown.String()
		}
		return &plantree.ConstExpr{V: name, T: values.TText}, nil
	}
	sig, ok := catalog.Builtins[x.Name]
	if !ok {
		// Named with its argument types, as PostgreSQL does.
		var types []string
		for _, a := range x.Args {
			e, err := b.Bind(a, values.TUnknown)
			if err != nil {
				return nil, err
			}
			t := e.Type()
			if IsUntyped(e) {
				t = values.TUnknown
			}
			types = append(types, t.String())
		}
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, strings.Join(types, ", ")).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	if len(x.Args) < sig.Min() || (sig.Max() >= 0 && len(x.Args) > sig.Max()) {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
	}
	args := make([]plantree.Expr, len(x.Args))
	for i, a := range x.Args {
		want := sig.ArgType(i)
		var err error
		if args[i], err = b.Bind(a, want); err != nil {
			return nil, err
		}
		if IsUntyped(args[i]) {
			if args[i], err = Coerce(args[i], values.TText); err != nil {
				return nil, err
			}
		}
		if want != values.TUnknown && args[i].Type() != want && args[i].Type() != values.TNull {
			at := args[i].Type()
			okCast := (want.IsNumeric() && at.IsNumeric()) || (want.IsText() && at.IsText()) || want == values.TText ||
				(want == values.TTimestamptz && at == values.TDate)
			if !okCast {
				return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, at).
					WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
			}
			if want != at {
				args[i] = &plantree.CastExpr{X: args[i], T: want}
			}
		}
	}
	if x.Name == "format" {
		// format's values print as their type's output: a date as a date,
		// a timestamptz in the session's TimeZone.
		for i := 1; i < len(args); i++ {
			if t := args[i].Type(); t == values.TDate || t == values.TTimestamptz {
				args[i] = &plantree.CastExpr{X: args[i], T: values.TText}
			}
		}
	}
	if (x.Name == "substr" || x.Name == "substring") && len(args) > 0 {
		if at := args[0].Type(); !at.IsText() && at != values.TBytea && at != values.TNull {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", x.Name, at).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
	}
	if volatileFuncs[x.Name] {
		b.env.CallsVolatile()
	}
	argTypes := make([]values.Type, len(args))
	for i, a := range args {
		argTypes[i] = a.Type()
	}
	return &plantree.FuncExpr{Name: x.Name, Args: args, T: sig.Result(argTypes), Fn: sig}, nil
}

func (b *Binder) bindAgg(x *sql.FuncCall) (plantree.Expr, error) {
	if !b.AllowAgg {
		return nil, pgerror.Newf(pgerror.CodeGroupingError, "aggregate functions are not allowed here")
	}
	agg := &plantree.AggExpr{Name: x.Name, Distinct: x.Distinct}
	if x.Filter != nil {
		b.AllowAgg = false
		f, err := b.Bind(x.Filter, values.TBool)
		b.AllowAgg = true
		if err != nil {
			return nil, err
		}
		if err := WantType(f, values.TBool, "argument of FILTER"); err != nil {
			return nil, err
		}
		agg.Filter = f
	}
	for i, o := range x.Order {
		b.AllowAgg = false
		e, err := b.Bind(o.Expr, values.TUnknown)
		b.AllowAgg = true
		if err != nil {
			return nil, err
		}
		nf := o.Desc // PostgreSQL: NULLS FIRST for DESC, LAST for ASC
		if o.NullsFirst != nil {
			nf = *o.NullsFirst
		}
		agg.Order = append(agg.Order, e)
		agg.OrderBy = append(agg.OrderBy, plantree.SortKey{Idx: i, Desc: o.Desc, NullsFirst: nf})
	}
	if x.Star || (x.Name == "count" && len(x.Args) == 0) {
		if x.Name != "count" {
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "%s(*) is not valid", x.Name)
		}
		agg.T = values.TInt8
		b.Aggs = append(b.Aggs, agg)
		return agg, nil
	}
	nargs := 1
	if x.Name == "string_agg" {
		nargs = 2
	}
	if len(x.Args) != nargs {
		return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
	}
	want := values.TUnknown
	switch x.Name {
	case "bool_and", "bool_or", "every":
		want = values.TBool
	case "string_agg":
		want = values.TText
	}
	b.AllowAgg = b.argAggs
	b.argAggs = false
	arg, err := b.Bind(x.Args[0], want)
	if err == nil && IsUntyped(arg) {
		target := want
		if target == values.TUnknown {
			target = values.TText
		}
		arg, err = Coerce(arg, target)
	}
	if err == nil && nargs == 2 {
		agg.Sep, err = b.Bind(x.Args[1], arg.Type())
		if err == nil && IsUntyped(agg.Sep) {
			agg.Sep, err = Coerce(agg.Sep, arg.Type())
		}
	}
	b.AllowAgg = true
	if err != nil {
		return nil, err
	}
	agg.Arg = arg
	switch x.Name {
	case "bool_and", "bool_or", "every":
		if err := WantType(arg, values.TBool, "argument of "+x.Name); err != nil {
			return nil, err
		}
		agg.T = values.TBool
	case "string_agg":
		t := arg.Type()
		if (t != values.TText && t != values.TBytea && !t.IsText()) || agg.Sep.Type() != t && agg.Sep.Type() != values.TNull {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function string_agg(%s, %s) does not exist", t, agg.Sep.Type())
		}
		agg.T = t
		if t.IsText() {
			agg.T = values.TText
		}
	case "array_agg":
		switch {
		case arg.Type() == values.TOid:
			agg.T = values.TOidArray
		case arg.Type().IsInt():
			agg.T = values.TInt8Array
		case arg.Type().IsText():
			agg.T = values.TTextArray
		case arg.Type() == values.TBool:
			agg.T = values.TBoolArray
		default:
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "array_agg(%s) is not supported", arg.Type())
		}
	case "count":
		agg.T = values.TInt8
	case "sum":
		if !arg.Type().IsNumeric() && arg.Type() != values.TInterval {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function sum(%s) does not exist", arg.Type())
		}
		// As in PostgreSQL: sum(smallint|integer) is a bigint,
		// sum(bigint) a numeric (it cannot overflow).
		agg.T = arg.Type()
		switch arg.Type() {
		case values.TInt2, values.TInt4:
			agg.T = values.TInt8
		case values.TInt8:
			agg.T = values.TNumeric
		}
	case "avg":
		if !arg.Type().IsNumeric() {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function avg(%s) does not exist", arg.Type())
		}
		agg.T = values.TNumeric // of integers and numerics, as in PostgreSQL
		if arg.Type() == values.TFloat8 {
			agg.T = values.TFloat8
		}
	default:
		agg.T = arg.Type()
	}
	b.Aggs = append(b.Aggs, agg)
	return agg, nil
}
