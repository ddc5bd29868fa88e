package parser

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// nodeName names a pg_query node kind for error messages ("JoinExpr").
func nodeName(x any) string {
	s := fmt.Sprintf("%T", x)
	s = s[strings.LastIndexByte(s, '.')+1:]
	return strings.TrimSuffix(strings.TrimPrefix(s, "Node_"), "_")
}

// exprKindName names an unsupported expression node for 0A000 messages.
func exprKindName(x any) string {
	switch x.(type) {
	case *pg.Node_AIndirection:
		return "array subscript or field selection"
	case *pg.Node_CollateClause:
		return "COLLATE"
	case *pg.Node_RowExpr:
		return "a ROW constructor"
	case *pg.Node_GroupingFunc:
		return "GROUPING"
	case *pg.Node_XmlExpr, *pg.Node_XmlSerialize:
		return "XML functions"
	}
	return "expression " + nodeName(x)
}

func (c *converter) exprOpt(n *pg.Node) (sql.Expr, error) {
	if n == nil {
		return nil, nil
	}
	return c.expr(n)
}

func (c *converter) exprs(list []*pg.Node) ([]sql.Expr, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]sql.Expr, 0, len(list))
	for _, n := range list {
		e, err := c.expr(n)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// opName returns the single unqualified operator name of an A_Expr.
func opName(names []*pg.Node) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1].GetString_().GetSval()
}

// expr converts an expression node, or refuses it with 0A000 naming it.
func (c *converter) expr(n *pg.Node) (sql.Expr, error) {
	switch x := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		return c.columnRef(x.ColumnRef)
	case *pg.Node_AConst:
		return c.aConst(x.AConst)
	case *pg.Node_ParamRef:
		if x.ParamRef.Number < 1 {
			return nil, errAt(pgerror.CodeUndefinedParameter, c.pp.orig(int(x.ParamRef.Location)),
				"there is no parameter $%d", x.ParamRef.Number)
		}
		return &sql.ParamRef{N: int(x.ParamRef.Number)}, nil
	case *pg.Node_AExpr:
		return c.aExpr(x.AExpr)
	case *pg.Node_BoolExpr:
		return c.boolExpr(x.BoolExpr)
	case *pg.Node_NullTest:
		e, err := c.expr(x.NullTest.Arg)
		if err != nil {
			return nil, err
		}
		return &sql.IsNull{X: e, Not: x.NullTest.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case *pg.Node_BooleanTest:
		return c.booleanTest(x.BooleanTest)
	case *pg.Node_FuncCall:
		return c.funcCall(x.FuncCall)
	case *pg.Node_TypeCast:
		e, err := c.expr(x.TypeCast.Arg)
		if err != nil {
			return nil, err
		}
		typ, err := c.typeName(x.TypeCast.TypeName)
		if err != nil {
			return nil, err
		}
		return &sql.Cast{X: e, Type: typ, TypePos: c.pos(x.TypeCast.TypeName.GetLocation())}, nil
	case *pg.Node_CaseExpr:
		return c.caseExpr(x.CaseExpr)
	case *pg.Node_CoalesceExpr:
		args, err := c.exprs(x.CoalesceExpr.Args)
		if err != nil {
			return nil, err
		}
		return &sql.Coalesce{Args: args}, nil
	case *pg.Node_MinMaxExpr:
		args, err := c.exprs(x.MinMaxExpr.Args)
		if err != nil {
			return nil, err
		}
		name := "greatest"
		if x.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			name = "least"
		}
		return &sql.FuncCall{Name: name, Args: args}, nil
	case *pg.Node_AArrayExpr:
		elems, err := c.exprs(x.AArrayExpr.Elements)
		if err != nil {
			return nil, err
		}
		return &sql.ArrayLit{Elems: elems}, nil
	case *pg.Node_SubLink:
		return c.subLink(x.SubLink)
	case *pg.Node_SetToDefault:
		return &sql.Default{}, nil
	case *pg.Node_SqlvalueFunction:
		name := strings.ToLower(strings.TrimPrefix(x.SqlvalueFunction.Op.String(), "SVFOP_"))
		if x.SqlvalueFunction.Typmod >= 0 {
			return nil, c.unsupported(x.SqlvalueFunction.Location, "%s with a precision", strings.ToUpper(name))
		}
		return &sql.FuncCall{Name: name}, nil
	case *pg.Node_AStar:
		return &sql.Star{}, nil
	case *pg.Node_CollateClause:
		return c.collate(x.CollateClause)
	case *pg.Node_AIndirection:
		return c.indirection(x.AIndirection)
	case nil:
	default:
		return nil, c.unsupported(-1, "%s", exprKindName(x))
	}
	return nil, c.unsupported(-1, "this expression")
}

// boolExpr converts NOT, and AND and OR (left-deep over their arguments).
func (c *converter) boolExpr(b *pg.BoolExpr) (sql.Expr, error) {
	args, err := c.exprs(b.Args)
	if err != nil {
		return nil, err
	}
	switch b.Boolop {
	case pg.BoolExprType_NOT_EXPR:
		return &sql.UnaryOp{Op: "NOT", X: args[0]}, nil
	case pg.BoolExprType_AND_EXPR, pg.BoolExprType_OR_EXPR:
		op := "AND"
		if b.Boolop == pg.BoolExprType_OR_EXPR {
			op = "OR"
		}
		e := args[0]
		for _, a := range args[1:] {
			e = &sql.BinOp{Op: op, L: e, R: a}
		}
		return e, nil
	}
	return nil, c.unsupported(-1, "this expression")
}

// booleanTest converts x IS [NOT] TRUE, FALSE or UNKNOWN.
func (c *converter) booleanTest(t *pg.BooleanTest) (sql.Expr, error) {
	e, err := c.expr(t.Arg)
	if err != nil {
		return nil, err
	}
	switch t.Booltesttype {
	case pg.BoolTestType_IS_TRUE:
		return &sql.IsBool{X: e, Value: true}, nil
	case pg.BoolTestType_IS_NOT_TRUE:
		return &sql.IsBool{X: e, Value: true, Not: true}, nil
	case pg.BoolTestType_IS_FALSE:
		return &sql.IsBool{X: e, Value: false}, nil
	case pg.BoolTestType_IS_NOT_FALSE:
		return &sql.IsBool{X: e, Value: false, Not: true}, nil
	case pg.BoolTestType_IS_UNKNOWN:
		return &sql.IsBool{X: e, Unknown: true}, nil
	case pg.BoolTestType_IS_NOT_UNKNOWN:
		return &sql.IsBool{X: e, Unknown: true, Not: true}, nil
	}
	return nil, c.unsupported(t.Location, "this boolean test")
}

// subLink converts a subquery expression: scalar, EXISTS, ARRAY, or
// x IN / = ANY (subquery).
func (c *converter) subLink(sl *pg.SubLink) (sql.Expr, error) {
	out := &sql.SubLink{}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXPR_SUBLINK:
	case pg.SubLinkType_EXISTS_SUBLINK:
		out.Kind = sql.SubExists
	case pg.SubLinkType_ARRAY_SUBLINK:
		out.Kind = sql.SubArray
	case pg.SubLinkType_ANY_SUBLINK:
		// x IN (subquery) has no operator name; = ANY (subquery) has "=".
		if len(sl.OperName) > 1 || len(sl.OperName) == 1 && sl.OperName[0].GetString_().GetSval() != "=" {
			return nil, c.unsupported(sl.Location, "an operator other than = with ANY (subquery)")
		}
		out.Kind = sql.SubIn
		var err error
		if out.X, err = c.expr(sl.Testexpr); err != nil {
			return nil, err
		}
	default:
		return nil, c.unsupported(sl.Location, "%s", subLinkNames[sl.SubLinkType])
	}
	sel := sl.Subselect.GetSelectStmt()
	if sel == nil {
		return nil, c.unsupported(sl.Location, "this subquery")
	}
	s, err := c.selectStmt(sel)
	if err != nil {
		return nil, err
	}
	out.Select = s
	return out, nil
}

func (c *converter) columnRef(cr *pg.ColumnRef) (sql.Expr, error) {
	var parts []string
	star := false
	for i, f := range cr.Fields {
		switch v := f.GetNode().(type) {
		case *pg.Node_String_:
			parts = append(parts, v.String_.Sval)
		case *pg.Node_AStar:
			if i != len(cr.Fields)-1 {
				return nil, c.unsupported(cr.Location, "this column reference")
			}
			star = true
		default:
			return nil, c.unsupported(cr.Location, "this column reference")
		}
	}
	if star {
		if len(parts) > 1 {
			return nil, c.unsupported(cr.Location, "a schema-qualified column reference")
		}
		s := &sql.Star{}
		if len(parts) == 1 {
			s.Table = parts[0]
		}
		return s, nil
	}
	switch len(parts) {
	case 1:
		return &sql.ColumnRef{Name: parts[0], Pos: c.pos(cr.Location)}, nil
	case 2:
		return &sql.ColumnRef{Table: parts[0], Name: parts[1], Pos: c.pos(cr.Location)}, nil
	}
	return nil, c.unsupported(cr.Location, "a schema-qualified column reference")
}

func (c *converter) aConst(k *pg.A_Const) (sql.Expr, error) {
	e, err := c.aConstValue(k)
	if kc, ok := e.(*sql.Const); ok && err == nil {
		kc.Pos = c.pos(k.Location)
	}
	return e, err
}

func (c *converter) aConstValue(k *pg.A_Const) (sql.Expr, error) {
	if k.Isnull {
		return &sql.Const{Lit: sql.Literal{Kind: sql.LitNull}}, nil
	}
	switch v := k.Val.(type) {
	case *pg.A_Const_Ival:
		return &sql.Const{Lit: sql.Literal{Kind: sql.LitInt, Int: int64(v.Ival.Ival)}}, nil
	case *pg.A_Const_Fval:
		s := strings.ReplaceAll(v.Fval.Fval, "_", "")
		if !strings.ContainsAny(s, ".eE") {
			base := 10
			if len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1])) {
				base = 0
			}
			if n, err := strconv.ParseInt(s, base, 64); err == nil {
				return &sql.Const{Lit: sql.Literal{Kind: sql.LitInt, Int: n}}, nil
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return &sql.Const{Lit: sql.Literal{Kind: sql.LitFloat, Float: f, Str: s}}, nil
	case *pg.A_Const_Sval:
		if lit, ok := c.pp.lits[int(k.Location)]; ok {
			return &sql.Const{Lit: lit}, nil
		}
		return &sql.Const{Lit: sql.Literal{Kind: sql.LitString, Str: v.Sval.Sval}}, nil
	case *pg.A_Const_Boolval:
		return &sql.Const{Lit: sql.Literal{Kind: sql.LitBool, Bool: v.Boolval.Boolval}}, nil
	case *pg.A_Const_Bsval:
		return nil, c.unsupported(k.Location, "a bit-string constant")
	}
	return nil, c.unsupported(k.Location, "this constant")
}

var subLinkNames = map[pg.SubLinkType]string{
	pg.SubLinkType_EXISTS_SUBLINK: "EXISTS (subquery)", pg.SubLinkType_ANY_SUBLINK: "IN/ANY (subquery)",
	pg.SubLinkType_ALL_SUBLINK: "ALL (subquery)", pg.SubLinkType_ARRAY_SUBLINK: "ARRAY (subquery)",
	pg.SubLinkType_ROWCOMPARE_SUBLINK: "a row comparison with a subquery",
	pg.SubLinkType_MULTIEXPR_SUBLINK:  "a multiple-column subquery",
	pg.SubLinkType_CTE_SUBLINK:        "this subquery", pg.SubLinkType_SUB_LINK_TYPE_UNDEFINED: "this subquery",
}

var likeOps = map[string]string{"~~": "LIKE", "!~~": "NOT LIKE", "~~*": "ILIKE", "!~~*": "NOT ILIKE"}

func (c *converter) aExpr(a *pg.A_Expr) (sql.Expr, error) {
	op := opName(a.Name)
	if len(a.Name) > 1 && a.Name[0].GetString_().GetSval() != "pg_catalog" {
		return nil, c.unsupported(a.Location, "a schema-qualified operator")
	}
	var l, r sql.Expr
	var err error
	if a.Lexpr != nil && a.Kind != pg.A_Expr_Kind_AEXPR_IN {
		if l, err = c.expr(a.Lexpr); err != nil {
			return nil, err
		}
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if r, err = c.expr(a.Rexpr); err != nil {
			return nil, err
		}
		if l == nil {
			return &sql.UnaryOp{Op: op, X: r}, nil
		}
		return &sql.BinOp{Op: op, L: l, R: r, Pos: c.pos(a.Location)}, nil
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		if r, err = c.expr(a.Rexpr); err != nil {
			return nil, err
		}
		return &sql.BinOp{Op: likeOps[op], L: l, R: r, Pos: c.pos(a.Location)}, nil
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		if r, err = c.expr(a.Rexpr); err != nil {
			return nil, err
		}
		o := "IS DISTINCT FROM"
		if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT {
			o = "IS NOT DISTINCT FROM"
		}
		return &sql.BinOp{Op: o, L: l, R: r}, nil
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		if r, err = c.expr(a.Rexpr); err != nil {
			return nil, err
		}
		return &sql.NullIf{A: l, B: r}, nil
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		if r, err = c.expr(a.Rexpr); err != nil {
			return nil, err
		}
		return &sql.AnyAll{Op: op, X: l, Array: r, All: a.Kind == pg.A_Expr_Kind_AEXPR_OP_ALL}, nil
	case pg.A_Expr_Kind_AEXPR_IN:
		if l, err = c.expr(a.Lexpr); err != nil {
			return nil, err
		}
		list := a.Rexpr.GetList()
		if list == nil {
			return nil, c.unsupported(a.Location, "IN with this right-hand side")
		}
		items, err := c.exprs(list.Items)
		if err != nil {
			return nil, err
		}
		return &sql.InList{X: l, List: items, Not: op == "<>"}, nil
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		list := a.Rexpr.GetList()
		if list == nil || len(list.Items) != 2 {
			return nil, c.unsupported(a.Location, "this BETWEEN")
		}
		b, err := c.exprs(list.Items)
		if err != nil {
			return nil, err
		}
		return &sql.Between{X: l, Lo: b[0], Hi: b[1], Not: a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN}, nil
	}
	if a.Kind == pg.A_Expr_Kind_AEXPR_SIMILAR {
		return nil, c.unsupported(a.Location, "SIMILAR TO")
	}
	return nil, c.unsupported(a.Location, "%s", strings.ReplaceAll(strings.TrimPrefix(a.Kind.String(), "AEXPR_"), "_", " "))
}

func (c *converter) funcCall(f *pg.FuncCall) (sql.Expr, error) {
	var over *sql.Window
	if f.Over != nil {
		var err error
		if over, err = c.over(f.Over); err != nil {
			return nil, err
		}
	}
	switch {
	case f.AggWithinGroup:
		return nil, c.unsupported(f.Location, "WITHIN GROUP")
	case f.FuncVariadic:
		return nil, c.unsupported(f.Location, "VARIADIC")
	}
	name := strings.ToLower(opName(f.Funcname))
	args, err := c.exprs(f.Args)
	if err != nil {
		return nil, err
	}
	filter, err := c.exprOpt(f.AggFilter)
	if err != nil {
		return nil, err
	}
	order, err := c.orderBy(f.AggOrder)
	if err != nil {
		return nil, err
	}
	return &sql.FuncCall{Name: name, Args: args, Star: f.AggStar, Distinct: f.AggDistinct, Filter: filter, Order: order, Over: over, Pos: c.pos(f.Location)}, nil
}

func (c *converter) caseExpr(k *pg.CaseExpr) (sql.Expr, error) {
	out := &sql.Case{}
	var err error
	if out.Arg, err = c.exprOpt(k.Arg); err != nil {
		return nil, err
	}
	for _, w := range k.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return nil, c.unsupported(k.Location, "this CASE")
		}
		cond, err := c.expr(cw.Expr)
		if err != nil {
			return nil, err
		}
		res, err := c.expr(cw.Result)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, sql.When{Cond: cond, Result: res})
	}
	if out.Else, err = c.exprOpt(k.Defresult); err != nil {
		return nil, err
	}
	return out, nil
}

var typeAliases = map[string]string{
	"bigint": "int8", "integer": "int4", "int": "int4", "smallint": "int2",
	"double precision": "float8", "float": "float8", "real": "float4", "boolean": "bool",
	"character varying": "varchar", "timestamp with time zone": "timestamptz",
	"timestamp without time zone": "timestamp", "decimal": "numeric", "character": "bpchar",
	"time with time zone": "timetz", "time without time zone": "time",
}

// typeName normalizes a TypeName: pg_catalog dropped, aliases mapped,
// "[]" appended for arrays. Type modifiers (varchar(10)) are ignored.
func (c *converter) typeName(t *pg.TypeName) (string, error) {
	if t == nil || len(t.Names) == 0 {
		return "", c.unsupported(-1, "this type name")
	}
	if t.Setof || t.PctType {
		return "", c.unsupported(t.Location, "this type name")
	}
	var parts []string
	for _, n := range t.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) > 1 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	name := strings.Join(parts, ".")
	if a, ok := typeAliases[strings.ToLower(name)]; ok {
		name = a
	}
	if name == "interval" && len(t.Typmods) > 0 {
		return "", c.unsupported(t.Location, "INTERVAL with a field or precision")
	}
	for range t.ArrayBounds {
		name += "[]"
	}
	return name, nil
}

// collate accepts COLLATE with the default collation (psql's catalog
// queries write `... COLLATE pg_catalog.default`), which changes nothing:
// topicgate compares text bytewise, which is what "default", "C" and
// "POSIX" mean in a C-locale database (the planner checks that X is
// text). Any other collation is 0A000.
func (c *converter) collate(cc *pg.CollateClause) (sql.Expr, error) {
	var names []string
	for _, n := range cc.Collname {
		names = append(names, n.GetString_().GetSval())
	}
	name := names[len(names)-1]
	if len(names) > 2 || len(names) == 2 && names[0] != "pg_catalog" ||
		name != "default" && name != "C" && name != "POSIX" && name != "ucs_basic" {
		return nil, c.unsupported(cc.Location, "COLLATE \"%s\"", strings.Join(names, "."))
	}
	x, err := c.expr(cc.Arg)
	if err != nil {
		return nil, err
	}
	return &sql.Collate{X: x, Name: name}, nil
}

// indirection converts X[i] (one subscript, no slices or field selection).
func (c *converter) indirection(ai *pg.A_Indirection) (sql.Expr, error) {
	x, err := c.expr(ai.Arg)
	if err != nil {
		return nil, err
	}
	for _, ind := range ai.Indirection {
		idx := ind.GetAIndices()
		if idx == nil || idx.IsSlice || idx.Uidx == nil {
			return nil, c.unsupported(-1, "array subscript or field selection")
		}
		i, err := c.expr(idx.Uidx)
		if err != nil {
			return nil, err
		}
		x = &sql.Subscript{X: x, Index: i}
	}
	return x, nil
}
