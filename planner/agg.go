package planner

import "topicgate/sql/pgerror"

// rewriteAgg is the rule that splits a grouped query: the scan feeds an
// aggregation whose rows are (group keys..., aggregates...), and the select
// list, HAVING and ORDER BY are rewritten to read those columns. A column
// reference outside an aggregate that is not a group key is an error, as in
// PostgreSQL.
func (p *SelectPlan) rewriteAgg(groupBy []Expr, aggs []*AggExpr, sortExprs []Expr) error {
	p.Agg = &AggSpec{GroupBy: groupBy, Aggs: aggs}
	var rw func(e Expr) (Expr, error)
	rwAll := func(es []Expr) error {
		for i, e := range es {
			r, err := rw(e)
			if err != nil {
				return err
			}
			es[i] = r
		}
		return nil
	}
	// A window runs over the grouped rows: its inputs are rewritten in
	// place (once: ORDER BY may name the same window as the select list).
	windows := map[*WindowExpr]bool{}
	rewriteWindow := func(w *WindowExpr) error {
		if windows[w] {
			return nil
		}
		windows[w] = true
		if err := rwAll(w.Args); err != nil {
			return err
		}
		if err := rwAll(w.PartitionBy); err != nil {
			return err
		}
		if err := rwAll(w.Order); err != nil {
			return err
		}
		if a := w.Agg; a != nil {
			var err error
			if a.Arg != nil {
				if a.Arg, err = rw(a.Arg); err != nil {
					return err
				}
			}
			if a.Filter != nil {
				if a.Filter, err = rw(a.Filter); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rw = func(e Expr) (Expr, error) {
		for i, g := range groupBy {
			if g.String() == e.String() {
				return &ColExpr{Idx: i, T: g.Type(), Name: g.String()}, nil
			}
		}
		switch x := e.(type) {
		case *WindowExpr:
			return x, rewriteWindow(x)
		case *SubqueryExpr:
			if x.Correlated { // its OuterRefs index the input rows, not the groups
				return nil, pgerror.New(pgerror.CodeFeatureNotSupported,
					"a correlated subquery in the select list, HAVING or ORDER BY of a query with GROUP BY, DISTINCT or aggregates is not supported")
			}
		case *AggExpr:
			for i, a := range aggs {
				if a == x {
					return &ColExpr{Idx: len(groupBy) + i, T: a.T, Name: a.String()}, nil
				}
			}
			return nil, pgerror.AssertionFailed("aggregate %s not registered", x)
		case *ColExpr:
			return nil, pgerror.Newf(pgerror.CodeGroupingError, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", x.Name)
		case *ConstExpr, *ParamExpr:
			return e, nil
		case *CmpExpr:
			l, err := rw(x.L)
			if err != nil {
				return nil, err
			}
			r, err := rw(x.R)
			if err != nil {
				return nil, err
			}
			return &CmpExpr{Op: x.Op, L: l, R: r}, nil
		case *ArithExpr:
			l, err := rw(x.L)
			if err != nil {
				return nil, err
			}
			r, err := rw(x.R)
			if err != nil {
				return nil, err
			}
			return &ArithExpr{Op: x.Op, L: l, R: r, T: x.T}, nil
		case *LogicExpr:
			out := &LogicExpr{And: x.And}
			for _, a := range x.Args {
				r, err := rw(a)
				if err != nil {
					return nil, err
				}
				out.Args = append(out.Args, r)
			}
			return out, nil
		case *NotExpr:
			r, err := rw(x.X)
			if err != nil {
				return nil, err
			}
			return &NotExpr{X: r}, nil
		case *CastExpr:
			r, err := rw(x.X)
			if err != nil {
				return nil, err
			}
			return &CastExpr{X: r, T: x.T}, nil
		case *FuncExpr:
			out := &FuncExpr{Name: x.Name, T: x.T, Set: x.Set, Fn: x.Fn}
			for _, a := range x.Args {
				r, err := rw(a)
				if err != nil {
					return nil, err
				}
				out.Args = append(out.Args, r)
			}
			return out, nil
		}
		ok := true
		walk(e, func(s Expr) {
			switch s.(type) {
			case *ColExpr, *AggExpr:
				ok = false
			}
		})
		if ok {
			return e, nil
		}
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "expression %s over grouped rows is not supported", e)
	}
	for i, e := range p.Project {
		r, err := rw(e)
		if err != nil {
			return err
		}
		p.Project[i] = r
	}
	for i, e := range sortExprs {
		r, err := rw(e)
		if err != nil {
			return err
		}
		sortExprs[i] = r
	}
	if p.Having != nil {
		r, err := rw(p.Having)
		if err != nil {
			return err
		}
		p.Having = r
	}
	return nil
}
