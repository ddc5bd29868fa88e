package planner

import (
	"math"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// binder type-checks AST expressions into planner expressions. It reaches
// the statement planner only through env: the columns a name may reach,
// subqueries, the topics 'name'::regclass may name.
type binder struct {
	params      *[]Type
	env         bindEnv
	scope       *Scope // for the statement planner's own use (bindOrderRef), not binding's
	allowAgg    bool
	argAggs     bool // an aggregate's arguments may hold aggregates (a window aggregate's, over grouped rows)
	aggs        []*plantree.AggExpr
	allowWindow bool
	wins        []*plantree.WindowExpr
	allowSRF    bool                     // set-returning functions allowed (the select list, ORDER BY)
	srfWhere    string                   // else the clause named in the error (srfError)
	subs        []*plantree.SubqueryExpr // the subqueries bound, for SelectPlan.Subqueries
	nsub        int
}

// bindEnv is what binding needs from the statement planner around it.
type bindEnv interface {
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

// newBinder returns a binder over scope (nil for no columns); cat, when
// not nil, lets the expressions hold subqueries.
func newBinder(params *[]Type, scope *Scope, cat Catalog) *binder {
	return &binder{params: params, env: &scopeEnv{scope: scope, cat: cat, params: params}, scope: scope}
}

func (b *binder) param(n int) *plantree.ParamExpr {
	for len(*b.params) < n {
		*b.params = append(*b.params, TUnknown)
	}
	return plantree.NewParam(n-1, b.params)
}

// bind binds e; want (may be TUnknown) is the type the context expects,
// used to type parameters and untyped literals.
func (b *binder) bind(e sql.Expr, want Type) (plantree.Expr, error) {
	x, err := b.bind0(e, want)
	if err == nil && want != TUnknown && isUntyped(x) {
		x, err = coerce(x, want)
	}
	if err != nil {
		return nil, pgerror.At(err, sql.ExprPos(e))
	}
	return x, nil
}

func isUntyped(e plantree.Expr) bool {
	switch x := e.(type) {
	case *plantree.ParamExpr:
		return x.Type() == TUnknown
	case *plantree.ConstExpr:
		return x.T == TUnknown || x.T == TNull
	}
	return false
}

// coerce gives an untyped expression type t.
func coerce(e plantree.Expr, t Type) (plantree.Expr, error) {
	switch x := e.(type) {
	case *plantree.ParamExpr:
		if x.Type() == TUnknown {
			x.Infer(t)
		}
		return x, nil
	case *plantree.ConstExpr:
		if x.V == nil {
			return &plantree.ConstExpr{V: nil, T: t}, nil
		}
		if x.T == TUnknown {
			if (t == TDate || t == TTimestamptz) && values.DateOrderMatters(x.V.(string)) {
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
func (b *binder) bind0(e sql.Expr, want Type) (plantree.Expr, error) {
	switch x := e.(type) {
	case *sql.ColumnRef:
		return b.env.Column(x)
	case *sql.Const:
		return constExpr(x.Lit)
	case *sql.ParamRef:
		return b.param(x.N), nil
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
		inner, err := b.bind(x.X, TUnknown)
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

func constExpr(l sql.Literal) (plantree.Expr, error) {
	switch l.Kind {
	case sql.LitNull:
		return &plantree.ConstExpr{V: nil, T: TNull}, nil
	case sql.LitInt:
		// As in PostgreSQL, an integer literal is an integer (int4) when
		// it fits, else a bigint.
		if l.Int >= math.MinInt32 && l.Int <= math.MaxInt32 {
			return &plantree.ConstExpr{V: l.Int, T: TInt4}, nil
		}
		return &plantree.ConstExpr{V: l.Int, T: TInt8}, nil
	case sql.LitFloat:
		// 1.5 and 1e3 are numeric in PostgreSQL.
		d, err := values.ParseNumeric(l.Str)
		if err != nil {
			return nil, err
		}
		return &plantree.ConstExpr{V: d, T: TNumeric}, nil
	case sql.LitString:
		return &plantree.ConstExpr{V: l.Str, T: TUnknown}, nil
	case sql.LitBool:
		return &plantree.ConstExpr{V: l.Bool, T: TBool}, nil
	case sql.LitInterval:
		return &plantree.ConstExpr{V: l.Dur, T: TInterval}, nil
	case sql.LitTime:
		return &plantree.ConstExpr{V: l.Time, T: TTimestamptz}, nil
	case sql.LitIdent:
		return nil, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" does not exist", l.Str)
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "literal kind %d is not supported here", l.Kind)
}

func wantType(e plantree.Expr, t Type, what string) error {
	if e.Type() == t || e.Type() == TNull || e.Type() == TUnknown {
		return nil
	}
	return pgerror.Newf(pgerror.CodeDatatypeMismatch, "%s must be type %s, not type %s", what, t, e.Type())
}

// comparable reports whether values of l's and r's types can be compared.
func comparable(l, r plantree.Expr, op string) error {
	lt, rt := l.Type(), r.Type()
	if lt == rt || lt == TUnknown || rt == TUnknown || lt == TNull || rt == TNull {
		return nil
	}
	if lt.IsNumeric() && rt.IsNumeric() || lt.IsText() && rt.IsText() {
		return nil
	}
	if (lt == TJSONB || lt == TJSON) && (rt == TJSONB || rt == TJSON) {
		return nil
	}
	if (lt == TDate || lt == TTimestamptz) && (rt == TDate || rt == TTimestamptz) {
		return nil // a date compares as its midnight (UTC)
	}
	return pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt).
		WithHint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}
