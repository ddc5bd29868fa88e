package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// converter turns one pg_query statement tree into our AST.
type converter struct {
	pp        *prepassResult
	hintsUsed int
	// ctes are the WITH queries in scope, innermost last.
	ctes []map[string]*cte
	// windows are the current query level's WINDOW definitions.
	windows map[string]*pg.WindowDef
}

// unsupported returns a 0A000 error naming the feature, at loc (a byte
// offset in the pre-passed text; -1 if unknown).
func (c *converter) unsupported(loc int32, format string, args ...any) error {
	pos := -1
	if loc >= 0 {
		pos = c.pp.orig(int(loc))
	}
	return errAt(pgerror.CodeFeatureNotSupported, pos, format+" is not supported", args...)
}

// pos is the 1-based character position in the query of pg_query's byte
// location loc in the text it parsed; 0 when unknown.
func (c *converter) pos(loc int32) int {
	if loc < 0 {
		return 0
	}
	return charPos(c.pp.query, c.pp.orig(int(loc)))
}

func (c *converter) stmt(n *pg.Node) (sql.Stmt, error) {
	if s, ok, err := c.authStmt(n); ok {
		return s, err
	}
	switch x := n.GetNode().(type) {
	case *pg.Node_SelectStmt:
		return c.selectStmt(x.SelectStmt)
	case *pg.Node_InsertStmt:
		return c.insertStmt(x.InsertStmt)
	case *pg.Node_UpdateStmt:
		return c.updateStmt(x.UpdateStmt)
	case *pg.Node_DeleteStmt:
		return c.deleteStmt(x.DeleteStmt)
	case *pg.Node_CopyStmt:
		return c.copyStmt(x.CopyStmt)
	case *pg.Node_TransactionStmt:
		return c.transactionStmt(x.TransactionStmt)
	case *pg.Node_VariableSetStmt:
		return c.setStmt(x.VariableSetStmt)
	case *pg.Node_VariableShowStmt:
		return &sql.Show{Name: strings.ToLower(x.VariableShowStmt.Name)}, nil
	case *pg.Node_ExplainStmt:
		return c.explainStmt(x.ExplainStmt)
	case *pg.Node_DiscardStmt:
		what := strings.ToLower(strings.TrimPrefix(x.DiscardStmt.Target.String(), "DISCARD_"))
		return &sql.Discard{What: what}, nil
	case *pg.Node_DeallocateStmt:
		name := x.DeallocateStmt.Name
		return &sql.Deallocate{Name: name, All: name == ""}, nil
	case *pg.Node_DeclareCursorStmt:
		return c.declareCursor(x.DeclareCursorStmt)
	case *pg.Node_FetchStmt:
		return c.fetch(x.FetchStmt), nil
	case *pg.Node_ClosePortalStmt:
		name := x.ClosePortalStmt.Portalname
		return &sql.CloseCursor{Name: name, All: name == ""}, nil
	case *pg.Node_CreateStmt:
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "CREATE TABLE is not supported; use CREATE TOPIC")
	case *pg.Node_AlterTableStmt:
		return c.alterTable(x.AlterTableStmt)
	case *pg.Node_DropStmt:
		if x.DropStmt.RemoveType == pg.ObjectType_OBJECT_TABLE {
			return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "DROP TABLE is not supported; use DROP TOPIC")
		}
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "%s is not supported", stmtName(c.pp.text))
}

// stmtName names a statement by its leading keywords, e.g. "CREATE INDEX".
func stmtName(text string) string {
	toks, err := lex(text)
	if err != nil || len(toks) < 2 {
		return "this statement"
	}
	var words []string
	for _, t := range toks {
		if t.Kind != tIdent || len(words) == 5 {
			break
		}
		w := strings.ToUpper(t.Val)
		words = append(words, w)
		if len(words) == 1 && w != "CREATE" && w != "ALTER" && w != "DROP" {
			break
		}
		if len(words) > 1 && w != "OR" && w != "REPLACE" && w != "UNIQUE" && w != "TEMP" && w != "TEMPORARY" {
			break
		}
	}
	if len(words) == 0 {
		return "this statement"
	}
	return strings.Join(words, " ")
}

func (c *converter) selectStmt(s *pg.SelectStmt) (*sql.Select, error) {
	if s.WithClause != nil {
		depth := len(c.ctes)
		defer func() { c.ctes = c.ctes[:depth] }()
		if err := c.withClause(s.WithClause); err != nil {
			return nil, err
		}
	}
	if s.Op != pg.SetOperation_SETOP_NONE {
		return c.setOp(s)
	}
	switch {
	case len(s.ValuesLists) > 0:
		// VALUES as a query is SELECT * FROM (VALUES ...) with its ORDER
		// BY, LIMIT and OFFSET, columns column1, column2, ...
		values := &pg.SelectStmt{ValuesLists: s.ValuesLists, Op: pg.SetOperation_SETOP_NONE, LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT}
		star := &pg.Node{Node: &pg.Node_ColumnRef{ColumnRef: &pg.ColumnRef{Fields: []*pg.Node{{Node: &pg.Node_AStar{AStar: &pg.A_Star{}}}}, Location: -1}}}
		wrapped := &pg.SelectStmt{
			TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: star, Location: -1}}}},
			FromClause: []*pg.Node{{Node: &pg.Node_RangeSubselect{RangeSubselect: &pg.RangeSubselect{
				Subquery: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: values}},
				Alias:    &pg.Alias{Aliasname: "*VALUES*"}}}}},
			SortClause: s.SortClause, LimitCount: s.LimitCount, LimitOffset: s.LimitOffset, LimitOption: s.LimitOption,
			Op: pg.SetOperation_SETOP_NONE,
		}
		return c.selectStmt(wrapped)
	case s.IntoClause != nil:
		return nil, c.unsupported(-1, "SELECT INTO")
	case len(s.LockingClause) > 0:
		return nil, c.unsupported(-1, "FOR UPDATE/SHARE")
	case s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES:
		return nil, c.unsupported(-1, "FETCH ... WITH TIES")
	case s.GroupDistinct:
		return nil, c.unsupported(-1, "GROUP BY DISTINCT")
	}
	saved := c.windows
	defer func() { c.windows = saved }()
	c.windows = nil
	for _, n := range s.WindowClause {
		w := n.GetWindowDef()
		if w == nil {
			return nil, c.unsupported(-1, "this WINDOW clause")
		}
		if _, dup := c.windows[w.Name]; dup {
			return nil, errAt(pgerror.CodeWindowingError, c.pp.orig(int(w.Location)), "window \"%s\" is already defined", w.Name)
		}
		if _, ok := c.windows[w.Refname]; w.Refname != "" && !ok { // only earlier ones: no cycles
			return nil, errAt(pgerror.CodeUndefinedObject, c.pp.orig(int(w.Location)), "window \"%s\" does not exist", w.Refname)
		}
		if c.windows == nil {
			c.windows = map[string]*pg.WindowDef{}
		}
		c.windows[w.Name] = w
	}
	out := &sql.Select{}
	if len(s.DistinctClause) > 0 {
		if len(s.DistinctClause) == 1 && s.DistinctClause[0].GetNode() == nil {
			out.Distinct = true
		} else {
			var err error
			if out.DistinctOn, err = c.exprs(s.DistinctClause); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if out.Targets, err = c.targets(s.TargetList); err != nil {
		return nil, err
	}
	for i, n := range s.FromClause {
		t, err := c.fromItem(n)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out.From = &t
			continue
		}
		out.From = &sql.TableRef{Join: &sql.Join{Kind: "CROSS", Left: *out.From, Right: t}}
	}
	if out.Where, err = c.exprOpt(s.WhereClause); err != nil {
		return nil, err
	}
	if out.GroupBy, err = c.exprs(s.GroupClause); err != nil {
		return nil, err
	}
	if out.Having, err = c.exprOpt(s.HavingClause); err != nil {
		return nil, err
	}
	if err := c.orderLimit(s, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *converter) fromItemErr(n *pg.Node) error {
	switch x := n.GetNode().(type) {
	case *pg.Node_RangeFunction:
		return c.unsupported(-1, "a function in FROM")
	default:
		return c.unsupported(-1, "FROM item %s", nodeName(x))
	}
}

// orderLimit converts a SELECT's ORDER BY, LIMIT and OFFSET into out.
func (c *converter) orderLimit(s *pg.SelectStmt, out *sql.Select) error {
	var err error
	if out.OrderBy, err = c.orderBy(s.SortClause); err != nil {
		return err
	}
	if out.Limit, err = c.exprOpt(s.LimitCount); err != nil {
		return err
	}
	if k, ok := out.Limit.(*sql.Const); ok && k.Lit.Kind == sql.LitNull {
		out.Limit = nil // LIMIT ALL
	}
	out.Offset, err = c.exprOpt(s.LimitOffset)
	return err
}

// fromItem converts one FROM item: a name, a subquery, a VALUES list or a
// join of two items.
func (c *converter) fromItem(n *pg.Node) (sql.TableRef, error) {
	if rs := n.GetRangeSubselect(); rs != nil {
		return c.derivedTable(rs)
	}
	if rv := n.GetRangeVar(); rv != nil {
		return c.tableRef(rv)
	}
	if rf := n.GetRangeFunction(); rf != nil {
		return c.rangeFunction(rf)
	}
	j := n.GetJoinExpr()
	if j == nil {
		return sql.TableRef{}, c.fromItemErr(n)
	}
	switch {
	case j.IsNatural:
		return sql.TableRef{}, c.unsupported(-1, "NATURAL JOIN")
	case j.Alias != nil || j.JoinUsingAlias != nil:
		return sql.TableRef{}, c.unsupported(-1, "an alias on a JOIN")
	}
	out := &sql.Join{Kind: "INNER"}
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		if j.Quals == nil && len(j.UsingClause) == 0 {
			out.Kind = "CROSS"
		}
	case pg.JoinType_JOIN_LEFT:
		out.Kind = "LEFT"
	case pg.JoinType_JOIN_RIGHT:
		return sql.TableRef{}, c.unsupported(-1, "RIGHT JOIN (swap the two sides and use LEFT JOIN)")
	case pg.JoinType_JOIN_FULL:
		return sql.TableRef{}, c.unsupported(-1, "FULL JOIN")
	default:
		return sql.TableRef{}, c.unsupported(-1, "this join")
	}
	var err error
	if out.Left, err = c.fromItem(j.Larg); err != nil {
		return sql.TableRef{}, err
	}
	if out.Right, err = c.fromItem(j.Rarg); err != nil {
		return sql.TableRef{}, err
	}
	if out.On, err = c.exprOpt(j.Quals); err != nil {
		return sql.TableRef{}, err
	}
	for _, u := range j.UsingClause {
		out.Using = append(out.Using, u.GetString_().GetSval())
	}
	return sql.TableRef{Join: out}, nil
}

// setOp converts a UNION, INTERSECT or EXCEPT into SELECT * FROM (the
// set operation) with the statement's ORDER BY, LIMIT and OFFSET.
func (c *converter) setOp(s *pg.SelectStmt) (*sql.Select, error) {
	op := &sql.SetOp{Op: strings.TrimPrefix(s.Op.String(), "SETOP_"), All: s.All}
	var err error
	if op.Left, err = c.selectStmt(s.Larg); err != nil {
		return nil, err
	}
	if op.Right, err = c.selectStmt(s.Rarg); err != nil {
		return nil, err
	}
	out := &sql.Select{Targets: []sql.Target{{Expr: &sql.Star{}}}, From: &sql.TableRef{SetOp: op}}
	if err := c.orderLimit(s, out); err != nil {
		return nil, err
	}
	return out, nil
}

// derivedTable converts a subquery or VALUES list in FROM; a LATERAL one
// is a subquery (a VALUES list in it too, as a SELECT).
func (c *converter) derivedTable(rs *pg.RangeSubselect) (sql.TableRef, error) {
	sel := rs.Subquery.GetSelectStmt()
	if sel == nil {
		return sql.TableRef{}, c.unsupported(-1, "this subquery in FROM")
	}
	t := sql.TableRef{Lateral: rs.Lateral}
	if rs.Alias != nil {
		t.Alias = rs.Alias.Aliasname
		for _, n := range rs.Alias.Colnames {
			t.ColAliases = append(t.ColAliases, n.GetString_().GetSval())
		}
	}
	if len(sel.ValuesLists) > 0 && !rs.Lateral && sel.Op == pg.SetOperation_SETOP_NONE && sel.WithClause == nil &&
		len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil {
		for _, row := range sel.ValuesLists {
			l := row.GetList()
			if l == nil {
				return sql.TableRef{}, c.unsupported(-1, "this VALUES row")
			}
			vals, err := c.exprs(l.Items)
			if err != nil {
				return sql.TableRef{}, err
			}
			t.Values = append(t.Values, vals)
		}
		return t, nil
	}
	s, err := c.selectStmt(sel)
	if err != nil {
		return sql.TableRef{}, err
	}
	t.Sub = s
	return t, nil
}

// tableRef converts a RangeVar and attaches the pre-pass hints. A bare
// name that a WITH query in scope defines is that query.
func (c *converter) tableRef(rv *pg.RangeVar) (sql.TableRef, error) {
	if rv.Catalogname != "" {
		return sql.TableRef{}, c.unsupported(rv.Location, "a catalog-qualified name")
	}
	t := sql.TableRef{Schema: rv.Schemaname, Name: rv.Relname}
	if rv.Alias != nil {
		t.Alias = rv.Alias.Aliasname
		for _, n := range rv.Alias.Colnames {
			t.ColAliases = append(t.ColAliases, n.GetString_().GetSval())
		}
	}
	if q := c.lookupCTE(rv.Relname); q != nil && rv.Schemaname == "" {
		if rv.Location >= 0 {
			if _, ok := c.pp.hints[int(rv.Location)]; ok {
				return sql.TableRef{}, c.unsupported(rv.Location, "WITH (...) hints on a WITH query")
			}
		}
		switch {
		case q.inRec:
			t.Name, t.WorkTable = "", q.rec
		case q.rec != nil:
			t.Name, t.Recursive = "", q.rec
		default:
			t.Name, t.Sub = "", q.sel // a derived table, as if written in place
		}
		if t.Alias == "" {
			t.Alias = rv.Relname
		}
		if t.ColAliases == nil {
			t.ColAliases = q.cols
		}
		return t, nil
	}
	if len(t.ColAliases) > 0 {
		return sql.TableRef{}, c.unsupported(rv.Location, "a column alias list on a topic")
	}
	if rv.Location >= 0 {
		orig := c.pp.orig(int(rv.Location))
		t.Pos = charPos(c.pp.query, orig)
		if h, ok := c.pp.hints[int(rv.Location)]; ok && !h.used {
			h.used = true
			c.hintsUsed++
			t.Hints = h.opts
		}
	}
	return t, nil
}

func (c *converter) targets(list []*pg.Node) ([]sql.Target, error) {
	var out []sql.Target
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil {
			return nil, c.unsupported(-1, "target %s", nodeName(n.GetNode()))
		}
		e, err := c.expr(rt.Val)
		if err != nil {
			return nil, err
		}
		out = append(out, sql.Target{Expr: e, Alias: rt.Name})
	}
	return out, nil
}

func (c *converter) insertStmt(s *pg.InsertStmt) (sql.Stmt, error) {
	switch {
	case s.WithClause != nil:
		return nil, c.unsupported(s.WithClause.Location, "WITH (common table expressions)")
	case s.OnConflictClause != nil:
		return nil, c.unsupported(s.OnConflictClause.Location, "ON CONFLICT")
	case s.SelectStmt == nil:
		return nil, c.unsupported(-1, "INSERT ... DEFAULT VALUES")
	}
	t, err := c.tableRef(s.Relation)
	if err != nil {
		return nil, err
	}
	out := &sql.Insert{Table: t}
	for _, n := range s.Cols {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil, c.unsupported(-1, "INSERT into a subfield or array element")
		}
		out.Columns = append(out.Columns, rt.Name)
	}
	sel := s.SelectStmt.GetSelectStmt()
	if sel == nil {
		return nil, c.unsupported(-1, "this INSERT source")
	}
	if len(sel.ValuesLists) > 0 && sel.Op == pg.SetOperation_SETOP_NONE && sel.WithClause == nil &&
		len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil {
		for _, row := range sel.ValuesLists {
			l := row.GetList()
			if l == nil {
				return nil, c.unsupported(-1, "this VALUES row")
			}
			vals, err := c.exprs(l.Items)
			if err != nil {
				return nil, err
			}
			out.Values = append(out.Values, vals)
		}
	} else if out.Select, err = c.selectStmt(sel); err != nil {
		return nil, err
	}
	if out.Returning, err = c.targets(s.ReturningList); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *converter) updateStmt(s *pg.UpdateStmt) (sql.Stmt, error) {
	switch {
	case s.WithClause != nil:
		return nil, c.unsupported(s.WithClause.Location, "WITH (common table expressions)")
	case len(s.FromClause) > 0:
		return nil, c.unsupported(-1, "UPDATE ... FROM")
	}
	t, err := c.tableRef(s.Relation)
	if err != nil {
		return nil, err
	}
	out := &sql.Update{Table: t}
	for _, n := range s.TargetList {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 || rt.Val.GetMultiAssignRef() != nil {
			return nil, c.unsupported(-1, "this SET clause")
		}
		e, err := c.expr(rt.Val)
		if err != nil {
			return nil, err
		}
		out.Set = append(out.Set, sql.SetClause{Column: rt.Name, Value: e})
	}
	if out.Where, err = c.exprOpt(s.WhereClause); err != nil {
		return nil, err
	}
	if out.Returning, err = c.targets(s.ReturningList); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *converter) deleteStmt(s *pg.DeleteStmt) (sql.Stmt, error) {
	switch {
	case s.WithClause != nil:
		return nil, c.unsupported(s.WithClause.Location, "WITH (common table expressions)")
	case len(s.UsingClause) > 0:
		return nil, c.unsupported(-1, "DELETE ... USING")
	}
	t, err := c.tableRef(s.Relation)
	if err != nil {
		return nil, err
	}
	out := &sql.Delete{Table: t}
	if out.Where, err = c.exprOpt(s.WhereClause); err != nil {
		return nil, err
	}
	if out.Returning, err = c.targets(s.ReturningList); err != nil {
		return nil, err
	}
	return out, nil
}

// orderBy converts an ORDER BY list (of a SELECT or inside an aggregate).
func (c *converter) orderBy(nodes []*pg.Node) ([]sql.OrderBy, error) {
	var out []sql.OrderBy
	for _, n := range nodes {
		sb := n.GetSortBy()
		if sb == nil || len(sb.UseOp) > 0 {
			return nil, c.unsupported(-1, "ORDER BY USING")
		}
		e, err := c.expr(sb.Node)
		if err != nil {
			return nil, err
		}
		o := sql.OrderBy{Expr: e, Desc: sb.SortbyDir == pg.SortByDir_SORTBY_DESC}
		switch sb.SortbyNulls {
		case pg.SortByNulls_SORTBY_NULLS_FIRST:
			t := true
			o.NullsFirst = &t
		case pg.SortByNulls_SORTBY_NULLS_LAST:
			f := false
			o.NullsFirst = &f
		}
		out = append(out, o)
	}
	return out, nil
}

// rangeFunction converts a function in FROM: one function, WITH
// ORDINALITY or not, no ROWS FROM or column definition list. LATERAL is
// accepted and changes nothing (a function in FROM always is).
func (c *converter) rangeFunction(rf *pg.RangeFunction) (sql.TableRef, error) {
	if rf.IsRowsfrom || len(rf.Functions) != 1 {
		return sql.TableRef{}, c.unsupported(-1, "ROWS FROM")
	}
	if len(rf.Coldeflist) > 0 {
		return sql.TableRef{}, c.unsupported(-1, "a column definition list")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil || len(items) > 1 && items[1] != nil && items[1].GetNode() != nil {
		return sql.TableRef{}, c.unsupported(-1, "this function in FROM")
	}
	e, err := c.funcCall(items[0].GetFuncCall())
	if err != nil {
		return sql.TableRef{}, err
	}
	f, ok := e.(*sql.FuncCall)
	if !ok {
		return sql.TableRef{}, c.unsupported(-1, "this function in FROM")
	}
	t := sql.TableRef{Func: f, Name: f.Name, Ordinality: rf.Ordinality}
	if rf.Alias != nil {
		t.Alias = rf.Alias.Aliasname
		for _, n := range rf.Alias.Colnames {
			t.ColAliases = append(t.ColAliases, n.GetString_().GetSval())
		}
	}
	return t, nil
}
