package planner

import (
	"errors"
	"sort"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// The statement planner's side of binding expressions (package scalar's):
// the binder of a clause, with the scope it binds in, and scopeEnv, the
// binder's way back to the scope, subqueries and the catalog.

// binder is a scalar.Binder with the scope it binds in, which the
// statement planner's own lookups read (bindOrderRef).
type binder struct {
	*scalar.Binder
	scope *Scope
}

// newBinder returns a binder over scope (nil for no columns); cat, when
// not nil, lets the expressions hold subqueries.
func newBinder(params *[]Type, scope *Scope, cat Catalog) *binder {
	return &binder{Binder: scalar.NewBinder(params, &scopeEnv{scope: scope, cat: cat, params: params}), scope: scope}
}

// scopeEnv is the binder's way back to the statement planner
// (scalar.Env): scope's columns, and with cat subqueries and regclass
// names.
type scopeEnv struct {
	scope  *Scope
	cat    Catalog // nil where subqueries are not allowed
	params *[]Type
}

func (e *scopeEnv) Column(x *sql.ColumnRef) (plantree.Expr, error) { return e.scope.column(x) }

func (e *scopeEnv) CallsVolatile() {
	if e.scope != nil && e.scope.outerUse != nil {
		e.scope.outerUse.volatile = true
	}
}

func (e *scopeEnv) Topics() catalog.Topics {
	if e.cat == nil {
		return nil
	}
	return e.cat
}

// Subquery plans a subquery of an expression. Its WHERE, select list,
// GROUP BY, HAVING and ORDER BY may name columns of this query (a
// correlated subquery); its joins' ON clauses and derived tables may not
// (0A000), nor may a subquery name columns two queries out.
func (e *scopeEnv) Subquery(sel *sql.Select) (*plantree.SelectPlan, []int, bool, error) {
	if e.cat == nil {
		return nil, nil, false, pgerror.New(pgerror.CodeFeatureNotSupported, "a subquery is not supported here")
	}
	var use outerUse
	inner, err := planSelectIn(e.cat, sel, e.params, e.scope, &use)
	if err != nil {
		var pe *pgerror.Error
		if errors.As(err, &pe) && pe.Code == pgerror.CodeUndefinedColumn && e.scope.refersTo(sel) {
			return nil, nil, false, pgerror.Newf(pgerror.CodeFeatureNotSupported,
				"a reference to the outer query from a join condition or a derived table of a subquery is not supported (%s)", pe.Message)
		}
		return nil, nil, false, err
	}
	if inner.Consumer != nil {
		return nil, nil, false, pgerror.New(pgerror.CodeFeatureNotSupported, "a read as consumer in a subquery expression is not supported")
	}
	var cols []int
	for c := range use.cols {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	return inner, cols, use.volatile, nil
}

// refersTo reports whether a column the subquery sel names resolves in
// s.
func (s *Scope) refersTo(sel *sql.Select) bool {
	found := false
	sql.WalkStmt(sel, func(e sql.Expr) {
		if c, ok := e.(*sql.ColumnRef); ok {
			if _, _, ok := s.resolve(c.Name); ok {
				found = true
			}
		}
	}, nil)
	return found
}
