package scalar

import (
	"math"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Binder type-checks the expressions of a statement's clauses into
// plantree's bound expressions. The statement planner says, clause by
// clause, what the expressions may call (aggregates, window functions,
// set-returning functions) and reads back what they called. It reaches
// the statement planner only through env: the columns a name may reach,
// subqueries, the topics 'name'::regclass may name.
type Binder struct {
	// AllowAgg, AllowWindow and AllowSRF allow aggregates, window
	// functions and set-returning functions (the select list and ORDER
	// BY) in what is bound next; SRFWhere names the clause for the error
	// of a set-returning function where they are not allowed (srfError).
	AllowAgg, AllowWindow, AllowSRF bool
	SRFWhere                        string
	// Aggs, Windows and Subqueries collect the aggregate calls, the
	// window calls and the uncorrelated subqueries bound (for the
	// grouping's rewrite, the placing of windows and
	// SelectPlan.Subqueries).
	Aggs       []*plantree.AggExpr
	Windows    []*plantree.WindowExpr
	Subqueries []*plantree.SubqueryExpr

	params  *[]values.Type
	env     Env
	argAggs bool // an aggregate's arguments may hold aggregates (a window aggregate's, over grouped rows)
	nsub    int
}

// NewBinder returns a binder that types parameter $n as (*params)[n-1],
// growing params as the expressions name more, and reaches the statement
// planner through env (not nil).
func NewBinder(params *[]values.Type, env Env) *Binder { return &Binder{params: params, env: env} }

// Env is what binding needs from the statement planner around it.
type Env interface {
	// Column binds a column reference: a column of the row, or an
	// OuterRef to the row around (a correlated subquery, a lateral item).
	Column(x *sql.ColumnRef) (plantree.Expr, error)
	// Subquery plans a subquery of an expression, with the binder's
	// columns as the ones around it: its plan, the columns of the row
	// around that it reads (ascending; none if it is not correlated), and
	// whether it calls a volatile function.
	Subquery(sel *sql.Select) (plan *plantree.SelectPlan, outerCols []int, volatile bool, err error)
	// CallsVolatile records that the expression calls a volatile
	// function (a subquery's result is then not reused).
	CallsVolatile()
	// Topics is what 'name'::regclass looks names up in: nil where
	// there is no catalog (the name then must be a number).
	Topics() catalog.Topics
}

// Param is parameter $n, its type inferred from where it is used unless
// the client declared it.
func (b *Binder) Param(n int) *plantree.ParamExpr {
	for len(*b.params) < n {
		*b.params = append(*b.params, values.TUnknown)
	}
	return plantree.NewParam(n-1, b.params)
}

// Bind binds e; want (may be values.TUnknown) is the type the context expects,
// used to type parameters and untyped literals.
func (b *Binder) Bind(e sql.Expr, want values.Type) (plantree.Expr, error) {
	x, err := b.bind0(e, want)
	if err == nil && want != values.TUnknown && IsUntyped(x) {
		x, err = Coerce(x, want)
	}
	if err != nil {
		return nil, pgerror.At(err, sql.ExprPos(e))
	}
	return x, nil
}

// IsUntyped reports whether e has no type yet: a string literal, NULL,
// or a parameter whose type is still unknown.
func IsUntyped(e plantree.Expr) bool {
	switch x := e.(type) {
	case *plantree.ParamExpr:
		return x.Type() == values.TUnknown
	case *plantree.ConstExpr:
		return x.T == values.TUnknown || x.T == values.TNull
	}
	return false
}

// Coerce gives an untyped expression type t.
func Coerce(e plantree.Expr, t values.Type) (plantree.Expr, error) {
	switch x := e.(type) {
	case *plantree.ParamExpr:
		if x.Type() == values.TUnknown {
			x.Infer(t)
		}
		return x, nil
	case *plantree.ConstExpr:
		if x.V == nil {
			return &plantree.ConstExpr{V: nil, T: t}, nil
		}
		if x.T == values.TUnknown {
			if (t == values.TDate || t == values.TTimestamptz) && values.DateOrderMatters(x.V.(string)) {
				// '01/02/2024' reads in the session's DateStyle, known
				// when the statement runs.
				return &plantree.CastExpr{X: x, T: t}, nil
			}
			v, err := values.ParseText(x.V.(string), t)
			if err != nil {
				return nil, err
			}
			return &plantree.ConstExpr{V: v, T: t}, nil
		}
	}
	return e, nil
}

// bind0 binds e by its kind; bind adds the context's type to untyped
// results and the error position.
func (b *Binder) bind0(e sql.Expr, want values.Type) (plantree.Expr, error) {
	switch x := e.(type) {
	case *sql.ColumnRef:
		return b.env.Column(x)
	case *sql.Const:
		return Const(x.Lit)
	case *sql.ParamRef:
		return b.Param(x.N), nil
	case *sql.Cast:
		return b.bindCast(x)
	case *sql.Collate:
		return b.bindCollate(x, want)
	case *sql.BinOp:
		return b.bindBinOp(x)
	case *sql.UnaryOp:
		return b.bindUnaryOp(x, want)
	case *sql.FuncCall:
		return b.bindFunc(x)
	case *sql.InList:
		return b.bindInList(x)
	case *sql.Between:
		return b.bindBetween(x)
	case *sql.IsNull:
		inner, err := b.Bind(x.X, values.TUnknown)
		if err != nil {
			return nil, err
		}
		return &plantree.IsNullExpr{X: inner, Not: x.Not}, nil
	case *sql.IsBool:
		return b.bindIsBool(x)
	case *sql.AnyAll:
		return b.bindAnyAll(x)
	case *sql.ArrayLit:
		return b.bindArray(x, want.ElemType())
	case *sql.Subscript:
		return b.bindSubscript(x)
	case *sql.Case:
		return b.noSRF("CASE", func() (plantree.Expr, error) { return b.bindCase(x, want) })
	case *sql.Coalesce:
		return b.bindCoalesce(x, want)
	case *sql.NullIf:
		return b.bindNullIf(x, want)
	case *sql.Default:
		// DEFAULT in VALUES: the column is absent for this row.
		return &plantree.ConstExpr{V: nil, T: want}, nil
	case *sql.Star:
		return nil, pgerror.New(pgerror.CodeSyntaxError, "* is only allowed in a select list or count(*)")
	case *sql.SubLink:
		return b.bindSubLink(x)
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "expression %T is not supported", e)
}

// Const binds a literal: an integer is an int4 when it fits (else an
// int8), a number with a fraction or exponent a numeric, a string is
// untyped until its context types it.
func Const(l sql.Literal) (plantree.Expr, error) {
	switch l.Kind {
	case sql.LitNull:
		return &plantree.ConstExpr{V: nil, T: values.TNull}, nil
	case sql.LitInt:
		// As in PostgreSQL, an integer literal is an integer (int4) when
		// it fits, else a bigint.
		if l.Int >= math.MinInt32 && l.Int <= math.MaxInt32 {
			return &plantree.ConstExpr{V: l.Int, T: values.TInt4}, nil
		}
		return &plantree.ConstExpr{V: l.Int, T: values.TInt8}, nil
	case sql.LitFloat:
		// 1.5 and 1e3 are numeric in PostgreSQL.
		d, err := values.ParseNumeric(l.Str)
		if err != nil {
			return nil, err
		}
		return &plantree.ConstExpr{V: d, T: values.TNumeric}, nil
	case sql.LitString:
		return &plantree.ConstExpr{V: l.Str, T: values.TUnknown}, nil
	case sql.LitBool:
		return &plantree.ConstExpr{V: l.Bool, T: values.TBool}, nil
	case sql.LitInterval:
		return &plantree.ConstExpr{V: l.Dur, T: values.TInterval}, nil
	case sql.LitTime:
		return &plantree.ConstExpr{V: l.Time, T: values.TTimestamptz}, nil
	case sql.LitIdent:
		return nil, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist", l.Str)
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "literal kind %d is not supported here", l.Kind)
}

// WantType is 42804 unless e is of type t (or NULL, or untyped); what
// names e in the message ("argument of WHERE").
func WantType(e plantree.Expr, t values.Type, what string) error {
	if e.Type() == t || e.Type() == values.TNull || e.Type() == values.TUnknown {
		return nil
	}
	return pgerror.Newf(pgerror.CodeDatatypeMismatch, "%s must be type %s, not type %s", what, t, e.Type())
}

// Comparable is nil when values of l's and r's types can be compared
// (by op, for the message), else 42883.
func Comparable(l, r plantree.Expr, op string) error {
	lt, rt := l.Type(), r.Type()
	if lt == rt || lt == values.TUnknown || rt == values.TUnknown || lt == values.TNull || rt == values.TNull {
		return nil
	}
	if lt.IsNumeric() && rt.IsNumeric() || lt.IsText() && rt.IsText() {
		return nil
	}
	if (lt == values.TJSONB || lt == values.TJSON) && (rt == values.TJSONB || rt == values.TJSON) {
		return nil
	}
	if (lt == values.TDate || lt == values.TTimestamptz) && (rt == values.TDate || rt == values.TTimestamptz) {
		return nil // a date compares as its midnight (UTC)
	}
	return pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}
