package planner

import (
	"strings"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// sharedScope adds delivery_count and locked_until for shared-consumer
// reads.
func sharedScope(topic string) *Scope {
	s := msgScope(topic)
	for _, c := range []MsgCol{ColDeliveryCount, ColLockedUntil} {
		s.Names = append(s.Names, MsgColumns[c].Name)
		s.Types = append(s.Types, MsgColumns[c].Type)
	}
	return s
}

// msgScope is the scope of a topic's message columns for stateless reads.
func msgScope(topic string) *Scope {
	n := int(ColDelay) + 1
	s := &Scope{Names: make([]string, n), Types: make([]Type, n), Source: "topic \"" + topic + "\""}
	for i := 0; i < n; i++ {
		s.Names[i] = MsgColumns[i].Name
		s.Types[i] = MsgColumns[i].Type
	}
	s.Lookup = func(name string) (int, bool) {
		c, ok := ydbAliases[name]
		if ok && int(c) < n {
			return int(c), true
		}
		return 0, false
	}
	return s
}

func planSelect(cat Catalog, s *sql.Select, params *[]Type) (*SelectPlan, error) {
	return planSelectIn(cat, s, params, nil, nil)
}

// planSelectIn plans a SELECT that is a subquery of an expression of a
// query whose scope is outer (nil for none); use records what s takes from
// outer.
func planSelectIn(cat Catalog, s *sql.Select, params *[]Type, outer *Scope, use *outerUse) (*SelectPlan, error) {
	p := &SelectPlan{}
	var scope *Scope
	var star []int
	if s.From != nil && s.From.Join != nil {
		var err error
		if scope, star, err = fromJoin(cat, s.From.Join, params, p, sqlConjuncts(s.Where, nil), outer, use); err != nil {
			return nil, err
		}
	} else if s.From != nil && s.From.Func != nil {
		var err error
		// The arguments see no FROM columns, only the query around.
		b := newBinder(params, (&Scope{Source: "function"}).withOuter(outer, use, "\x00"))
		if outer == nil {
			b = newBinder(params, nil)
		}
		b.cat = cat
		if scope, err = fromFunc(b, s.From, p); err != nil {
			return nil, err
		}
		for i := range scope.Names {
			star = append(star, i)
		}
	} else if s.From != nil && (s.From.Sub != nil || s.From.Values != nil || s.From.SetOp != nil || s.From.Recursive != nil || s.From.WorkTable != nil) {
		var err error
		switch {
		case s.From.Recursive != nil || s.From.WorkTable != nil:
			scope, err = fromRecursive(cat, s.From, params, p, outer, use)
		case s.From.Sub != nil:
			scope, err = fromSubquery(cat, s.From, params, p, outer, use)
		case s.From.SetOp != nil:
			scope, err = fromSetOp(cat, s.From, params, p, outer, use)
		default:
			scope, err = fromValues(s.From, params, p, outer, use)
		}
		if err != nil {
			return nil, err
		}
		for i := range scope.Names {
			star = append(star, i)
		}
	} else if s.From != nil {
		schema := s.From.Schema
		if _, ok := PgCatalogViews[s.From.Name]; ok && schema == "" {
			// pg_catalog is searched first, as in PostgreSQL: ruby-pg
			// reads "pg_type" unqualified.
			schema = "pg_catalog"
		}
		switch schema {
		case "", "public":
			ti, err := lookupTopic(cat, s.From.Name)
			if err != nil {
				return nil, pgerror.At(err, s.From.Pos)
			}
			if len(s.From.Hints) > 0 {
				if p.Consumer, err = planConsumerRead(newBinder(params, nil), ti, s.From.Hints); err != nil {
					return nil, err
				}
			}
			scope = msgScope(s.From.Name)
			if p.Consumer != nil && p.Consumer.Shared {
				scope = sharedScope(s.From.Name)
			}
			p.Scan = &MsgScan{Topic: s.From.Name}
			p.Hints = s.From.Hints
			for _, c := range StarColumns {
				star = append(star, int(c))
			}
			if p.Consumer != nil && p.Consumer.Shared {
				star = append(star, int(ColDeliveryCount), int(ColLockedUntil))
			}
		case "sys":
			view, ok := SysViews[s.From.Name]
			if !ok {
				return nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"sys.%s\" does not exist", s.From.Name), s.From.Pos)
			}
			p.Sys = &SysScan{View: s.From.Name, Names: view.Names, Types: view.Types}
			scope = &Scope{Names: view.Names, Types: view.Types, Source: "sys." + s.From.Name}
			for i := range view.Names {
				star = append(star, i)
			}
		case "pg_catalog":
			view, ok := PgCatalogViews[s.From.Name]
			if !ok {
				return nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"pg_catalog.%s\" does not exist", s.From.Name), s.From.Pos)
			}
			p.Sys = &SysScan{View: "pg_catalog." + s.From.Name, Names: view.Names, Types: view.Types}
			scope = &Scope{Names: view.Names, Types: view.Types, Source: "pg_catalog." + s.From.Name}
			for i := range view.Star() {
				star = append(star, i)
			}
		default:
			return nil, pgerror.At(pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"%s.%s\" does not exist", s.From.Schema, s.From.Name), s.From.Pos)
		}
	}
	if outer != nil {
		rel := ""
		if s.From != nil && s.From.Join == nil {
			rel = s.From.Alias
			if rel == "" {
				rel = s.From.Name
			}
		}
		scope = scope.withOuter(outer, use, rel)
	}
	b := newBinder(params, scope)
	b.cat = cat
	defer func() { p.Subqueries = b.subs }()
	b.srfWhere = "WHERE"
	if s.Where != nil {
		f, err := b.bind(s.Where, TBool)
		if err != nil {
			return nil, err
		}
		if err := wantType(f, TBool, "argument of WHERE"); err != nil {
			return nil, err
		}
		p.Filter = f
	}
	// Select list.
	b.allowAgg, b.allowWindow, b.allowSRF = true, true, true
	for _, t := range s.Targets {
		if st, ok := t.Expr.(*sql.Star); ok {
			if s.From == nil {
				return nil, pgerror.New(pgerror.CodeSyntaxError, "SELECT * with no tables specified is not valid")
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
				return nil, pgerror.Newf(pgerror.CodeUndefinedTable, "missing FROM-clause entry for table \"%s\"", st.Table)
			}
			continue
		}
		e, err := b.bind(t.Expr, TUnknown)
		if err != nil {
			return nil, err
		}
		if isUntyped(e) {
			if e, err = coerce(e, TText); err != nil {
				return nil, err
			}
		}
		p.Project = append(p.Project, e)
		col := Column{Name: targetName(t), T: e.Type()}
		textAlias(&col, t.Expr)
		p.Cols = append(p.Cols, col)
	}
	b.allowWindow, b.allowSRF = false, false
	var distinctOn []Expr
	if len(s.DistinctOn) > 0 {
		if len(s.GroupBy) > 0 || len(b.aggs) > 0 {
			return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "DISTINCT ON with GROUP BY or aggregates is not supported")
		}
		for _, d := range s.DistinctOn {
			e, err := b.bindOrderRef(d, p)
			if err != nil {
				return nil, err
			}
			distinctOn = append(distinctOn, e)
		}
	}
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
	if s.Having != nil {
		b.srfWhere = "HAVING"
		h, err := b.bind(s.Having, TBool)
		if err != nil {
			return nil, err
		}
		p.Having = h
	}
	// ORDER BY: output position, output alias, or an expression.
	sortExprs := make([]Expr, len(s.OrderBy))
	b.allowWindow, b.allowSRF = true, true
	for i, o := range s.OrderBy {
		e, err := b.bindOrderRef(o.Expr, p)
		if err != nil {
			return nil, err
		}
		sortExprs[i] = e
	}
	b.allowAgg, b.allowWindow, b.allowSRF = false, false, false
	if len(b.wins) > 0 {
		switch {
		case s.Distinct || distinctOn != nil:
			return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "window functions together with DISTINCT are not supported")
		case p.Consumer != nil:
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "window functions are not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
		}
		// Windows run over the input rows, or over the groups (after
		// HAVING) when there is a grouping; their results follow the row.
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
	}
	if len(b.aggs) > 0 || len(groupBy) > 0 {
		if err := p.rewriteAgg(groupBy, b.aggs, sortExprs); err != nil {
			return nil, err
		}
	}
	for i, o := range s.OrderBy {
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
	var err error
	if s.Limit != nil {
		if p.Limit, err = bindCount(b, s.Limit, "LIMIT"); err != nil {
			return nil, err
		}
	}
	if s.Offset != nil {
		if p.Offset, err = bindCount(b, s.Offset, "OFFSET"); err != nil {
			return nil, err
		}
	}
	if p.Consumer != nil && p.Consumer.Shared && p.Filter != nil {
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"a read as shared consumer \"%s\" locks the messages it returns: WHERE is not supported with it", p.Consumer.Consumer)
	}
	if p.Consumer != nil {
		correlated := false
		for _, e := range append([]Expr{p.Filter}, p.Project...) {
			walk(e, func(x Expr) {
				if sq, ok := x.(*SubqueryExpr); ok && sq.Correlated {
					correlated = true
				}
			})
		}
		if correlated {
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported,
				"a correlated subquery is not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
		}
		if p.Agg != nil || len(p.Sort) > 0 || p.Offset != nil {
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported,
				"a read as consumer \"%s\" returns messages in offset order per partition: ORDER BY, GROUP BY, DISTINCT, aggregates and OFFSET are not supported with it", p.Consumer.Consumer)
		}
	}
	if p.Scan != nil {
		p.Scan.NeedData = usesCol(p, int(ColData))
	}
	return p, nil
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
