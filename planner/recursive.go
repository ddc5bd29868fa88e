package planner

import (
	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// workCatalog is the catalog a recursive term is planned against: it
// knows the work table of the query being planned, and those of the
// recursive queries around it through the catalog it wraps.
type workCatalog struct {
	Catalog
	ref  *sql.RecursiveCTE
	work *plantree.WorkTable
}

// workTableOf finds the work table of ref in cat.
func workTableOf(cat Catalog, ref *sql.RecursiveCTE) *plantree.WorkTable {
	for {
		w, ok := cat.(*workCatalog)
		if !ok {
			return nil
		}
		if w.ref == ref {
			return w.work
		}
		cat = w.Catalog
	}
}

// fromRecursive plans a reference to a WITH RECURSIVE query (t.Recursive)
// or, inside its recursive term, to its work table (t.WorkTable). The
// columns are the non-recursive term's, named by the query's column list;
// a text-like unknown (a bare literal, NULL) is text there, as in
// PostgreSQL. The recursive term must produce the same types, as
// PostgreSQL's analyzeCTE requires (42804 otherwise); it is cast to them
// where UNION would resolve the same type. outer and use are the query
// around a subquery expression the reference is in (nil outside one): a
// correlated WITH RECURSIVE reads it.
func fromRecursive(cat Catalog, t *sql.TableRef, params *[]Type, p *plantree.SelectPlan, outer *Scope, use *outerUse) (*Scope, error) {
	var cols []plantree.Column
	if t.WorkTable != nil {
		wt := workTableOf(cat, t.WorkTable)
		if wt == nil {
			return nil, pgerror.AssertionFailed("the work table of %q planned outside its recursive term", t.WorkTable.Name)
		}
		p.Work, cols = wt, wt.Cols
	} else {
		rp, err := planRecursive(cat, t.Recursive, params, outer, use)
		if err != nil {
			return nil, err
		}
		p.Recursive, cols = rp, rp.Work.Cols
	}
	names := make([]string, len(cols))
	types := make([]Type, len(cols))
	for i, c := range cols {
		names[i], types[i] = c.Name, c.T
	}
	if err := applyColAliases(t, names); err != nil {
		return nil, err
	}
	return &Scope{Names: names, Types: types, Source: sourceName("WITH query", t.Alias)}, nil
}

// planRecursive plans both terms of r.
func planRecursive(cat Catalog, r *sql.RecursiveCTE, params *[]Type, outer *Scope, use *outerUse) (*plantree.RecursivePlan, error) {
	plan := func(cat Catalog, s *sql.Select) (*plantree.SelectPlan, error) {
		if outer == nil {
			return planSelect(cat, s, params)
		}
		return planSelectIn(cat, s, params, outer, use)
	}
	non, err := plan(cat, r.NonRec)
	if err != nil {
		return nil, err
	}
	if len(r.Cols) > len(non.Cols) {
		return nil, pgerror.At(pgerror.Newf(pgerror.CodeInvalidColumnReference,
			"WITH query \"%s\" has %d columns available but %d columns specified", r.Name, len(non.Cols), len(r.Cols)), r.Pos)
	}
	wt := &plantree.WorkTable{Name: r.Name, Cols: make([]plantree.Column, len(non.Cols))}
	for i, c := range non.Cols {
		if c.T == TNull || c.T == TUnknown {
			non.Project[i] = &plantree.CastExpr{X: non.Project[i], T: TText}
			c.T, non.Cols[i].T = TText, TText
		}
		wt.Cols[i] = plantree.Column{Name: c.Name, T: c.T}
		if i < len(r.Cols) {
			wt.Cols[i].Name = r.Cols[i]
		}
	}
	rec, err := plan(&workCatalog{Catalog: cat, ref: r, work: wt}, r.Rec)
	if err != nil {
		return nil, err
	}
	if pos := aggregatePos(r.Rec); pos != 0 {
		return nil, pgerror.At(pgerror.New(pgerror.CodeInvalidRecursion,
			"aggregate functions are not allowed in a recursive query's recursive term"), pos)
	}
	if len(rec.Cols) != len(wt.Cols) {
		pos := 0
		if len(r.Rec.Targets) > 0 {
			pos = leftmostPos(r.Rec.Targets[0].Expr)
		}
		return nil, pgerror.At(pgerror.New(pgerror.CodeSyntaxError, "each UNION query must have the same number of columns"), pos)
	}
	for i, c := range wt.Cols {
		rt := rec.Cols[i].T
		ct, err := unionType(c.T, rt, "UNION")
		if err != nil {
			return nil, err
		}
		if ct != c.T {
			pos := 0
			if plain := r.NonRec.From == nil || r.NonRec.From.SetOp == nil; plain && i < len(r.NonRec.Targets) {
				pos = leftmostPos(r.NonRec.Targets[i].Expr)
			}
			return nil, pgerror.At(pgerror.Newf(pgerror.CodeDatatypeMismatch,
				"recursive query \"%s\" column %d has type %s in non-recursive term but type %s overall", r.Name, i+1, c.T, ct).
				WithHint("Cast the output of the non-recursive term to the correct type."), pos)
		}
		if rt != c.T {
			rec.Project[i] = &plantree.CastExpr{X: rec.Project[i], T: c.T}
			rec.Cols[i].T = c.T
		}
	}
	if c := consumerRead(non); c != nil {
		return nil, recursiveConsumer(c)
	}
	if c := consumerRead(rec); c != nil {
		return nil, recursiveConsumer(c)
	}
	return &plantree.RecursivePlan{NonRec: non, Rec: rec, All: r.All, Work: wt}, nil
}

func recursiveConsumer(c *plantree.ConsumerRead) error {
	return pgerror.Newf(pgerror.CodeFeatureNotSupported,
		"a read as consumer \"%s\" in a recursive query is not supported: a recursive query reads statelessly", c.Consumer)
}

// aggregatePos is where the first aggregate call of s's select list or
// HAVING (not of a subquery in them) is, 0 if there is none.
func aggregatePos(s *sql.Select) int {
	inSub := map[*sql.FuncCall]bool{}
	pos := 0
	find := func(e sql.Expr) {
		switch x := e.(type) {
		case *sql.SubLink:
			sql.WalkStmt(x.Select, func(e sql.Expr) {
				if f, ok := e.(*sql.FuncCall); ok {
					inSub[f] = true
				}
			}, nil)
		case *sql.FuncCall:
			if pos == 0 && x.Over == nil && scalar.IsAggregate(x.Name) && !inSub[x] {
				pos = x.Pos
			}
		}
	}
	for _, t := range s.Targets {
		sql.WalkExpr(t.Expr, find)
	}
	sql.WalkExpr(s.Having, find)
	return pos
}

// leftmostPos is where e starts, as PostgreSQL's exprLocation reports an
// operator expression: at its left operand.
func leftmostPos(e sql.Expr) int {
	if b, ok := e.(*sql.BinOp); ok {
		if p := leftmostPos(b.L); p != 0 {
			return p
		}
	}
	return sql.ExprPos(e)
}
