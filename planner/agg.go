package planner

import (
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
)

// rewriteAgg is the rule that splits a grouped query: the scan feeds an
// aggregation whose rows are (group keys..., aggregates...), and the select
// list, HAVING and ORDER BY are rewritten to read those columns. A column
// reference outside an aggregate that is not a group key is an error, as in
// PostgreSQL.
func rewriteAgg(p *plantree.SelectPlan, groupBy []plantree.Expr, aggs []*plantree.AggExpr, sortExprs []plantree.Expr) error {
	p.Agg = &plantree.AggSpec{GroupBy: groupBy, Aggs: aggs}
	g := &groupedRewrite{groupBy: groupBy, aggs: aggs, windows: map[*plantree.WindowExpr]bool{}}
	if err := g.all(p.Project); err != nil {
		return err
	}
	if err := g.all(sortExprs); err != nil {
		return err
	}
	if p.Having != nil {
		r, err := g.expr(p.Having)
		if err != nil {
			return err
		}
		p.Having = r
	}
	return nil
}

// groupedRewrite rewrites expressions over a block's input rows into
// expressions over its aggregation's rows (group keys, then aggregates).
type groupedRewrite struct {
	groupBy []plantree.Expr
	aggs    []*plantree.AggExpr
	windows map[*plantree.WindowExpr]bool // the windows rewritten already
}

// all rewrites each of es in place.
func (g *groupedRewrite) all(es []plantree.Expr) error {
	for i, e := range es {
		r, err := g.expr(e)
		if err != nil {
			return err
		}
		es[i] = r
	}
	return nil
}

// list returns the rewrites of es.
func (g *groupedRewrite) list(es []plantree.Expr) ([]plantree.Expr, error) {
	var out []plantree.Expr
	for _, a := range es {
		r, err := g.expr(a)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// pair returns the rewrites of an operator's operands.
func (g *groupedRewrite) pair(l, r plantree.Expr) (plantree.Expr, plantree.Expr, error) {
	l, err := g.expr(l)
	if err != nil {
		return nil, nil, err
	}
	if r, err = g.expr(r); err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

// expr rewrites e: a group key becomes its column, an aggregate its
// column, and operators, casts and functions are rewritten over their
// operands; a column that is neither is an error (42803).
func (g *groupedRewrite) expr(e plantree.Expr) (plantree.Expr, error) {
	for i, k := range g.groupBy {
		if k.String() == e.String() {
			return &plantree.ColExpr{Idx: i, T: k.Type(), Name: k.String()}, nil
		}
	}
	switch x := e.(type) {
	case *plantree.WindowExpr:
		return x, g.window(x)
	case *plantree.SubqueryExpr:
		if x.Correlated { // its OuterRefs index the input rows, not the groups
			return nil, pgerror.New(pgerror.CodeFeatureNotSupported,
				"a correlated subquery in the select list, HAVING or ORDER BY of a query with GROUP BY, DISTINCT or aggregates is not supported")
		}
	case *plantree.AggExpr:
		for i, a := range g.aggs {
			if a == x {
				return &plantree.ColExpr{Idx: len(g.groupBy) + i, T: a.T, Name: a.String()}, nil
			}
		}
		return nil, pgerror.AssertionFailed("aggregate %s not registered", x)
	case *plantree.ColExpr:
		return nil, pgerror.Newf(pgerror.CodeGroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", x.Name)
	case *plantree.ConstExpr, *plantree.ParamExpr:
		return e, nil
	case *plantree.CmpExpr:
		l, r, err := g.pair(x.L, x.R)
		if err != nil {
			return nil, err
		}
		return &plantree.CmpExpr{Op: x.Op, L: l, R: r}, nil
	case *plantree.ArithExpr:
		l, r, err := g.pair(x.L, x.R)
		if err != nil {
			return nil, err
		}
		return &plantree.ArithExpr{Op: x.Op, L: l, R: r, T: x.T}, nil
	case *plantree.LogicExpr:
		args, err := g.list(x.Args)
		if err != nil {
			return nil, err
		}
		return &plantree.LogicExpr{And: x.And, Args: args}, nil
	case *plantree.NotExpr:
		r, err := g.expr(x.X)
		if err != nil {
			return nil, err
		}
		return &plantree.NotExpr{X: r}, nil
	case *plantree.CastExpr:
		r, err := g.expr(x.X)
		if err != nil {
			return nil, err
		}
		return &plantree.CastExpr{X: r, T: x.T}, nil
	case *plantree.FuncExpr:
		args, err := g.list(x.Args)
		if err != nil {
			return nil, err
		}
		return &plantree.FuncExpr{Name: x.Name, T: x.T, Set: x.Set, Fn: x.Fn, Args: args}, nil
	}
	ok := true
	plantree.Walk(e, func(s plantree.Expr) {
		switch s.(type) {
		case *plantree.ColExpr, *plantree.AggExpr:
			ok = false
		}
	})
	if ok {
		return e, nil
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "expression %s over grouped rows is not supported", e)
}

// window rewrites a window's inputs in place: it runs over the grouped
// rows (once: ORDER BY may name the same window as the select list).
func (g *groupedRewrite) window(w *plantree.WindowExpr) error {
	if g.windows[w] {
		return nil
	}
	g.windows[w] = true
	if err := g.all(w.Args); err != nil {
		return err
	}
	if err := g.all(w.PartitionBy); err != nil {
		return err
	}
	if err := g.all(w.Order); err != nil {
		return err
	}
	if a := w.Agg; a != nil {
		var err error
		if a.Arg != nil {
			if a.Arg, err = g.expr(a.Arg); err != nil {
				return err
			}
		}
		if a.Filter != nil {
			if a.Filter, err = g.expr(a.Filter); err != nil {
				return err
			}
		}
	}
	return nil
}
