package planner

import (
	"fmt"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// fromSubquery plans a derived table (a subquery in FROM or a WITH query)
// and returns its scope.
//
// In a subquery of an expression, the derived table may name columns of
// the query around that subquery (outer, recording them in use), as in
// PostgreSQL: it runs while that query's row is the outer one.
func fromSubquery(cat Catalog, t *sql.TableRef, params *[]Type, p *plantree.SelectPlan, outer *Scope, use *outerUse) (*Scope, error) {
	inner, err := planSelectIn(cat, t.Sub, params, outer, use)
	if err != nil {
		return nil, err
	}
	p.Sub = inner
	return aliasedScope(t, inner.Cols, sourceName("subquery", t.Alias))
}

// aliasedScope is the scope of FROM item t's columns cols, renamed by its
// column aliases.
func aliasedScope(t *sql.TableRef, cols []plantree.Column, source string) (*Scope, error) {
	names := make([]string, len(cols))
	types := make([]Type, len(cols))
	for i, c := range cols {
		names[i], types[i] = c.Name, c.T
	}
	if err := applyColAliases(t, names); err != nil {
		return nil, err
	}
	return &Scope{Names: names, Types: types, Source: source}, nil
}

// fromValues binds a VALUES list in FROM: each column takes the type
// PostgreSQL resolves for it (as for UNION), and is named columnN. Its
// expressions may read outer (nil for none), the query around a subquery
// or the left side of a LATERAL subquery, recording it in use.
func fromValues(t *sql.TableRef, params *[]Type, p *plantree.SelectPlan, outer *Scope, use *outerUse) (*Scope, error) {
	width := len(t.Values[0])
	for _, row := range t.Values {
		if len(row) != width {
			return nil, pgerror.New(pgerror.CodeSyntaxError, "VALUES lists must all be the same length")
		}
	}
	b := newBinder(params, nil, nil)
	if outer != nil {
		b = newBinder(params, (&Scope{Source: "VALUES"}).withOuter(outer, use, "\x00"), nil)
	}
	b.SRFWhere = "VALUES"
	p.Values = make([][]plantree.Expr, len(t.Values))
	for i := range p.Values {
		p.Values[i] = make([]plantree.Expr, width)
	}
	names := make([]string, width)
	types := make([]Type, width)
	for c := 0; c < width; c++ {
		col := make([]sql.Expr, len(t.Values))
		for r, row := range t.Values {
			col[r] = row[c]
		}
		out, ct, err := b.BindCommon(col, TUnknown, "VALUES")
		if err != nil {
			return nil, err
		}
		for r := range out {
			p.Values[r][c] = out[r]
		}
		names[c], types[c] = fmt.Sprintf("column%d", c+1), ct
	}
	if err := applyColAliases(t, names); err != nil {
		return nil, err
	}
	return &Scope{Names: names, Types: types, Source: sourceName("VALUES", t.Alias)}, nil
}

func applyColAliases(t *sql.TableRef, names []string) error {
	if len(t.ColAliases) > len(names) {
		return pgerror.Newf(pgerror.CodeInvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified",
			t.Alias, len(names), len(t.ColAliases))
	}
	copy(names, t.ColAliases)
	return nil
}

func sourceName(kind, alias string) string {
	if alias == "" {
		return kind
	}
	return kind + " \"" + alias + "\""
}

// fromSetOp plans a set operation's sides and resolves each column's
// type as PostgreSQL does for UNION (numeric types widen; the left side
// names the columns). Both sides may read outer (nil for none), recording
// it in use, as a derived table does.
func fromSetOp(cat Catalog, t *sql.TableRef, params *[]Type, p *plantree.SelectPlan, outer *Scope, use *outerUse) (*Scope, error) {
	op := t.SetOp
	l, err := planSelectIn(cat, op.Left, params, outer, use)
	if err != nil {
		return nil, err
	}
	r, err := planSelectIn(cat, op.Right, params, outer, use)
	if err != nil {
		return nil, err
	}
	if len(l.Cols) != len(r.Cols) {
		return nil, pgerror.Newf(pgerror.CodeSyntaxError, "each %s query must have the same number of columns", op.Op)
	}
	names := make([]string, len(l.Cols))
	types := make([]Type, len(l.Cols))
	for i := range l.Cols {
		ct, err := unionType(l.Cols[i].T, r.Cols[i].T, op.Op)
		if err != nil {
			return nil, err
		}
		for _, side := range []*plantree.SelectPlan{l, r} {
			if side.Cols[i].T != ct {
				side.Project[i] = &plantree.CastExpr{X: side.Project[i], T: ct}
				side.Cols[i].T = ct
			}
		}
		names[i], types[i] = l.Cols[i].Name, ct
	}
	p.SetOp = &plantree.SetOpPlan{Op: op.Op, All: op.All, Left: l, Right: r}
	return &Scope{Names: names, Types: types, Source: "the " + op.Op}, nil
}

// unionType is the type PostgreSQL resolves for a column of a set
// operation op whose sides have types lt and rt (numeric types widen, text
// types are text, a NULL or unknown side takes the other's type).
func unionType(lt, rt Type, op string) (Type, error) {
	switch {
	case lt == rt:
		return lt, nil
	case lt == TNull || lt == TUnknown:
		return rt, nil
	case rt == TNull || rt == TUnknown:
		return lt, nil
	case lt.IsNumeric() && rt.IsNumeric():
		return max(plantree.RankOf(lt), plantree.RankOf(rt)).Type(), nil
	case lt.IsText() && rt.IsText():
		return TText, nil
	case (lt == TDate || lt == TTimestamptz) && (rt == TDate || rt == TTimestamptz):
		return TTimestamptz, nil
	}
	return lt, pgerror.Newf(pgerror.CodeDatatypeMismatch, "%s types %s and %s cannot be matched", op, lt, rt)
}
