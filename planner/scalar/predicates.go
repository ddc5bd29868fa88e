package scalar

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/values"
)

// Predicates: IN, BETWEEN, IS [NOT] TRUE/FALSE/UNKNOWN and
// op ANY/ALL (array).

// bindInList binds x [NOT] IN (list): the items take x's type, an untyped
// x the first item's.
func (b *Binder) bindInList(x *sql.InList) (plantree.Expr, error) {
	l, err := b.Bind(x.X, values.TUnknown)
	if err != nil {
		return nil, err
	}
	list := make([]plantree.Expr, len(x.List))
	for i, it := range x.List {
		if list[i], err = b.Bind(it, l.Type()); err != nil {
			return nil, err
		}
		if err := Comparable(l, list[i], "IN"); err != nil {
			return nil, err
		}
	}
	if IsUntyped(l) && len(list) > 0 {
		if l, err = Coerce(l, list[0].Type()); err != nil {
			return nil, err
		}
	}
	return &plantree.InExpr{X: l, List: list, Not: x.Not}, nil
}

// bindBetween binds x [NOT] BETWEEN lo AND hi as x >= lo AND x <= hi.
func (b *Binder) bindBetween(x *sql.Between) (plantree.Expr, error) {
	l, err := b.Bind(x.X, values.TUnknown)
	if err != nil {
		return nil, err
	}
	lo, err := b.Bind(x.Lo, l.Type())
	if err != nil {
		return nil, err
	}
	hi, err := b.Bind(x.Hi, l.Type())
	if err != nil {
		return nil, err
	}
	var out plantree.Expr = &plantree.LogicExpr{And: true, Args: []plantree.Expr{&plantree.CmpExpr{Op: ">=", L: l, R: lo}, &plantree.CmpExpr{Op: "<=", L: l, R: hi}}}
	if x.Not {
		out = &plantree.NotExpr{X: out}
	}
	return out, nil
}

// bindIsBool binds x IS [NOT] TRUE, FALSE or UNKNOWN (IS NULL of a
// boolean).
func (b *Binder) bindIsBool(x *sql.IsBool) (plantree.Expr, error) {
	inner, err := b.Bind(x.X, values.TBool)
	if err != nil {
		return nil, err
	}
	if x.Unknown { // a boolean's third value is NULL
		if IsUntyped(inner) {
			if inner, err = Coerce(inner, values.TBool); err != nil {
				return nil, err
			}
		}
		if err := WantType(inner, values.TBool, "argument of IS UNKNOWN"); err != nil {
			return nil, err
		}
		return &plantree.IsNullExpr{X: inner, Not: x.Not}, nil
	}
	return &plantree.IsBoolExpr{X: inner, Value: x.Value, Not: x.Not}, nil
}

// bindAnyAll binds x op ANY/ALL (array): the array is of x's type, an
// untyped x takes the array's element type.
func (b *Binder) bindAnyAll(x *sql.AnyAll) (plantree.Expr, error) {
	l, err := b.Bind(x.X, values.TUnknown)
	if err != nil {
		return nil, err
	}
	arrWant := values.TUnknown
	if l.Type() != values.TUnknown {
		arrWant = values.ArrayOf(l.Type())
	}
	var arr plantree.Expr
	if lit, ok := x.Array.(*sql.ArrayLit); ok {
		arr, err = b.bindArray(lit, l.Type())
	} else {
		arr, err = b.Bind(x.Array, arrWant)
	}
	if err != nil {
		return nil, err
	}
	if IsUntyped(l) && arr.Type() != values.TUnknown {
		if l, err = Coerce(l, arr.Type().ElemType()); err != nil {
			return nil, err
		}
	}
	return &plantree.AnyExpr{Op: x.Op, X: l, Array: arr, All: x.All}, nil
}
