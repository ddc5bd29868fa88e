package planner

import (
	"strings"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

func planSelect(cat Catalog, s *sql.Select, params *[]Type) (*SelectPlan, error) {
	return planSelectIn(cat, s, params, nil, nil)
}

// planSelectIn plans a SELECT that is a subquery of an expression of a
// query whose scope is outer (nil for none); use records what s takes from
// outer. It binds the clauses in PostgreSQL's order: FROM, WHERE, the
// select list, DISTINCT ON, GROUP BY, HAVING, ORDER BY, windows, then the
// grouping's rewrite, the sort keys, LIMIT and OFFSET.
func planSelectIn(cat Catalog, s *sql.Select, params *[]Type, outer *Scope, use *outerUse) (*SelectPlan, error) {
	p := &SelectPlan{}
	scope, star, err := planFrom(cat, s, params, p, outer, use)
	if err != nil {
		return nil, err
	}
	if outer != nil {
		scope = scope.withOuter(outer, use, fromRel(s.From))
	}
	b := newBinder(params, scope)
	b.cat = cat
	defer func() { p.Subqueries = b.subs }()
	if err := p.bindWhere(b, s.Where); err != nil {
		return nil, err
	}
	// Aggregates are allowed from the select list to ORDER BY; windows
	// and set-returning functions in the select list and ORDER BY only.
	b.allowAgg, b.allowWindow, b.allowSRF = true, true, true
	if err := p.bindTargets(b, s, scope, star); err != nil {
		return nil, err
	}
	b.allowWindow, b.allowSRF = false, false
	distinctOn, err := p.bindDistinctOnExprs(b, s)
	if err != nil {
		return nil, err
	}
	groupBy, err := p.bindGroupBy(b, s)
	if err != nil {
		return nil, err
	}
	if err := p.bindHaving(b, s.Having); err != nil {
		return nil, err
	}
	b.allowWindow, b.allowSRF = true, true
	sortExprs, err := p.bindOrderBy(b, s.OrderBy)
	if err != nil {
		return nil, err
	}
	b.allowAgg, b.allowWindow, b.allowSRF = false, false, false
	if err := p.placeWindows(b, s.Distinct || distinctOn != nil, groupBy, scope); err != nil {
		return nil, err
	}
	if len(b.aggs) > 0 || len(groupBy) > 0 {
		if err := p.rewriteAgg(groupBy, b.aggs, sortExprs); err != nil {
			return nil, err
		}
	}
	p.addSortKeys(s.OrderBy, sortExprs)
	if err := p.bindDistinctOn(distinctOn); err != nil {
		return nil, err
	}
	if err := p.collectSRFs(s.Distinct, groupBy); err != nil {
		return nil, err
	}
	if p.Consumer != nil && p.DistinctOn == nil && p.Agg == nil {
		// A consumer reads in the natural order only: ORDER BY partition,
		// offset is no sort (a stateless scan's order is rule scanOrder's).
		if o, ok := scanOrder(p.Sort, p.Project); ok && o == (ScanOrder{}) {
			p.Sort = nil
		}
	}
	if err := p.bindLimitOffset(b, s); err != nil {
		return nil, err
	}
	if err := p.checkConsumerRead(); err != nil {
		return nil, err
	}
	if p.Scan != nil {
		p.Scan.NeedData = usesCol(p, int(ColData))
	}
	return p, nil
}

// bindWhere binds WHERE, a boolean.
func (p *SelectPlan) bindWhere(b *binder, where sql.Expr) error {
	b.srfWhere = "WHERE"
	if where == nil {
		return nil
	}
	f, err := b.bind(where, TBool)
	if err != nil {
		return err
	}
	if err := wantType(f, TBool, "argument of WHERE"); err != nil {
		return err
	}
	p.Filter = f
	return nil
}

// bindTargets binds the select list into p's projection and output
// columns, * and t.* expanding to the FROM item's star columns.
func (p *SelectPlan) bindTargets(b *binder, s *sql.Select, scope *Scope, star []int) error {
	for _, t := range s.Targets {
		if st, ok := t.Expr.(*sql.Star); ok {
			if s.From == nil {
				return pgerror.New(pgerror.CodeSyntaxError, "SELECT * with no tables specified is not valid")
			}
			before := len(p.Cols)
			for _, i := range star {
				if st.Table != "" && scope.Quals != nil && scope.Quals[i] != st.Table {
					continue // t.* in a join
				}
				p.Project = append(p.Project, &ColExpr{Idx: i, T: scope.Types[i], Name: scope.Names[i]})
				p.Cols = append(p.Cols, Column{Name: scope.Names[i], T: scope.Types[i]})
			}
			if len(p.Cols) == before {
				return pgerror.Newf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table \"%s\"", st.Table)
			}
			continue
		}
		e, err := b.bind(t.Expr, TUnknown)
		if err != nil {
			return err
		}
		if isUntyped(e) {
			if e, err = coerce(e, TText); err != nil {
				return err
			}
		}
		p.Project = append(p.Project, e)
		col := Column{Name: targetName(t), T: e.Type()}
		textAlias(&col, t.Expr)
		p.Cols = append(p.Cols, col)
	}
	return nil
}

// bindDistinctOnExprs binds the expressions of DISTINCT ON (bindDistinctOn
// records them once ORDER BY is known).
func (p *SelectPlan) bindDistinctOnExprs(b *binder, s *sql.Select) ([]Expr, error) {
	if len(s.DistinctOn) == 0 {
		return nil, nil
	}
	if len(s.GroupBy) > 0 || len(b.aggs) > 0 {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "DISTINCT ON with GROUP BY or aggregates is not supported")
	}
	var out []Expr
	for _, d := range s.DistinctOn {
		e, err := b.bindOrderRef(d, p)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// bindGroupBy binds the grouping: SELECT DISTINCT's (every output
// column), then GROUP BY's items.
func (p *SelectPlan) bindGroupBy(b *binder, s *sql.Select) ([]Expr, error) {
	var groupBy []Expr
	if s.Distinct {
		// SELECT DISTINCT is a grouping by every output column.
		if len(s.GroupBy) > 0 || len(b.aggs) > 0 {
			return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "SELECT DISTINCT with GROUP BY or aggregates is not supported")
		}
		groupBy = append(groupBy, p.Project...)
	}
	for _, g := range s.GroupBy {
		e, err := b.bindOrderRef(g, p)
		if err != nil {
			return nil, err
		}
		hasAgg := false
		walk(e, func(x Expr) {
			if _, ok := x.(*AggExpr); ok {
				hasAgg = true
			}
		})
		if hasAgg { // GROUP BY 1 or an alias naming an aggregate
			return nil, pgerror.New(pgerror.CodeGroupingError, "aggregate functions are not allowed in GROUP BY")
		}
		groupBy = append(groupBy, e)
	}
	return groupBy, nil
}

// bindHaving binds HAVING.
func (p *SelectPlan) bindHaving(b *binder, having sql.Expr) error {
	if having == nil {
		return nil
	}
	b.srfWhere = "HAVING"
	h, err := b.bind(having, TBool)
	if err != nil {
		return err
	}
	p.Having = h
	return nil
}

// bindOrderBy binds ORDER BY's items: an output position, an output
// alias, or an expression.
func (p *SelectPlan) bindOrderBy(b *binder, orderBy []sql.OrderBy) ([]Expr, error) {
	sortExprs := make([]Expr, len(orderBy))
	for i, o := range orderBy {
		e, err := b.bindOrderRef(o.Expr, p)
		if err != nil {
			return nil, err
		}
		sortExprs[i] = e
	}
	return sortExprs, nil
}

// placeWindows gives each window function of the block its slot: windows
// run over the input rows, or over the groups (after HAVING) when there is
// a grouping, and their results follow the row.
func (p *SelectPlan) placeWindows(b *binder, distinct bool, groupBy []Expr, scope *Scope) error {
	if len(b.wins) == 0 {
		return nil
	}
	switch {
	case distinct:
		return pgerror.New(pgerror.CodeFeatureNotSupported, "window functions together with DISTINCT are not supported")
	case p.Consumer != nil:
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "window functions are not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
	}
	width := 0
	if len(b.aggs) > 0 || len(groupBy) > 0 {
		width = len(groupBy) + len(b.aggs)
	} else if scope != nil {
		width = len(scope.Names)
	}
	for i, w := range b.wins {
		w.Slot = width + i
	}
	p.Windows = b.wins
	return nil
}

// addSortKeys makes ORDER BY's expressions sort keys over the projection,
// appending a hidden column for each that is not an output column.
func (p *SelectPlan) addSortKeys(orderBy []sql.OrderBy, sortExprs []Expr) {
	for i, o := range orderBy {
		idx := -1
		for j := range p.Cols {
			if p.Project[j].String() == sortExprs[i].String() {
				idx = j
				break
			}
		}
		if idx < 0 {
			idx = len(p.Project)
			p.Project = append(p.Project, sortExprs[i])
		}
		nf := o.Desc
		if o.NullsFirst != nil {
			nf = *o.NullsFirst
		}
		p.Sort = append(p.Sort, SortKey{Idx: idx, Desc: o.Desc, NullsFirst: nf})
	}
}

// bindLimitOffset binds LIMIT and OFFSET, bigint counts.
func (p *SelectPlan) bindLimitOffset(b *binder, s *sql.Select) error {
	var err error
	if s.Limit != nil {
		if p.Limit, err = bindCount(b, s.Limit, "LIMIT"); err != nil {
			return err
		}
	}
	if s.Offset != nil {
		if p.Offset, err = bindCount(b, s.Offset, "OFFSET"); err != nil {
			return err
		}
	}
	return nil
}

// checkConsumerRead refuses what a read as a consumer cannot do: it
// returns messages in offset order per partition as it reads them, and a
// shared consumer locks each message it returns.
func (p *SelectPlan) checkConsumerRead() error {
	if p.Consumer == nil {
		return nil
	}
	if p.Consumer.Shared && p.Filter != nil {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"a read as shared consumer \"%s\" locks the messages it returns: WHERE is not supported with it", p.Consumer.Consumer)
	}
	correlated := false
	for _, e := range append([]Expr{p.Filter}, p.Project...) {
		walk(e, func(x Expr) {
			if sq, ok := x.(*SubqueryExpr); ok && sq.Correlated {
				correlated = true
			}
		})
	}
	if correlated {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"a correlated subquery is not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
	}
	if p.Agg != nil || len(p.Sort) > 0 || p.Offset != nil {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"a read as consumer \"%s\" returns messages in offset order per partition: ORDER BY, GROUP BY, DISTINCT, aggregates and OFFSET are not supported with it", p.Consumer.Consumer)
	}
	return nil
}

func bindCount(b *binder, e sql.Expr, what string) (Expr, error) {
	b.srfWhere = what
	x, err := b.bind(e, TInt8)
	if err != nil {
		return nil, err
	}
	if !x.Type().IsInt() && x.Type() != TNull {
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "argument of %s must be type bigint, not type %s", what, x.Type())
	}
	return x, nil
}

// bindOrderRef binds an ORDER BY / GROUP BY item: an integer constant is an
// output position, a bare name matching an output alias is that column.
func (b *binder) bindOrderRef(e sql.Expr, p *SelectPlan) (Expr, error) {
	if c, ok := e.(*sql.Const); ok && c.Lit.Kind == sql.LitInt {
		n := int(c.Lit.Int)
		if n < 1 || n > len(p.Cols) {
			return nil, pgerror.Newf(pgerror.CodeInvalidColumnReference, "ORDER BY position %d is not in select list", n)
		}
		return p.Project[n-1], nil
	}
	if cr, ok := e.(*sql.ColumnRef); ok && cr.Table == "" {
		if _, _, inScope := b.scope.resolve(cr.Name); !inScope {
			for i, col := range p.Cols {
				if col.Name == cr.Name {
					return p.Project[i], nil
				}
			}
		}
	}
	return b.bind(e, TUnknown)
}

// targetName names an output column as PostgreSQL's FigureColname does:
// the alias; else a column's or function's name; else, for a cast of
// something nameless, the type's name; "case" for CASE; else "?column?".
func targetName(t sql.Target) string {
	if t.Alias != "" {
		return t.Alias
	}
	if name, strength := figureColname(t.Expr); strength > 0 {
		return name
	}
	return "?column?"
}

// figureColname returns a name for e and its strength: 2 for names taken
// from the expression itself, 1 for fallbacks a cast may override, 0 for
// none.
func figureColname(e sql.Expr) (string, int) {
	switch x := e.(type) {
	case *sql.ColumnRef:
		return x.Name, 2
	case *sql.FuncCall:
		return x.Name, 2
	case *sql.Coalesce:
		return "coalesce", 2
	case *sql.Case:
		return "case", 1
	case *sql.Cast:
		if name, strength := figureColname(x.X); strength > 1 {
			return name, strength
		}
		return strings.TrimSuffix(x.Type, "[]"), 1
	case *sql.ArrayLit:
		return "array", 2
	case *sql.Subscript:
		return figureColname(x.X)
	case *sql.Collate:
		return figureColname(x.X)
	case *sql.SubLink:
		switch x.Kind {
		case sql.SubExists:
			return "exists", 2
		case sql.SubArray:
			return "array", 2
		case sql.SubScalar:
			// The subquery's column name, as PostgreSQL names it.
			sel := x.Select
			for sel != nil && sel.From != nil && sel.From.SetOp != nil && len(sel.Targets) == 1 {
				if _, ok := sel.Targets[0].Expr.(*sql.Star); !ok {
					break
				}
				sel = sel.From.SetOp.Left
			}
			if sel != nil && len(sel.Targets) > 0 {
				if _, ok := sel.Targets[0].Expr.(*sql.Star); !ok {
					if name := targetName(sel.Targets[0]); name != "?column?" {
						return name, 2
					}
				}
			}
		}
	}
	return "", 0
}

func usesCol(p *SelectPlan, idx int) bool {
	found := false
	visit := func(e Expr) {
		walk(e, func(x Expr) {
			switch x := x.(type) {
			case *ColExpr:
				found = found || x.Idx == idx
			case *SubqueryExpr: // a correlated one reads the row too
				for _, c := range x.OuterCols {
					found = found || c == idx
				}
			}
		})
	}
	visit(p.Filter)
	if p.Agg != nil {
		for _, g := range p.Agg.GroupBy {
			visit(g)
		}
		for _, a := range p.Agg.Aggs {
			if a.Arg != nil {
				visit(a.Arg)
			}
		}
	} else {
		for _, e := range p.Project {
			visit(e)
		}
	}
	return found
}

// bindDistinctOn records DISTINCT ON's columns (appending hidden ones as
// ORDER BY does) and checks PostgreSQL's rule that the leading ORDER BY
// items are DISTINCT ON expressions.
func (p *SelectPlan) bindDistinctOn(exprs []Expr) error {
	if len(exprs) == 0 {
		return nil
	}
	if p.Consumer != nil {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "DISTINCT ON is not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
	}
	in := map[int]bool{}
	for _, e := range exprs {
		idx := -1
		for j := range p.Project {
			if p.Project[j].String() == e.String() {
				idx = j
				break
			}
		}
		if idx < 0 {
			idx = len(p.Project)
			p.Project = append(p.Project, e)
		}
		p.DistinctOn = append(p.DistinctOn, idx)
		in[idx] = true
	}
	for i := 0; i < len(p.Sort) && i < len(exprs); i++ {
		if !in[p.Sort[i].Idx] {
			return pgerror.New(pgerror.CodeInvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
	}
	return nil
}
