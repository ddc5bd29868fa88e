package planner

import (
	"strings"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/planner/scalar"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// relation is a planned FROM item with its columns' names and qualifiers.
type relation struct {
	plan  *plantree.SelectPlan
	scope *Scope
	star  []int // the columns SELECT * lists
}

// planRelation plans one input of a join, with WHERE conjuncts pushed into
// it (they may bound its scan).
func planRelation(cat Catalog, t *sql.TableRef, params *[]Type, where []sql.Expr, outer *Scope, use *outerUse) (relation, error) {
	if t.Join != nil {
		p := &plantree.SelectPlan{}
		scope, star, err := fromJoin(cat, t.Join, params, p, where, outer, use)
		if err != nil {
			return relation{}, err
		}
		// The joined row itself is the relation: every column, in order,
		// so the outer scope's indexes are the join's.
		for i := range scope.Names {
			p.Project = append(p.Project, &plantree.ColExpr{Idx: i, T: scope.Types[i], Name: scope.Names[i]})
			p.Cols = append(p.Cols, plantree.Column{Name: scope.Names[i], T: scope.Types[i]})
		}
		return relation{plan: p, scope: scope, star: star}, nil
	}
	s := &sql.Select{Targets: []sql.Target{{Expr: &sql.Star{}}}, From: t, Where: andAll(where)}
	shown := -1 // every column is in SELECT *
	if v, ok := catalog.PgCatalogViews[t.Name]; ok && t.Func == nil && t.Sub == nil && t.Recursive == nil &&
		(t.Schema == "" || t.Schema == "pg_catalog") && v.Star() < len(v.Names) {
		// A catalog table's system column tableoid is in the relation
		// (a join condition may name it), not in its SELECT *.
		shown = v.Star()
		s.Targets = append(s.Targets, sql.Target{Expr: &sql.ColumnRef{Name: "tableoid"}})
	}
	if t.Func == nil && t.Sub == nil && t.Recursive == nil {
		outer, use = nil, nil // only a function's arguments, a derived table and a recursive query may read the query around
	}
	p, err := planSelectIn(cat, s, params, outer, use)
	if err != nil {
		return relation{}, err
	}
	if p.Consumer != nil {
		return relation{}, pgerror.Newf(pgerror.CodeFeatureNotSupported, "a read as consumer \"%s\" in a join is not supported", p.Consumer.Consumer)
	}
	q := t.Alias
	if q == "" {
		q = t.Name
	}
	scope := &Scope{Source: sourceName("relation", q)}
	var star []int
	for i, c := range p.Cols {
		scope.Names = append(scope.Names, c.Name)
		scope.Types = append(scope.Types, c.T)
		scope.Quals = append(scope.Quals, q)
		scope.QualOnly = append(scope.QualOnly, false)
		if shown < 0 || i < shown {
			star = append(star, i)
		}
	}
	return relation{plan: p, scope: scope, star: star}, nil
}

func andAll(es []sql.Expr) sql.Expr {
	var out sql.Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = &sql.BinOp{Op: "AND", L: out, R: e}
		}
	}
	return out
}

// fromJoin plans a join into p (p.Join) and returns the joined scope and
// the columns SELECT * lists (USING columns once). where are the outer
// WHERE's conjuncts: those over one side only are pushed into it (into
// the left side only, for a LEFT join); they are still applied above.
func fromJoin(cat Catalog, j *sql.Join, params *[]Type, p *plantree.SelectPlan, where []sql.Expr, outer *Scope, use *outerUse) (*Scope, []int, error) {
	l0, err := planRelation(cat, &j.Left, params, nil, outer, use)
	if err != nil {
		return nil, nil, err
	}
	r0, lateral, err := planRight(cat, j, params, nil, l0, outer, use)
	if err != nil {
		return nil, nil, err
	}
	var toLeft, toRight, toJoin []sql.Expr
	for _, w := range where {
		switch sideOf(w, l0.scope, r0.scope) {
		case 1:
			toLeft = append(toLeft, w)
		case 2:
			if j.Kind != "LEFT" {
				toRight = append(toRight, w)
			}
		case 3:
			if j.Kind != "LEFT" && !lateral {
				toJoin = append(toJoin, w)
			}
		}
	}
	l, r := l0, r0
	if toLeft != nil {
		if l, err = planRelation(cat, &j.Left, params, toLeft, outer, use); err != nil {
			return nil, nil, err
		}
	}
	if toRight != nil {
		if r, lateral, err = planRight(cat, j, params, toRight, l, outer, use); err != nil {
			return nil, nil, err
		}
	}
	lw, rw := len(l.scope.Names), len(r.scope.Names)
	scope := &Scope{Source: "the join"}
	for _, s := range []*Scope{l.scope, r.scope} {
		scope.Names = append(scope.Names, s.Names...)
		scope.Types = append(scope.Types, s.Types...)
		scope.Quals = append(scope.Quals, s.Quals...)
		scope.QualOnly = append(scope.QualOnly, s.QualOnly...)
	}
	jp := &plantree.JoinPlan{Kind: j.Kind, Left: l.plan, Right: r.plan, LeftWidth: lw, RightWidth: rw, Lateral: lateral}
	b := newBinder(params, scope, cat)
	var conds []plantree.Expr
	hidden := map[int]bool{}
	for _, u := range j.Using {
		li, err := l.scope.resolveRef("", u)
		if err != nil {
			return nil, nil, usingErr(err, u, "left")
		}
		ri, err := r.scope.resolveRef("", u)
		if err != nil {
			return nil, nil, usingErr(err, u, "right")
		}
		lc := &plantree.ColExpr{Idx: li, T: scope.Types[li], Name: u}
		rc := &plantree.ColExpr{Idx: lw + ri, T: scope.Types[lw+ri], Name: u}
		if err := scalar.Comparable(lc, rc, "="); err != nil {
			return nil, nil, err
		}
		conds = append(conds, &plantree.CmpExpr{Op: "=", L: lc, R: rc})
		hidden[lw+ri] = true
		scope.QualOnly[lw+ri] = true
	}
	if j.On != nil {
		b.SRFWhere = "JOIN conditions"
		on, err := b.Bind(j.On, TBool)
		if err != nil {
			return nil, nil, err
		}
		if err := scalar.WantType(on, TBool, "argument of JOIN/ON"); err != nil {
			return nil, nil, err
		}
		conds = plantree.Conjuncts(on, conds)
	}
	// WHERE terms over both sides are conditions of an inner join too, so
	// that FROM a, b WHERE a.k = b.k hashes on k (extractJoinKeys); one
	// that does not bind here is left to the WHERE above, which reports it.
	for _, w := range toJoin {
		c, err := b.Bind(w, TBool)
		if err != nil || c.Type() != TBool {
			continue
		}
		conds = plantree.Conjuncts(c, conds)
	}
	jp.Conds = conds
	p.Join = jp
	p.Subqueries = append(p.Subqueries, b.Subqueries...)
	star := append([]int(nil), l.star...)
	for _, i := range r.star {
		if !hidden[lw+i] {
			star = append(star, lw+i)
		}
	}
	return scope, star, nil
}

func usingErr(err error, col, side string) error {
	if pe, ok := err.(*pgerror.Error); ok && pe.Code == pgerror.CodeAmbiguousColumn {
		return err
	}
	return pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", col, side)
}

// sideOf reports which input a WHERE conjunct reads: 1 left only, 2
// right only, 3 both; 0 neither, or unknown (a subquery, an ambiguous or
// unknown name: left to the WHERE above the join).
func sideOf(e sql.Expr, l, r *Scope) int {
	side := 0
	bad := false
	sql.WalkStmt(&sql.Select{Where: e}, func(x sql.Expr) {
		switch c := x.(type) {
		case *sql.SubLink:
			bad = true
		case *sql.ColumnRef:
			_, lerr := l.resolveRef(c.Table, c.Name)
			_, rerr := r.resolveRef(c.Table, c.Name)
			switch {
			case lerr == nil && rerr != nil:
				side |= 1
			case rerr == nil && lerr != nil:
				side |= 2
			default:
				bad = true
			}
		}
	}, nil)
	if bad {
		return 0
	}
	return side
}

// sqlConjuncts splits a WHERE into its top-level AND terms.
func sqlConjuncts(e sql.Expr, out []sql.Expr) []sql.Expr {
	if b, ok := e.(*sql.BinOp); ok && strings.EqualFold(b.Op, "AND") {
		return sqlConjuncts(b.R, sqlConjuncts(b.L, out))
	}
	if e != nil {
		out = append(out, e)
	}
	return out
}
