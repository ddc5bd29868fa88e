package planner

import (
	"strings"

	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

func planSelect(cat Catalog, s *sql.Select, params *[]Type) (*plantree.SelectPlan, error) {
	return planSelectIn(cat, s, params, nil, nil)
}

// planSelectIn plans a SELECT that is a subquery of an expression of a
// query whose scope is outer (nil for none); use records what s takes from
// outer. It binds the clauses in PostgreSQL's order: FROM, WHERE, the
// select list, DISTINCT ON, GROUP BY, HAVING, ORDER BY, windows, then the
// grouping's rewrite, the sort keys, LIMIT and OFFSET.
func planSelectIn(cat Catalog, s *sql.Select, params *[]Type, outer *Scope, use *outerUse) (*plantree.SelectPlan, error) {
	p := &plantree.SelectPlan{}
	scope, star, err := planFrom(cat, s, params, p, outer, use)
	if err != nil {
		return nil, err
	}
	if outer != nil {
		scope = scope.withOuter(outer, use, fromRel(s.From))
	}
	b := newBinder(params, scope, cat)
	defer func() { p.Subqueries = b.Subqueries }()
	if err := bindWhere(p, b, s.Where); err != nil {
		return nil, err
	}
	// Aggregates are allowed from the select list to ORDER BY; windows
	// and set-returning functions in the select list and ORDER BY only.
	b.AllowAgg, b.AllowWindow, b.AllowSRF = true, true, true
	if err := bindTargets(p, b, s, scope, star); err != nil {
		return nil, err
	}
	b.AllowWindow, b.AllowSRF = false, false
	distinctOn, err := bindDistinctOnExprs(p, b, s)
	if err != nil {
		return nil, err
	}
	groupBy, err := bindGroupBy(p, b, s)
	if err != nil {
		return nil, err
	}
	if err := bindHaving(p, b, s.Having); err != nil {
		return nil, err
	}
	b.AllowWindow, b.AllowSRF = true, true
	sortExprs, err := bindOrderBy(p, b, s.OrderBy)
	if err != nil {
		return nil, err
	}
	b.AllowAgg, b.AllowWindow, b.AllowSRF = false, false, false
	if err := placeWindows(p, b, s.Distinct || distinctOn != nil, groupBy, scope); err != nil {
		return nil, err
	}
	if len(b.Aggs) > 0 || len(groupBy) > 0 {
		if err := rewriteAgg(p, groupBy, b.Aggs, sortExprs); err != nil {
			return nil, err
		}
	}
	addSortKeys(p, s.OrderBy, sortExprs)
	if err := bindDistinctOn(p, distinctOn); err != nil {
		return nil, err
	}
	if err := collectSRFs(p, s.Distinct, groupBy); err != nil {
		return nil, err
	}
	if p.Consumer != nil && p.DistinctOn == nil && p.Agg == nil {
		// A consumer reads in the natural order only: ORDER BY partition,
		// offset is no sort (a stateless scan's order is rule scanOrder's).
		if o, ok := plantree.ScanOrderOf(p.Sort, p.Project); ok && o == (plantree.ScanOrder{}) {
			p.Sort = nil
		}
	}
	if err := bindLimitOffset(p, b, s); err != nil {
		return nil, err
	}
	if err := checkConsumerRead(p); err != nil {
		return nil, err
	}
	if p.Scan != nil {
		p.Scan.NeedData = usesCol(p, int(plantree.ColData))
	}
	return p, nil
}

// bindWhere binds WHERE, a boolean.
func bindWhere(p *plantree.SelectPlan, b *binder, where sql.Expr) error {
	b.SRFWhere = "WHERE"
	if where == nil {
		return nil
	}
	f, err := b.Bind(where, TBool)
	if err != nil {
		return err
	}
	if err := scalar.WantType(f, TBool, "argument of WHERE"); err != nil {
		return err
	}
	p.Filter = f
	return nil
}

// bindTargets binds the select list into p's projection and output
// columns, * and t.* expanding to the FROM item's star columns.
func bindTargets(p *plantree.SelectPlan, b *binder, s *sql.Select, scope *Scope, star []int) error {
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
				p.Project = append(p.Project, &plantree.ColExpr{Idx: i, T: scope.Types[i], Name: scope.Names[i]})
				p.Cols = append(p.Cols, plantree.Column{Name: scope.Names[i], T: scope.Types[i]})
				scope.use(i)
			}
			if len(p.Cols) == before {
				return pgerror.Newf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table \"%s\"", st.Table)
			}
			continue
		}
		e, err := b.Bind(t.Expr, TUnknown)
		if err != nil {
			return err
		}
		if scalar.IsUntyped(e) {
			if e, err = scalar.Coerce(e, TText); err != nil {
				return err
			}
		}
		p.Project = append(p.Project, e)
		col := plantree.Column{Name: targetName(t), T: e.Type()}
		textAlias(&col, t.Expr)
		p.Cols = append(p.Cols, col)
	}
	return nil
}

// bindDistinctOnExprs binds the expressions of DISTINCT ON (bindDistinctOn
// records them once ORDER BY is known).
func bindDistinctOnExprs(p *plantree.SelectPlan, b *binder, s *sql.Select) ([]plantree.Expr, error) {
	if len(s.DistinctOn) == 0 {
		return nil, nil
	}
	if len(s.GroupBy) > 0 || len(b.Aggs) > 0 {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "DISTINCT ON with GROUP BY or aggregates is not supported")
	}
	var out []plantree.Expr
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
func bindGroupBy(p *plantree.SelectPlan, b *binder, s *sql.Select) ([]plantree.Expr, error) {
	var groupBy []plantree.Expr
	if s.Distinct {
		// SELECT DISTINCT is a grouping by every output column.
		if len(s.GroupBy) > 0 || len(b.Aggs) > 0 {
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
		plantree.Walk(e, func(x plantree.Expr) {
			if _, ok := x.(*plantree.AggExpr); ok {
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
func bindHaving(p *plantree.SelectPlan, b *binder, having sql.Expr) error {
	if having == nil {
		return nil
	}
	b.SRFWhere = "HAVING"
	h, err := b.Bind(having, TBool)
	if err != nil {
		return err
	}
	p.Having = h
	return nil
}

// bindOrderBy binds ORDER BY's items: an output position, an output
// alias, or an expression.
func bindOrderBy(p *plantree.SelectPlan, b *binder, orderBy []sql.OrderBy) ([]plantree.Expr, error) {
	sortExprs := make([]plantree.Expr, len(orderBy))
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
func placeWindows(p *plantree.SelectPlan, b *binder, distinct bool, groupBy []plantree.Expr, scope *Scope) error {
	if len(b.Windows) == 0 {
		return nil
	}
	switch {
	case distinct:
		return pgerror.New(pgerror.CodeFeatureNotSupported, "window functions together with DISTINCT are not supported")
	case p.Consumer != nil:
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "window functions are not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
	}
	width := 0
	if len(b.Aggs) > 0 || len(groupBy) > 0 {
		width = len(groupBy) + len(b.Aggs)
	} else if scope != nil {
		width = len(scope.Names)
	}
	for i, w := range b.Windows {
		w.Slot = width + i
	}
	p.Windows = b.Windows
	return nil
}

// addSortKeys makes ORDER BY's expressions sort keys over the projection,
// appending a hidden column for each that is not an output column.
func addSortKeys(p *plantree.SelectPlan, orderBy []sql.OrderBy, sortExprs []plantree.Expr) {
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
		p.Sort = append(p.Sort, plantree.SortKey{Idx: idx, Desc: o.Desc, NullsFirst: nf})
	}
}

// bindLimitOffset binds LIMIT and OFFSET, bigint counts.
func bindLimitOffset(p *plantree.SelectPlan, b *binder, s *sql.Select) error {
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
func checkConsumerRead(p *plantree.SelectPlan) error {
	if p.Consumer == nil {
		return nil
	}
	if p.Consumer.Shared && p.Filter != nil {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"a read as shared consumer \"%s\" locks the messages it returns: WHERE is not supported with it", p.Consumer.Consumer)
	}
	correlated := false
	for _, e := range append([]plantree.Expr{p.Filter}, p.Project...) {
		plantree.Walk(e, func(x plantree.Expr) {
			if sq, ok := x.(*plantree.SubqueryExpr); ok && sq.Correlated {
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

func bindCount(b *binder, e sql.Expr, what string) (plantree.Expr, error) {
	b.SRFWhere = what
	x, err := b.Bind(e, TInt8)
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
func (b *binder) bindOrderRef(e sql.Expr, p *plantree.SelectPlan) (plantree.Expr, error) {
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
	return b.Bind(e, TUnknown)
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

func usesCol(p *plantree.SelectPlan, idx int) bool {
	found := false
	visit := func(e plantree.Expr) {
		plantree.Walk(e, func(x plantree.Expr) {
			switch x := x.(type) {
			case *plantree.ColExpr:
				found = found || x.Idx == idx
			case *plantree.SubqueryExpr: // a correlated one reads the row too
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
func bindDistinctOn(p *plantree.SelectPlan, exprs []plantree.Expr) error {
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

// textAlias records in c what PostgreSQL would report for a select-list
// expression the planner types as text: a cast to varchar or bpchar keeps
// its type's OID, and a bare parameter its declared type (see Column).
func textAlias(c *plantree.Column, e sql.Expr) {
	switch x := e.(type) {
	case *sql.Cast:
		if c.T != TText {
			return
		}
		switch x.Type {
		case "varchar":
			c.OID = values.OIDVarchar
		case "bpchar":
			c.OID = values.OIDBpchar
		}
	case *sql.ParamRef:
		c.Param = x.N
	}
}
