package sql

import (
	"fmt"
	"strconv"
	"strings"
)

func (f *formatter) sel(s *Select) {
	if s == nil {
		f.w("<nil>")
		return
	}
	f.w("SELECT ")
	if s.Distinct {
		f.w("DISTINCT ")
	}
	if s.DistinctOn != nil {
		f.w("DISTINCT ON (")
		f.exprList(s.DistinctOn)
		f.w(") ")
	}
	f.targets(s.Targets)
	if s.From != nil {
		f.w(" FROM ")
		f.table(*s.From)
	}
	if s.Where != nil {
		f.w(" WHERE ")
		f.expr(s.Where)
	}
	if len(s.GroupBy) > 0 {
		f.w(" GROUP BY ")
		f.exprList(s.GroupBy)
	}
	if s.Having != nil {
		f.w(" HAVING ")
		f.expr(s.Having)
	}
	f.orderBy(s.OrderBy)
	if s.Limit != nil {
		f.w(" LIMIT ")
		f.expr(s.Limit)
	}
	if s.Offset != nil {
		f.w(" OFFSET ")
		f.expr(s.Offset)
	}
}

func (f *formatter) returning(ts []Target) {
	if len(ts) > 0 {
		f.w(" RETURNING ")
		f.targets(ts)
	}
}

func (f *formatter) consumer(c ConsumerDef) {
	f.w("CONSUMER ", ident(c.Name))
	if len(c.Options) > 0 {
		f.w(" WITH ")
		f.options(c.Options)
	}
}

func (f *formatter) stmt(s Stmt) {
	switch x := s.(type) {
	case *Select:
		f.sel(x)
	case *Insert:
		f.w("INSERT INTO ")
		f.table(x.Table)
		if x.Columns != nil {
			f.w(" ")
			f.names(x.Columns)
		}
		if x.Select != nil {
			f.w(" ")
			f.sel(x.Select)
		}
		for i, row := range x.Values {
			f.w(map[bool]string{true: " VALUES (", false: ", ("}[i == 0])
			f.exprList(row)
			f.w(")")
		}
		f.returning(x.Returning)
	case *Update:
		f.w("UPDATE ")
		f.table(x.Table)
		for i, sc := range x.Set {
			f.w(map[bool]string{true: " SET ", false: ", "}[i == 0], ident(sc.Column), " = ")
			f.expr(sc.Value)
		}
		if x.Where != nil {
			f.w(" WHERE ")
			f.expr(x.Where)
		}
		f.returning(x.Returning)
	case *Delete:
		f.w("DELETE FROM ")
		f.table(x.Table)
		if x.Where != nil {
			f.w(" WHERE ")
			f.expr(x.Where)
		}
		f.returning(x.Returning)
	case *CopyFrom:
		f.w("COPY ")
		f.table(x.Table)
		if x.Columns != nil {
			f.w(" ")
			f.names(x.Columns)
		}
		f.w(" FROM STDIN ")
		f.copyOptions(x.CopyOptions)
	case *CopyTo:
		f.w("COPY (")
		f.sel(x.Query)
		f.w(") TO STDOUT ")
		f.copyOptions(x.CopyOptions)
	case *CreateTopic:
		f.w("CREATE TOPIC ")
		if x.IfNotExists {
			f.w("IF NOT EXISTS ")
		}
		f.w(ident(x.Name))
		if len(x.Consumers) > 0 {
			f.w(" (")
			for i, c := range x.Consumers {
				if i > 0 {
					f.w(", ")
				}
				f.consumer(c)
			}
			f.w(")")
		}
		if len(x.Options) > 0 {
			f.w(" WITH ")
			f.options(x.Options)
		}
	case *AlterTopic:
		f.w("ALTER TOPIC ")
		if x.IfExists {
			f.w("IF EXISTS ")
		}
		f.w(ident(x.Name))
		for i, a := range x.Actions {
			f.w(map[bool]string{true: " ", false: ", "}[i == 0])
			f.alterAction(a)
		}
	case *DropTopic:
		f.w("DROP TOPIC ")
		if x.IfExists {
			f.w("IF EXISTS ")
		}
		for i, n := range x.Names {
			if i > 0 {
				f.w(", ")
			}
			f.w(ident(n))
		}
	case *Begin:
		f.w("BEGIN")
		if x.Isolation != "" {
			f.w(" ISOLATION LEVEL ", strings.ToUpper(x.Isolation))
		}
		if x.ReadOnly {
			f.w(" READ ONLY")
		}
	case *Commit:
		f.w("COMMIT")
	case *Rollback:
		f.w("ROLLBACK")
	case *Savepoint:
		f.w(x.Op, " ", ident(x.Name))
	case *SetVar:
		switch {
		case x.All:
			f.w("RESET ALL")
		case x.Reset:
			f.w("RESET ", ident(x.Name))
		default:
			f.w("SET ")
			if x.Local {
				f.w("LOCAL ")
			}
			f.w(ident(x.Name), " = ", quoteString(x.Value))
		}
	case *Show:
		f.w("SHOW ", ident(x.Name))
	case *Explain:
		f.w("EXPLAIN ")
		switch {
		case x.Format == "json" || x.Analyze && !x.Timing:
			f.w("(ANALYZE ", strconv.FormatBool(x.Analyze), ", TIMING ", strconv.FormatBool(x.Timing), ", FORMAT ", x.Format, ") ")
		case x.Analyze:
			f.w("ANALYZE ")
		}
		f.stmt(x.Stmt)
	case *DeclareCursor:
		f.w("DECLARE ", ident(x.Name))
		if x.Binary {
			f.w(" BINARY")
		}
		if x.Scroll {
			f.w(" SCROLL")
		}
		f.w(" CURSOR")
		if x.Hold {
			f.w(" WITH HOLD")
		}
		f.w(" FOR ")
		f.sel(x.Query)
	case *Fetch:
		f.w(map[bool]string{false: "FETCH ", true: "MOVE "}[x.Move])
		n := strconv.FormatInt(x.Count, 10)
		if x.Count == FetchAll {
			n = "ALL"
		}
		f.w([...]string{FetchForward: "FORWARD ", FetchBackward: "BACKWARD ", FetchAbsolute: "ABSOLUTE ", FetchRelative: "RELATIVE "}[x.Direction], n, " FROM ", ident(x.Name))
	case *CloseCursor:
		if x.All {
			f.w("CLOSE ALL")
		} else {
			f.w("CLOSE ", ident(x.Name))
		}
	case *Empty:
		f.w("<empty>")
	case *Discard:
		f.w("DISCARD ", strings.ToUpper(x.What))
	case *Deallocate:
		if x.All {
			f.w("DEALLOCATE ALL")
		} else {
			f.w("DEALLOCATE ", ident(x.Name))
		}
	default:
		f.w(fmt.Sprintf("<%T>", s))
	}
}

func (f *formatter) alterAction(a AlterAction) {
	switch x := a.(type) {
	case *AddConsumer:
		f.w("ADD ")
		f.consumer(x.Consumer)
	case *DropConsumer:
		f.w("DROP CONSUMER ", ident(x.Name))
	case *AlterConsumer:
		f.w("ALTER CONSUMER ", ident(x.Name))
		if x.Reset != nil {
			f.w(" RESET ")
			f.names(x.Reset)
		} else {
			f.w(" SET ")
			f.options(x.Set)
		}
	case *SetOptions:
		f.w("SET ")
		f.options(x.Options)
	case *ResetOptions:
		f.w("RESET ")
		f.names(x.Names)
	case *SplitPartition:
		f.w(fmt.Sprintf("SPLIT PARTITION %d", x.Partition))
	default:
		f.w(fmt.Sprintf("<%T>", a))
	}
}

func (f *formatter) copyOptions(o CopyOptions) {
	f.w("(FORMAT ", o.Format)
	if o.Delimiter != "" {
		f.w(", DELIMITER ", quoteString(o.Delimiter))
	}
	if o.NullSet {
		f.w(", NULL ", quoteString(o.Null))
	}
	if o.Header {
		f.w(", HEADER")
	}
	if o.Quote != "" {
		f.w(", QUOTE ", quoteString(o.Quote))
	}
	if o.Escape != "" {
		f.w(", ESCAPE ", quoteString(o.Escape))
	}
	f.w(")")
}

// orderBy prints " ORDER BY ..." (of a SELECT or inside an aggregate call).
func (f *formatter) orderBy(os []OrderBy) {
	for i, o := range os {
		f.w(map[bool]string{true: " ORDER BY ", false: ", "}[i == 0])
		f.expr(o.Expr)
		if o.Desc {
			f.w(" DESC")
		}
		if o.NullsFirst != nil {
			f.w(map[bool]string{true: " NULLS FIRST", false: " NULLS LAST"}[*o.NullsFirst])
		}
	}
}
