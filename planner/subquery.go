package planner

import (
	"errors"
	"fmt"
	"sort"

	"topicgate/planner/catalog"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// scopeEnv is the binder's way back to the statement planner (bindEnv):
// scope's columns, and with cat subqueries and regclass names.
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

// bindSubLink binds a subquery of an expression, which the statement
// planner plans (bindEnv.Subquery): its type, and an IN's left operand.
func (b *binder) bindSubLink(x *sql.SubLink) (plantree.Expr, error) {
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
		e.T = TBool
	case sql.SubScalar, sql.SubIn, sql.SubArray:
		if len(inner.Cols) != 1 {
			return nil, pgerror.New(pgerror.CodeSyntaxError, "subquery must return only one column")
		}
		e.T = inner.Cols[0].T
		if x.Kind == sql.SubArray {
			if e.T.ElemType() != TUnknown {
				return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "ARRAY (subquery) of %s is not supported", e.T)
			}
			e.T = values.ArrayOf(e.T)
		}
	}
	if x.Kind == sql.SubIn {
		ct := e.T
		if e.X, err = b.bind(x.X, ct); err != nil {
			return nil, err
		}
		if isUntyped(e.X) {
			if e.X, err = coerce(e.X, ct); err != nil {
				return nil, err
			}
		}
		xt := e.X.Type()
		if !(xt == ct || xt.IsNumeric() && ct.IsNumeric() || xt.IsText() && ct.IsText() || xt == TNull || ct == TNull) {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s = %s", xt, ct)
		}
		e.T = TBool
	}
	if !correlated {
		b.subs = append(b.subs, e)
	}
	return e, nil
}

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
	b.srfWhere = "VALUES"
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
		out, ct, err := b.bindCommon(col, TUnknown, "VALUES")
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
