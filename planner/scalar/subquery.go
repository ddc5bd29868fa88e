package scalar

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// bindSubLink binds a subquery of an expression, which the statement
// planner plans (Env.Subquery): its type, and an IN's left operand.
func (b *Binder) bindSubLink(x *sql.SubLink) (plantree.Expr, error) {
	inner, outerCols, volatile, err := b.env.Subquery(x.Select)
	if err != nil {
		return nil, err
	}
	b.nsub++
	correlated := len(outerCols) > 0
	e := plantree.NewSubquery(b.nsub, plantree.SubqueryExpr{Kind: x.Kind, Plan: inner, Correlated: correlated, Volatile: volatile})
	e.OuterCols = outerCols
	switch x.Kind {
	case sql.SubExists:
		e.T = values.TBool
	case sql.SubScalar, sql.SubIn, sql.SubArray:
		if len(inner.Cols) != 1 {
			return nil, pgerror.New(pgerror.CodeSyntaxError, "subquery must return only one column")
		}
		e.T = inner.Cols[0].T
		if x.Kind == sql.SubArray {
			if e.T.ElemType() != values.TUnknown {
				return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "ARRAY (subquery) of %s is not supported", e.T)
			}
			e.T = values.ArrayOf(e.T)
		}
	}
	if x.Kind == sql.SubIn {
		ct := e.T
		if e.X, err = b.Bind(x.X, ct); err != nil {
			return nil, err
		}
		if IsUntyped(e.X) {
			if e.X, err = Coerce(e.X, ct); err != nil {
				return nil, err
			}
		}
		xt := e.X.Type()
		if !(xt == ct || xt.IsNumeric() && ct.IsNumeric() || xt.IsText() && ct.IsText() || xt == values.TNull || ct == values.TNull) {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", xt, ct)
		}
		e.T = values.TBool
	}
	if !correlated {
		b.Subqueries = append(b.Subqueries, e)
	}
	return e, nil
}
