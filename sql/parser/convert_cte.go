package parser

import (
	pg "github.com/pganalyze/pg_query_go/v5"
	"google.golang.org/protobuf/reflect/protoreflect"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// cte is one WITH query: its converted SELECT and its column names, or,
// for a WITH RECURSIVE query that refers to itself, rec.
type cte struct {
	sel  *sql.Select
	cols []string
	rec  *sql.RecursiveCTE
	// inRec is set while rec's recursive term is converted: a reference
	// then is the work table, not the whole query.
	inRec bool
}

// lookupCTE finds the WITH query a name refers to, innermost first.
func (c *converter) lookupCTE(name string) *cte {
	for i := len(c.ctes) - 1; i >= 0; i-- {
		if q, ok := c.ctes[i][name]; ok {
			return q
		}
	}
	return nil
}

// withClause converts the WITH queries of a SELECT into scope; the caller
// pops it when the SELECT is done. Under WITH RECURSIVE, a query that
// names itself is a RecursiveCTE; one that does not is an ordinary WITH
// query. (PostgreSQL also lets the queries of WITH RECURSIVE name later
// ones; here each sees only those before it, and itself.)
func (c *converter) withClause(w *pg.WithClause) error {
	scope := map[string]*cte{}
	c.ctes = append(c.ctes, scope)
	for _, n := range w.Ctes {
		ce := n.GetCommonTableExpr()
		if ce == nil {
			return c.unsupported(w.Location, "this WITH item")
		}
		// [NOT] MATERIALIZED is a planner hint in PostgreSQL; ignored.
		sel := ce.Ctequery.GetSelectStmt()
		if sel == nil {
			return c.unsupported(ce.Location, "a data-modifying statement in WITH")
		}
		if _, dup := scope[ce.Ctename]; dup {
			return errAt(pgerror.CodeDuplicateAlias, c.pp.orig(int(ce.Location)), "WITH query name %q specified more than once", ce.Ctename)
		}
		q := &cte{}
		for _, a := range ce.Aliascolnames {
			q.cols = append(q.cols, a.GetString_().GetSval())
		}
		if w.Recursive && namesRelation(sel, ce.Ctename) {
			if err := c.recursiveCTE(ce, sel, q, scope); err != nil {
				return err
			}
			continue
		}
		s, err := c.selectStmt(sel) // sees the WITH queries before it
		if err != nil {
			return err
		}
		q.sel = s
		scope[ce.Ctename] = q
	}
	return nil
}

// recursiveCTE converts a WITH RECURSIVE query that refers to itself,
// after checking it has the shape PostgreSQL's checkWellFormedRecursion
// requires. It enters q into scope before the recursive term is converted,
// so that the term's reference becomes the work table.
func (c *converter) recursiveCTE(ce *pg.CommonTableExpr, sel *pg.SelectStmt, q *cte, scope map[string]*cte) error {
	if err := c.checkRecursion(ce, sel); err != nil {
		return err
	}
	if sel.WithClause != nil { // the UNION's own WITH: seen by both terms
		depth := len(c.ctes)
		defer func() { c.ctes = c.ctes[:depth] }()
		if err := c.withClause(sel.WithClause); err != nil {
			return err
		}
	}
	q.rec = &sql.RecursiveCTE{Name: ce.Ctename, Cols: q.cols, All: sel.All, Pos: c.pos(ce.Location)}
	var err error
	if q.rec.NonRec, err = c.selectStmt(sel.Larg); err != nil {
		return err
	}
	scope[ce.Ctename] = q
	q.inRec = true
	q.rec.Rec, err = c.selectStmt(sel.Rarg)
	q.inRec = false
	return err
}

// recContext is where in a recursive query a reference to it is, as
// PostgreSQL's RecursionContext names it; recOK is the one place allowed.
type recContext int

const (
	recOK recContext = iota
	recNonRecursiveTerm
	recSublink
	recOuterJoin
	recIntersect
	recExcept
)

var recContextText = map[recContext]string{
	recNonRecursiveTerm: "within its non-recursive term",
	recSublink:          "within a subquery",
	recOuterJoin:        "within an outer join",
	recIntersect:        "within INTERSECT",
	recExcept:           "within EXCEPT",
}

// recCheck walks a recursive query's parse tree for its self-references.
type recCheck struct {
	c     *converter
	name  string
	refs  int
	found bool // namesRelation: a reference was seen
}

// checkRecursion reports what PostgreSQL 15 rejects in a recursive query
// (42P19 for a misplaced reference or the wrong form, 0A000 for ORDER BY,
// LIMIT, OFFSET or FOR UPDATE on it), in PostgreSQL's order.
func (c *converter) checkRecursion(ce *pg.CommonTableExpr, sel *pg.SelectStmt) error {
	if sel.Op != pg.SetOperation_SETOP_UNION {
		return errAt(pgerror.CodeInvalidRecursion, c.pp.orig(int(ce.Location)),
			"recursive query \"%s\" does not have the form non-recursive-term UNION [ALL] recursive-term", ce.Ctename)
	}
	rc := &recCheck{c: c, name: ce.Ctename}
	if err := rc.walk(sel.Larg.ProtoReflect(), recNonRecursiveTerm); err != nil {
		return err
	}
	if err := rc.walk(sel.Rarg.ProtoReflect(), recOK); err != nil {
		return err
	}
	if sel.WithClause != nil {
		if err := rc.walk(sel.WithClause.ProtoReflect(), recSublink); err != nil {
			return err
		}
	}
	decoration := func(n *pg.Node, what string) error {
		pos := -1
		if loc := nodeLocation(n); loc >= 0 {
			pos = c.pp.orig(loc)
		}
		return errAt(pgerror.CodeFeatureNotSupported, pos, "%s in a recursive query is not implemented", what)
	}
	switch {
	case len(sel.SortClause) > 0:
		return decoration(sel.SortClause[0], "ORDER BY")
	case sel.LimitOffset != nil:
		return decoration(sel.LimitOffset, "OFFSET")
	case sel.LimitCount != nil:
		return decoration(sel.LimitCount, "LIMIT")
	case len(sel.LockingClause) > 0:
		return decoration(sel.LockingClause[0], "FOR UPDATE/SHARE")
	}
	return nil
}

// namesRelation reports whether sel reads a relation called name (its
// own WITH query when sel is one).
func namesRelation(sel *pg.SelectStmt, name string) bool {
	rc := &recCheck{name: name}
	_ = rc.walk(sel.ProtoReflect(), recOK)
	return rc.found
}

// walk visits m and everything under it in context ctx, with the context
// changes of PostgreSQL's checkWellFormedRecursionWalker: a subquery
// expression's query is recSublink, the nullable side of an outer join
// recOuterJoin, the sides of INTERSECT recIntersect and the right side of
// EXCEPT recExcept. (A subquery in FROM keeps the context, as in
// PostgreSQL.) Without a converter it only records that a reference
// exists.
func (rc *recCheck) walk(m protoreflect.Message, ctx recContext) error {
	switch x := m.Interface().(type) {
	case *pg.RangeVar:
		if x.Schemaname != "" || x.Relname != rc.name {
			return nil
		}
		rc.found = true
		if rc.c == nil {
			return nil
		}
		if ctx != recOK {
			return errAt(pgerror.CodeInvalidRecursion, rc.c.pp.orig(int(x.Location)),
				"recursive reference to query \"%s\" must not appear %s", rc.name, recContextText[ctx])
		}
		if rc.refs++; rc.refs > 1 {
			return errAt(pgerror.CodeInvalidRecursion, rc.c.pp.orig(int(x.Location)),
				"recursive reference to query \"%s\" must not appear more than once", rc.name)
		}
		return nil
	case *pg.SelectStmt:
		switch x.Op {
		case pg.SetOperation_SETOP_INTERSECT:
			return rc.walkSides(x, recIntersect, recIntersect, ctx)
		case pg.SetOperation_SETOP_EXCEPT:
			return rc.walkSides(x, ctx, recExcept, ctx)
		}
	case *pg.JoinExpr:
		l, r := ctx, ctx
		switch x.Jointype {
		case pg.JoinType_JOIN_LEFT:
			r = recOuterJoin
		case pg.JoinType_JOIN_RIGHT:
			l = recOuterJoin
		case pg.JoinType_JOIN_FULL:
			l, r = recOuterJoin, recOuterJoin
		}
		for _, side := range []struct {
			n   *pg.Node
			ctx recContext
		}{{x.Larg, l}, {x.Rarg, r}, {x.Quals, ctx}} {
			if side.n != nil {
				if err := rc.walk(side.n.ProtoReflect(), side.ctx); err != nil {
					return err
				}
			}
		}
		return nil
	case *pg.SubLink:
		if x.Testexpr != nil {
			if err := rc.walk(x.Testexpr.ProtoReflect(), ctx); err != nil {
				return err
			}
		}
		if x.Subselect != nil {
			return rc.walk(x.Subselect.ProtoReflect(), recSublink)
		}
		return nil
	}
	return rc.walkFields(m, ctx)
}

// walkSides walks a set operation's sides in contexts l and r, and the
// rest of it (its ORDER BY, LIMIT, WITH) in ctx.
func (rc *recCheck) walkSides(x *pg.SelectStmt, l, r, ctx recContext) error {
	if x.Larg != nil {
		if err := rc.walk(x.Larg.ProtoReflect(), l); err != nil {
			return err
		}
	}
	if x.Rarg != nil {
		if err := rc.walk(x.Rarg.ProtoReflect(), r); err != nil {
			return err
		}
	}
	rest := &pg.SelectStmt{SortClause: x.SortClause, LimitOffset: x.LimitOffset, LimitCount: x.LimitCount, WithClause: x.WithClause}
	return rc.walkFields(rest.ProtoReflect(), ctx)
}

// walkFields walks every message m holds, directly or in a list.
func (rc *recCheck) walkFields(m protoreflect.Message, ctx recContext) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = rc.walk(l.Get(i).Message(), ctx)
			}
		} else if !fd.IsMap() {
			err = rc.walk(v.Message(), ctx)
		}
		return err == nil
	})
	return err
}

// nodeLocation is where n starts as PostgreSQL's exprLocation reports it
// for the clauses checkRecursion names (a sort key's expression, a
// constant, a column): the location field of the node, -1 if it has none.
func nodeLocation(n *pg.Node) int {
	if sb := n.GetSortBy(); sb != nil && sb.Node != nil {
		return nodeLocation(sb.Node)
	}
	if n.GetNode() == nil {
		return -1
	}
	m := n.ProtoReflect()
	var loc = -1
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
			if f := v.Message().Descriptor().Fields().ByName("location"); f != nil {
				loc = int(v.Message().Get(f).Int())
			}
			return false
		}
		return true
	})
	return loc
}
