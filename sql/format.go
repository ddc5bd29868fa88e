package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Format prints s as deterministic, SQL-like text: binary operators are
// fully parenthesized, literals are typed (Interval('PT30S'),
// Timestamp('2026-01-01T00:00:00Z')), names are quoted when needed. Used by
// tests and EXPLAIN.
func Format(s Stmt) string {
	var f formatter
	f.stmt(s)
	return f.b.String()
}

// FormatExpr prints one expression the way Format does.
func FormatExpr(e Expr) string {
	var f formatter
	f.expr(e)
	return f.b.String()
}

type formatter struct{ b strings.Builder }

func (f *formatter) w(parts ...string) {
	for _, p := range parts {
		f.b.WriteString(p)
	}
}

// ident quotes a name unless it is a plain lower-case identifier.
func ident(s string) string {
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return QuoteIdent(s)
		}
	}
	if s == "offset" || IsExprKeyword(s) {
		return QuoteIdent(s)
	}
	return s
}

func (f *formatter) table(t TableRef) {
	switch {
	case t.Join != nil:
		f.w("(")
		f.table(t.Join.Left)
		if t.Join.Kind == "CROSS" {
			f.w(" CROSS JOIN ")
		} else {
			f.w(" ", t.Join.Kind, " JOIN ")
		}
		f.table(t.Join.Right)
		if t.Join.On != nil {
			f.w(" ON ")
			f.expr(t.Join.On)
		}
		if len(t.Join.Using) > 0 {
			f.w(" USING ")
			f.names(t.Join.Using)
		}
		f.w(")")
	case t.SetOp != nil:
		f.w("(")
		f.sel(t.SetOp.Left)
		f.w(" ", t.SetOp.Op, " ")
		if t.SetOp.All {
			f.w("ALL ")
		}
		f.sel(t.SetOp.Right)
		f.w(")")
	case t.Func != nil:
		f.expr(t.Func)
		if t.Ordinality {
			f.w(" WITH ORDINALITY")
		}
	case t.Recursive != nil:
		r := t.Recursive
		f.w("(WITH RECURSIVE ", ident(r.Name))
		if len(r.Cols) > 0 {
			f.names(r.Cols)
		}
		f.w(" AS (")
		f.sel(r.NonRec)
		if f.w(" UNION "); r.All {
			f.w("ALL ")
		}
		f.sel(r.Rec)
		f.w(") SELECT * FROM ", ident(r.Name), ")")
	case t.WorkTable != nil:
		f.w(ident(t.WorkTable.Name))
	case t.Sub != nil:
		if t.Lateral {
			f.w("LATERAL ")
		}
		f.w("(")
		f.sel(t.Sub)
		f.w(")")
	case t.Values != nil:
		f.w("(VALUES ")
		for i, row := range t.Values {
			if i > 0 {
				f.w(", ")
			}
			f.w("(")
			for j, e := range row {
				if j > 0 {
					f.w(", ")
				}
				f.expr(e)
			}
			f.w(")")
		}
		f.w(")")
	default:
		if t.Schema != "" {
			f.w(ident(t.Schema), ".")
		}
		f.w(ident(t.Name))
	}
	if t.Alias != "" {
		f.w(" AS ", ident(t.Alias))
	}
	if len(t.ColAliases) > 0 {
		f.names(t.ColAliases)
	}
	if len(t.Hints) > 0 {
		f.w(" WITH ")
		f.options(t.Hints)
	}
}

func (f *formatter) options(os []Option) {
	f.w("(")
	for i, o := range os {
		if i > 0 {
			f.w(", ")
		}
		f.w(ident(o.Name), " = ", formatLit(o.Value))
	}
	f.w(")")
}

func (f *formatter) names(ns []string) {
	f.w("(")
	for i, n := range ns {
		if i > 0 {
			f.w(", ")
		}
		f.w(ident(n))
	}
	f.w(")")
}

func formatLit(l Literal) string {
	switch l.Kind {
	case LitNull:
		return "NULL"
	case LitInt:
		return strconv.FormatInt(l.Int, 10)
	case LitFloat:
		if l.Str != "" {
			return l.Str
		}
		return strconv.FormatFloat(l.Float, 'g', -1, 64)
	case LitString:
		return QuoteString(l.Str)
	case LitBool:
		if l.Bool {
			return "true"
		}
		return "false"
	case LitIdent:
		return ident(l.Str)
	case LitInterval:
		return "Interval('" + isoDuration(l.Dur) + "')"
	case LitTime:
		return "Timestamp('" + l.Time.UTC().Format(time.RFC3339Nano) + "')"
	case LitParam:
		return "$" + strconv.Itoa(l.Param)
	}
	return fmt.Sprintf("<lit %d>", l.Kind)
}

// isoDuration prints d as an ISO 8601 duration with days, hours, minutes
// and (fractional) seconds.
func isoDuration(d time.Duration) string {
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	b.WriteByte('P')
	if days := d / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dD", days)
		d -= days * 24 * time.Hour
	}
	if d > 0 || b.Len() <= 2 {
		b.WriteByte('T')
		if h := d / time.Hour; h > 0 {
			fmt.Fprintf(&b, "%dH", h)
			d -= h * time.Hour
		}
		if m := d / time.Minute; m > 0 {
			fmt.Fprintf(&b, "%dM", m)
			d -= m * time.Minute
		}
		if d > 0 || strings.HasSuffix(b.String(), "T") {
			b.WriteString(strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S")
		}
	}
	return b.String()
}
