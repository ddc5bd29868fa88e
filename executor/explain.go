package executor

import (
	"fmt"
	"strings"

	"topicgate/planner"
	"topicgate/sql"
)

// explain renders a plan as indented lines.
func explain(p planner.Plan) []string {
	var lines []string
	add := func(depth int, format string, args ...any) {
		lines = append(lines, strings.Repeat("  ", depth)+fmt.Sprintf(format, args...))
	}
	switch x := p.(type) {
	case *planner.SelectPlan:
		explainSelect(x, 0, add)
	case *planner.InsertPlan:
		add(0, "Insert on topic %s (%s)", x.Topic, colNames(x.Cols))
		if x.Select != nil {
			explainSelect(x.Select, 1, add)
		} else {
			add(1, "Values: %d row(s)", len(x.Rows))
		}
	case *planner.CopyPlan:
		add(0, "Copy into topic %s (%s) format %s", x.Topic, colNames(x.Cols), orText(x.Opts.Format))
	case *planner.CreateTopicPlan:
		add(0, "Create topic %s with %d partition(s), %d consumer(s)", x.Config.Name, x.Config.MinActivePartitions, len(x.Config.Consumers))
	case *planner.AlterTopicPlan:
		add(0, "Alter topic %s", x.Name)
	case *planner.DropTopicPlan:
		add(0, "Drop topic %s", strings.Join(x.Names, ", "))
	case *planner.UtilityPlan:
		add(0, "Utility %T", x.Stmt)
	case *planner.DeclareCursorPlan: // as PostgreSQL: the cursor's query
		explainSelect(x.Query, 0, add)
	}
	return lines
}

func orText(f string) string {
	if f == "" {
		return "text"
	}
	return f
}

func colNames(cols []planner.MsgCol) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = planner.MsgColumns[c].Name
	}
	return strings.Join(names, ", ")
}

func explainSelect(p *planner.SelectPlan, d int, add func(int, string, ...any)) {
	for _, sq := range p.Subqueries { // run first, once
		add(d, "Subquery %s:", sq)
		explainSelect(sq.Plan, d+1, add)
	}
	if p.Limit != nil || p.Offset != nil {
		add(d, "Limit: %v offset %v", exprOr(p.Limit, "all"), exprOr(p.Offset, "0"))
		d++
	}
	if len(p.Sort) > 0 {
		keys := make([]string, len(p.Sort))
		for i, k := range p.Sort {
			keys[i] = p.Project[k.Idx].String()
			if k.Desc {
				keys[i] += " DESC"
			}
		}
		add(d, "Sort: %s", strings.Join(keys, ", "))
		d++
	}
	proj := make([]string, len(p.Cols))
	for i := range p.Cols {
		proj[i] = p.Project[i].String()
	}
	add(d, "Project: %s", strings.Join(proj, ", "))
	d++
	if p.Agg != nil {
		add(d, "Aggregate: group by %d key(s), %d aggregate(s)", len(p.Agg.GroupBy), len(p.Agg.Aggs))
		d++
	}
	for _, w := range p.Windows {
		add(d, "Window: %s", windowText(w))
	}
	if len(p.Windows) > 0 {
		d++
	}
	if p.Filter != nil {
		add(d, "Filter: %s", p.Filter)
		d++
	}
	for _, sq := range planner.CorrelatedSubqueries(p) {
		add(d, "Correlated %s, run per distinct values of the %d outer column(s) it reads:", sq, len(sq.OuterCols))
		explainSelect(sq.Plan, d+1, add)
	}
	switch {
	case p.Sub != nil:
		add(d, "Derived table:")
		explainSelect(p.Sub, d+1, add)
	case p.Values != nil:
		add(d, "Values: %d row(s)", len(p.Values))
	case p.Recursive != nil:
		all := ""
		if p.Recursive.All {
			all = " ALL"
		}
		add(d, "Recursive UNION%s over work table %s:", all, p.Recursive.Work.Name)
		explainSelect(p.Recursive.NonRec, d+1, add)
		explainSelect(p.Recursive.Rec, d+1, add)
	case p.Work != nil:
		add(d, "Work Table Scan: %s", p.Work.Name)
	case p.Func != nil:
		add(d, "Function Scan: %s", p.Func)
	case p.Join != nil:
		j := p.Join
		cond := ""
		if len(j.LeftKeys) > 0 {
			keys := make([]string, len(j.LeftKeys))
			for i := range j.LeftKeys {
				keys[i] = j.LeftKeys[i].String() + " = " + j.RightKeys[i].String()
			}
			cond = " hash on " + strings.Join(keys, " AND ")
		}
		if j.Residual != nil {
			cond += " filter " + j.Residual.String()
		}
		if j.Lateral {
			add(d, "%s join, lateral%s (the right side runs for each left row):", j.Kind, cond)
		} else {
			add(d, "%s join%s (the right side is held):", j.Kind, cond)
		}
		explainSelect(j.Left, d+1, add)
		explainSelect(j.Right, d+1, add)
	case p.SetOp != nil:
		all := ""
		if p.SetOp.All {
			all = " ALL"
		}
		add(d, "%s%s:", p.SetOp.Op, all)
		explainSelect(p.SetOp.Left, d+1, add)
		explainSelect(p.SetOp.Right, d+1, add)
	case p.Scan != nil:
		s := p.Scan
		parts := "all"
		if s.Partitions != nil {
			ps := make([]string, len(s.Partitions))
			for i, e := range s.Partitions {
				ps[i] = e.String()
			}
			parts = strings.Join(ps, ", ")
		} else if s.PartArray != nil {
			parts = "ANY(" + s.PartArray.String() + ")"
		}
		order := ""
		if s.Order != (planner.ScanOrder{}) {
			order = ", order: " + s.Order.String()
		}
		add(d, "Scan topic %s: partitions %s, offsets %s%s, decode data: %v", s.Topic, parts, bounds(s.Lo, s.Hi), order, s.NeedData)
	case p.Sys != nil:
		if strings.Contains(p.Sys.View, ".") {
			add(d, "System view %s", p.Sys.View)
		} else {
			add(d, "System view sys.%s", p.Sys.View)
		}
	default:
		add(d, "Result: one row")
	}
}

func exprOr(e planner.Expr, def string) string {
	if e == nil {
		return def
	}
	return e.String()
}

func bounds(lo, hi []planner.Bound) string {
	var parts []string
	for _, b := range lo {
		op := ">"
		if b.Inclusive {
			op = ">="
		}
		parts = append(parts, op+" "+b.X.String())
	}
	for _, b := range hi {
		op := "<"
		if b.Inclusive {
			op = "<="
		}
		parts = append(parts, op+" "+b.X.String())
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " and ")
}

// windowText describes a window function for EXPLAIN.
func windowText(w *planner.WindowExpr) string {
	var b strings.Builder
	if w.Agg != nil {
		b.WriteString(w.Agg.String())
	} else {
		args := make([]string, len(w.Args))
		for i, a := range w.Args {
			args[i] = a.String()
		}
		b.WriteString(w.Name + "(" + strings.Join(args, ", ") + ")")
	}
	b.WriteString(" OVER (")
	var parts []string
	if len(w.PartitionBy) > 0 {
		ps := make([]string, len(w.PartitionBy))
		for i, e := range w.PartitionBy {
			ps[i] = e.String()
		}
		parts = append(parts, "PARTITION BY "+strings.Join(ps, ", "))
	}
	if len(w.OrderBy) > 0 {
		os := make([]string, len(w.OrderBy))
		for i, k := range w.OrderBy {
			os[i] = w.Order[k.Idx].String()
			if k.Desc {
				os[i] += " DESC"
			}
		}
		parts = append(parts, "ORDER BY "+strings.Join(os, ", "))
	}
	if f := w.Frame; f != nil {
		parts = append(parts, fmt.Sprintf("%s BETWEEN %s AND %s%s", f.Mode, boundText(f.Start), boundText(f.End), f.Exclude))
	}
	b.WriteString(strings.Join(parts, " ") + ")")
	return b.String()
}

func boundText(b planner.FrameBound) string {
	off := ""
	if b.Offset != nil {
		off = b.Offset.String()
	}
	return sql.BoundText(b.Kind, off)
}
