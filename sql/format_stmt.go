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

// stmt prints a statement (Format).
func (f *formatter) stmt(s Stmt) {
	switch x := s.(type) {
	case *Select:
		f.sel(x)
	case *Insert:
		f.insert(x)
	case *Update:
		f.update(x)
	case *Delete:
		f.delete(x)
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
		f.createTopic(x)
	case *AlterTopic:
		f.alterTopic(x)
	case *DropTopic:
		f.dropTopic(x)
	case *Begin:
		f.begin(x)
	case *Commit:
		f.w("COMMIT")
	case *Rollback:
		f.w("ROLLBACK")
	case *Savepoint:
		f.w(x.Op, " ", ident(x.Name))
	case *SetVar:
		f.setVar(x)
	case *Show:
		f.w("SHOW ", ident(x.Name))
	case *Explain:
		f.explain(x)
	case *DeclareCursor:
		f.declareCursor(x)
	case *Fetch:
		f.fetch(x)
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
		if !f.authStmt(s) {
			f.w(fmt.Sprintf("<%T>", s))
		}
	}
}

// insert prints INSERT INTO ... [(cols)] SELECT or VALUES [RETURNING].
func (f *formatter) insert(x *Insert) {
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
}

// update prints UPDATE ... SET ... [WHERE] [RETURNING].
func (f *formatter) update(x *Update) {
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
}

// delete prints DELETE FROM ... [WHERE] [RETURNING].
func (f *formatter) delete(x *Delete) {
	f.w("DELETE FROM ")
	f.table(x.Table)
	if x.Where != nil {
		f.w(" WHERE ")
		f.expr(x.Where)
	}
	f.returning(x.Returning)
}

// begin prints BEGIN with its isolation level and access mode.
func (f *formatter) begin(x *Begin) {
	f.w("BEGIN")
	if x.Isolation != "" {
		f.w(" ISOLATION LEVEL ", strings.ToUpper(x.Isolation))
	}
	if x.ReadOnly {
		f.w(" READ ONLY")
	}
}

// setVar prints SET [LOCAL], RESET or RESET ALL.
func (f *formatter) setVar(x *SetVar) {
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
		f.w(ident(x.Name), " = ", QuoteString(x.Value))
	}
}

// explain prints EXPLAIN, its options and the statement.
func (f *formatter) explain(x *Explain) {
	f.w("EXPLAIN ")
	switch {
	case x.Format == "json" || x.Analyze && !x.Timing:
		f.w("(ANALYZE ", strconv.FormatBool(x.Analyze), ", TIMING ", strconv.FormatBool(x.Timing), ", FORMAT ", x.Format, ") ")
	case x.Analyze:
		f.w("ANALYZE ")
	}
	f.stmt(x.Stmt)
}

// declareCursor prints DECLARE ... CURSOR ... FOR.
func (f *formatter) declareCursor(x *DeclareCursor) {
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
}

// fetch prints FETCH or MOVE with its direction and count.
func (f *formatter) fetch(x *Fetch) {
	f.w(map[bool]string{false: "FETCH ", true: "MOVE "}[x.Move])
	n := strconv.FormatInt(x.Count, 10)
	if x.Count == FetchAll {
		n = "ALL"
	}
	f.w([...]string{FetchForward: "FORWARD ", FetchBackward: "BACKWARD ", FetchAbsolute: "ABSOLUTE ", FetchRelative: "RELATIVE "}[x.Direction], n, " FROM ", ident(x.Name))
}

func (f *formatter) copyOptions(o CopyOptions) {
	f.w("(FORMAT ", o.Format)
	if o.Delimiter != "" {
		f.w(", DELIMITER ", QuoteString(o.Delimiter))
	}
	if o.NullSet {
		f.w(", NULL ", QuoteString(o.Null))
	}
	if o.Header {
		f.w(", HEADER")
	}
	if o.Quote != "" {
		f.w(", QUOTE ", QuoteString(o.Quote))
	}
	if o.Escape != "" {
		f.w(", ESCAPE ", QuoteString(o.Escape))
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
