package sql

import (
	"fmt"
	"strconv"
)

func (f *formatter) exprList(es []Expr) {
	for i, e := range es {
		if i > 0 {
			f.w(", ")
		}
		f.expr(e)
	}
}

func (f *formatter) targets(ts []Target) {
	for i, t := range ts {
		if i > 0 {
			f.w(", ")
		}
		f.expr(t.Expr)
		if t.Alias != "" {
			f.w(" AS ", ident(t.Alias))
		}
	}
}

// expr prints e: binary operators and predicates fully parenthesized,
// literals typed (formatLit), names quoted when needed (ident).
func (f *formatter) expr(e Expr) {
	switch x := e.(type) {
	case nil:
		f.w("<nil>")
	case *ColumnRef:
		if x.Table != "" {
			f.w(ident(x.Table), ".")
		}
		f.w(ident(x.Name))
	case *Const:
		f.w(formatLit(x.Lit))
	case *ParamRef:
		f.w("$", strconv.Itoa(x.N))
	case *BinOp:
		f.w("(")
		f.expr(x.L)
		f.w(" ", x.Op, " ")
		f.expr(x.R)
		f.w(")")
	case *UnaryOp:
		f.w("(", x.Op)
		if x.Op == "NOT" {
			f.w(" ")
		}
		f.expr(x.X)
		f.w(")")
	case *FuncCall:
		f.funcCall(x)
	case *Cast:
		f.w("CAST(")
		f.expr(x.X)
		f.w(" AS ", x.Type, ")")
	case *InList:
		f.w("(")
		f.expr(x.X)
		f.w(map[bool]string{false: " IN (", true: " NOT IN ("}[x.Not])
		f.exprList(x.List)
		f.w("))")
	case *Between:
		f.w("(")
		f.expr(x.X)
		f.w(map[bool]string{false: " BETWEEN ", true: " NOT BETWEEN "}[x.Not])
		f.expr(x.Lo)
		f.w(" AND ")
		f.expr(x.Hi)
		f.w(")")
	case *IsNull:
		f.w("(")
		f.expr(x.X)
		f.w(map[bool]string{false: " IS NULL)", true: " IS NOT NULL)"}[x.Not])
	case *IsBool:
		f.isBool(x)
	case *AnyAll:
		f.w("(")
		f.expr(x.X)
		f.w(" ", x.Op, map[bool]string{false: " ANY(", true: " ALL("}[x.All])
		f.expr(x.Array)
		f.w("))")
	case *ArrayLit:
		f.w("ARRAY[")
		f.exprList(x.Elems)
		f.w("]")
	case *Case:
		f.caseExpr(x)
	case *Coalesce:
		f.w("COALESCE(")
		f.exprList(x.Args)
		f.w(")")
	case *NullIf:
		f.w("NULLIF(")
		f.expr(x.A)
		f.w(", ")
		f.expr(x.B)
		f.w(")")
	case *Star:
		if x.Table != "" {
			f.w(ident(x.Table), ".")
		}
		f.w("*")
	case *SubLink:
		f.subLink(x)
	case *Default:
		f.w("DEFAULT")
	case *Collate:
		f.expr(x.X)
		f.w(" COLLATE \"", x.Name, "\"")
	case *Subscript:
		f.w("(")
		f.expr(x.X)
		f.w(")[")
		f.expr(x.Index)
		f.w("]")
	default:
		f.w(fmt.Sprintf("<%T>", e))
	}
}

// funcCall prints a function call, an aggregate's DISTINCT, ORDER BY and
// FILTER, and a window's OVER.
func (f *formatter) funcCall(x *FuncCall) {
	f.w(x.Name, "(")
	if x.Distinct {
		f.w("DISTINCT ")
	}
	if x.Star {
		f.w("*")
	}
	f.exprList(x.Args)
	f.orderBy(x.Order)
	f.w(")")
	if x.Filter != nil {
		f.w(" FILTER (WHERE ")
		f.expr(x.Filter)
		f.w(")")
	}
	if x.Over != nil {
		f.over(x.Over)
	}
}

// over prints a window definition: OVER (PARTITION BY ... ORDER BY ...
// frame).
func (f *formatter) over(w *Window) {
	f.w(" OVER (")
	if len(w.PartitionBy) > 0 {
		f.w("PARTITION BY ")
		f.exprList(w.PartitionBy)
	}
	f.orderBy(w.OrderBy)
	if fr := w.Frame; fr != nil {
		f.frame(fr)
	}
	f.w(")")
}

// isBool prints x IS [NOT] TRUE, FALSE or UNKNOWN.
func (f *formatter) isBool(x *IsBool) {
	f.w("(")
	f.expr(x.X)
	f.w(" IS ")
	if x.Not {
		f.w("NOT ")
	}
	switch {
	case x.Unknown:
		f.w("UNKNOWN)")
	default:
		f.w(map[bool]string{false: "FALSE)", true: "TRUE)"}[x.Value])
	}
}

// caseExpr prints CASE [arg] WHEN ... THEN ... [ELSE ...] END.
func (f *formatter) caseExpr(x *Case) {
	f.w("CASE")
	if x.Arg != nil {
		f.w(" ")
		f.expr(x.Arg)
	}
	for _, wh := range x.Whens {
		f.w(" WHEN ")
		f.expr(wh.Cond)
		f.w(" THEN ")
		f.expr(wh.Result)
	}
	if x.Else != nil {
		f.w(" ELSE ")
		f.expr(x.Else)
	}
	f.w(" END")
}

// subLink prints a subquery expression: EXISTS, ARRAY, IN or scalar.
func (f *formatter) subLink(x *SubLink) {
	switch x.Kind {
	case SubExists:
		f.w("EXISTS ")
	case SubArray:
		f.w("ARRAY")
	case SubIn:
		f.w("(")
		f.expr(x.X)
		f.w(" IN ")
	}
	f.w("(")
	f.sel(x.Select)
	f.w(")")
	if x.Kind == SubIn {
		f.w(")")
	}
}

func (f *formatter) frame(fr *Frame) {
	f.w(" ", fr.Mode.String(), " BETWEEN ", f.boundSQL(fr.Start), " AND ", f.boundSQL(fr.End), fr.Exclude.String())
}

func (f *formatter) boundSQL(b FrameBound) string {
	off := ""
	if b.Offset != nil {
		var g formatter
		g.expr(b.Offset)
		off = g.b.String()
	}
	return BoundText(b.Kind, off)
}
