package scalar

import (
	"strings"
	"topicgate/sql/values"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Set-returning functions: their calls, typed and marked (FuncExpr.Set)
// where the binder allows them (AllowSRF: the select list and ORDER BY,
// a function in FROM), refused with PostgreSQL's errors elsewhere. The
// statement planner lists them and the executor steps them (package
// planner's srf.go).

// setReturning lists the set-returning functions the select list may
// call; FROM takes them too, and the ones of several columns
// (recordSRFs), as a FuncScan (ReturnsSet).
var setReturning = map[string]bool{
	"unnest": true, "generate_series": true, "generate_subscripts": true,
	"jsonb_array_elements": true, "jsonb_array_elements_text": true, "jsonb_object_keys": true,
	"regexp_split_to_table": true,
}

// recordSRFs are the set-returning functions of several columns, which
// only FROM takes (the select list has no record type): their columns.
var recordSRFs = map[string][]plantree.Column{
	"jsonb_each_text": {{Name: "key", T: values.TText}, {Name: "value", T: values.TText}},
	"jsonb_each":      {{Name: "key", T: values.TText}, {Name: "value", T: values.TJSONB}},
}

// srfHint is PostgreSQL's hint for a set-returning function where only a
// scalar may be.
const srfHint = "You might be able to move the set-returning function into a LATERAL FROM item."

// noSRF binds with set-returning functions refused: where names the clause
// for the error message, or, starting with "!", is the whole message.
func (b *Binder) noSRF(where string, fn func() (plantree.Expr, error)) (plantree.Expr, error) {
	save, saveWhere := b.AllowSRF, b.SRFWhere
	b.AllowSRF, b.SRFWhere = false, where
	defer func() { b.AllowSRF, b.SRFWhere = save, saveWhere }()
	return fn()
}

// srfError is the error for a set-returning function call where b does
// not allow one, worded as PostgreSQL's check_srf_call_placement.
func (b *Binder) srfError() error {
	switch w := b.SRFWhere; {
	case w == "":
		return pgerror.New(pgerror.CodeFeatureNotSupported, "set-returning functions are not allowed here")
	case w[0] == '!':
		return pgerror.New(pgerror.CodeFeatureNotSupported, w[1:]).WithHint(srfHint)
	case w == "CASE" || w == "COALESCE":
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "set-returning functions are not allowed in %s", w).WithHint(srfHint)
	default:
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "set-returning functions are not allowed in %s", w)
	}
}

// BindSRF binds a call of a set-returning function: of the select list
// or ORDER BY, or a function in FROM (where AllowSRF is set for it).
func (b *Binder) BindSRF(x *sql.FuncCall) (plantree.Expr, error) {
	if !b.AllowSRF {
		return nil, b.srfError()
	}
	var args []plantree.Expr
	_, err := b.noSRF("!set-returning function calls in the arguments of a set-returning function are not supported", func() (plantree.Expr, error) {
		for _, a := range x.Args {
			e, err := b.Bind(a, values.TUnknown)
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	f := &plantree.FuncExpr{Name: x.Name, Args: args, Set: true}
	types := make([]string, len(args))
	for i, a := range args {
		types[i] = argTypeName(a)
	}
	noFunc := func() error { return undefinedFunc(x.Name, types) }
	// cast converts argument i to t as a function argument: 42883 if no
	// overload takes it, a literal's own error if it does not read as t.
	cast := func(i int, t values.Type) error {
		e, err := argCast(args[i], t)
		if err == errNoOverload {
			return noFunc()
		}
		if err != nil {
			return pgerror.At(err, sql.ExprPos(x.Args[i]))
		}
		args[i] = e
		return nil
	}
	switch x.Name {
	case "unnest":
		if len(args) != 1 {
			return nil, noFunc()
		}
		if IsUntyped(args[0]) {
			return nil, pgerror.New(pgerror.CodeAmbiguousFunction, "function unnest(unknown) is not unique").
				WithHint("Could not choose a best candidate function. You might need to add explicit type casts.")
		}
		if f.T = args[0].Type().ElemType(); f.T == values.TUnknown {
			return nil, noFunc()
		}
	case "generate_series":
		if len(args) < 2 || len(args) > 3 {
			return nil, noFunc()
		}
		untyped := true
		for _, a := range args {
			untyped = untyped && IsUntyped(a)
		}
		if untyped {
			return nil, pgerror.Newf(pgerror.CodeAmbiguousFunction, "function generate_series(%s) is not unique", strings.Join(types, ", ")).
				WithHint("Could not choose a best candidate function. You might need to add explicit type casts.")
		}
		if f.T, err = seriesType(args); err != nil {
			return nil, noFunc()
		}
		for i := range args {
			want := f.T
			if i == 2 && f.T == values.TTimestamptz {
				want = values.TInterval
			}
			if err := cast(i, want); err != nil {
				return nil, err
			}
		}
	case "generate_subscripts":
		if len(args) < 2 || len(args) > 3 || IsUntyped(args[0]) || args[0].Type().ElemType() == values.TUnknown {
			return nil, noFunc()
		}
		want := []values.Type{args[0].Type(), values.TInt4, values.TBool}
		for i := 1; i < len(args); i++ {
			if err := cast(i, want[i]); err != nil {
				return nil, err
			}
		}
		f.T = values.TInt4
	case "jsonb_array_elements", "jsonb_array_elements_text", "jsonb_object_keys", "jsonb_each", "jsonb_each_text":
		if len(args) != 1 {
			return nil, noFunc()
		}
		if err := cast(0, values.TJSONB); err != nil {
			return nil, err
		}
		f.T = values.TText // jsonb_each's: the value's type (FuncScan has both columns)
		if x.Name == "jsonb_array_elements" || x.Name == "jsonb_each" {
			f.T = values.TJSONB
		}
	case "regexp_split_to_table":
		if len(args) < 2 || len(args) > 3 {
			return nil, noFunc()
		}
		for i := range args {
			if err := cast(i, values.TText); err != nil {
				return nil, err
			}
		}
		f.T = values.TText
	}
	return f, nil
}

// seriesType resolves generate_series's overload from its arguments:
// integers (int4, or int8 if any is), numeric, or timestamptz with an
// interval step (dates take it too, as in PostgreSQL).
func seriesType(args []plantree.Expr) (values.Type, error) {
	t := values.TUnknown
	for i, a := range args {
		if IsUntyped(a) || a.Type() == values.TNull {
			continue
		}
		at := a.Type()
		if at == values.TDate {
			at = values.TTimestamptz
		}
		switch {
		case i == 2 && t == values.TTimestamptz:
			if at != values.TInterval {
				return 0, errNoOverload
			}
		case at == values.TTimestamptz:
			if t != values.TUnknown && t != values.TTimestamptz {
				return 0, errNoOverload
			}
			t = values.TTimestamptz
		case at == values.TInt2 || at == values.TInt4:
			if t == values.TUnknown {
				t = values.TInt4
			}
		case at == values.TInt8:
			if t == values.TUnknown || t == values.TInt4 {
				t = values.TInt8
			}
		case at == values.TNumeric:
			if t == values.TUnknown || t.IsInt() {
				t = values.TNumeric
			}
		default:
			return 0, errNoOverload
		}
		if t == values.TTimestamptz && at != values.TTimestamptz && at != values.TInterval {
			return 0, errNoOverload
		}
	}
	if t == values.TUnknown {
		t = values.TInt4 // generate_series(NULL, '3', 1) resolves to the integer overload
	}
	if t == values.TTimestamptz && len(args) != 3 {
		return 0, errNoOverload
	}
	return t, nil
}

var errNoOverload = pgerror.New(pgerror.CodeUndefinedFunction, "no overload")

// argCast converts a to t, implicitly as PostgreSQL would for a function
// argument: an untyped literal or parameter takes t, a numeric widens, a
// date becomes a timestamptz; anything else is an error.
func argCast(a plantree.Expr, t values.Type) (plantree.Expr, error) {
	if IsUntyped(a) {
		return Coerce(a, t)
	}
	at := a.Type()
	switch {
	case at == t || at == values.TNull:
		return a, nil
	case at.IsNumeric() && t.IsNumeric() && plantree.RankOf(at) <= plantree.RankOf(t):
		return &plantree.CastExpr{X: a, T: t}, nil
	case at.IsText() && t == values.TText:
		return &plantree.CastExpr{X: a, T: t}, nil
	case at == values.TDate && t == values.TTimestamptz:
		return &plantree.CastExpr{X: a, T: t}, nil
	}
	return nil, errNoOverload
}

// argTypeName names e's type in an error as PostgreSQL does: an untyped
// literal or NULL is unknown.
func argTypeName(e plantree.Expr) string {
	if IsUntyped(e) {
		return values.TUnknown.String()
	}
	return e.Type().String()
}

// undefinedFunc is 42883 for a call no overload takes.
func undefinedFunc(name string, types []string) error {
	list := ""
	for i, t := range types {
		if i > 0 {
			list += ", "
		}
		list += t
	}
	return pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s) does not exist", name, list).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// ReturnsSet reports whether the function name returns a set: FROM
// takes it as a function scan (its columns: RecordColumns, else one).
func ReturnsSet(name string) bool { return setReturning[name] || recordSRFs[name] != nil }

// RecordColumns is the columns of a set-returning function of several
// columns, which only FROM takes; nil for any other function.
func RecordColumns(name string) []plantree.Column { return recordSRFs[name] }
