package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
)

// EXPLAIN prints the plan tree the statement runs (plantree.Tree), node by
// node as PostgreSQL's text format does (a child under "->", properties
// indented under their node), or the same tree as one JSON document.
// A consumer read also shows, asked of the session at EXPLAIN time, the
// partitions the session would read and where. EXPLAIN ANALYZE runs the
// query (a consumer read reads without moving or locking anything) and
// adds each node's rows and loops, and with TIMING (the default) its
// time in milliseconds.

// explainRun is one EXPLAIN's rendering state.
type explainRun struct {
	s     *Session
	stats *rowexec.NodeStats
	lines []string
}

// runExplain renders an EXPLAIN's rows (running the query first for
// ANALYZE).
func (s *Session) runExplain(ctx context.Context, ec *rowexec.EvalCtx, x *plantree.ExplainPlan) ([][]any, error) {
	er := &explainRun{s: s}
	var elapsed time.Duration
	if x.Analyze {
		q := analyzedQuery(x.Inner)
		er.stats = rowexec.NewNodeStats(x.Timing)
		start := time.Now()
		it, err := rowexec.Run(ctx, ec.WithStats(er.stats), q, nil)
		for err == nil {
			var r []any
			if r, err = it.Next(ctx); r == nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
		elapsed = time.Since(start)
	}
	if x.JSON {
		doc := &jsonObj{}
		doc.set("Plan", er.jsonPlan(x.Inner))
		if x.Analyze && x.Timing {
			doc.set("Execution Time", ms(elapsed))
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // ->> stays ->>, as PostgreSQL prints it
		enc.SetIndent("", "  ")
		if err := enc.Encode([]any{doc}); err != nil {
			return nil, err
		}
		return [][]any{{strings.TrimSuffix(b.String(), "\n")}}, nil
	}
	er.textPlan(x.Inner)
	if x.Analyze && x.Timing {
		er.lines = append(er.lines, fmt.Sprintf("Execution Time: %.3f ms", ms(elapsed)))
	}
	rows := make([][]any, len(er.lines))
	for i, l := range er.lines {
		rows[i] = []any{l}
	}
	return rows, nil
}

// analyzedQuery is the query EXPLAIN ANALYZE runs (the planner allows
// ANALYZE of queries only).
func analyzedQuery(p plantree.Plan) *plantree.SelectPlan {
	if d, ok := p.(*plantree.DeclareCursorPlan); ok {
		return d.Query
	}
	return p.(*plantree.SelectPlan)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// top is the root line and the tree of a statement's plan: statements
// other than queries are one line, with the tree of their query if any.
func top(p plantree.Plan) (string, []plantree.Prop, plantree.Node) {
	switch x := p.(type) {
	case *plantree.SelectPlan:
		return "", nil, plantree.Tree(x)
	case *plantree.DeclareCursorPlan: // as PostgreSQL: the cursor's query
		return "", nil, plantree.Tree(x.Query)
	case *plantree.InsertPlan:
		head := fmt.Sprintf("Insert on topic %s", x.Topic)
		props := []plantree.Prop{{Key: "Columns", Value: colNames(x.Cols)}}
		if x.Select != nil {
			return head, props, plantree.Tree(x.Select)
		}
		return head, append(props, plantree.Prop{Key: "Values", Value: fmt.Sprintf("%d row(s)", len(x.Rows))}), nil
	case *plantree.CopyOutPlan:
		return "Copy To Stdout", []plantree.Prop{{Key: "Format", Value: orText(x.Opts.Format)}}, plantree.Tree(x.Select)
	case *plantree.CopyPlan:
		return fmt.Sprintf("Copy into topic %s", x.Topic), []plantree.Prop{{Key: "Columns", Value: colNames(x.Cols)}, {Key: "Format", Value: orText(x.Opts.Format)}}, nil
	case *plantree.CreateTopicPlan:
		return fmt.Sprintf("Create topic %s with %d partition(s), %d consumer(s)", x.Config.Name, x.Config.MinActivePartitions, len(x.Config.Consumers)), nil, nil
	case *plantree.AlterTopicPlan:
		return "Alter topic " + x.Name, nil, nil
	case *plantree.DropTopicPlan:
		return "Drop topic " + strings.Join(x.Names, ", "), nil, nil
	case *plantree.UtilityPlan:
		return fmt.Sprintf("Utility %T", x.Stmt), nil, nil
	}
	return fmt.Sprintf("%T", p), nil, nil
}

func (er *explainRun) add(indent int, s string) {
	er.lines = append(er.lines, strings.Repeat(" ", indent)+s)
}

func (er *explainRun) textPlan(p plantree.Plan) {
	head, props, tree := top(p)
	if head == "" {
		er.textNode(tree, 0, true)
		return
	}
	er.add(0, head)
	for _, pr := range props {
		er.add(2, pr.Key+": "+pr.Value)
	}
	if tree != nil {
		er.textNode(tree, 2, false)
	}
}

// textNode prints n at indent as plantree.ExplainText does, with what the
// run adds (actual, runtimeProps).
func (er *explainRun) textNode(n plantree.Node, indent int, root bool) {
	er.lines = append(er.lines, plantree.ExplainText(n, indent, !root, func(n plantree.Node) (string, []plantree.Prop) {
		return er.actual(n), er.runtimeProps(n)
	})...)
}

// actual is a node's EXPLAIN ANALYZE annotation.
func (er *explainRun) actual(n plantree.Node) string {
	if er.stats == nil {
		return ""
	}
	st := er.stats.Of(n)
	if st.Loops == 0 {
		return " (never executed)"
	}
	rows := (st.Rows + st.Loops/2) / st.Loops // per loop, as PostgreSQL
	if er.stats.Timing {
		return fmt.Sprintf(" (actual time=%.3f..%.3f rows=%d loops=%d)", ms(st.Startup)/float64(st.Loops), ms(st.Total)/float64(st.Loops), rows, st.Loops)
	}
	return fmt.Sprintf(" (actual rows=%d loops=%d)", rows, st.Loops)
}

// runtimeProps are what EXPLAIN asks the session about a node: for a
// consumer's read, what the session would read (consume.Reader).
func (er *explainRun) runtimeProps(n plantree.Node) []plantree.Prop {
	if cn, ok := n.(*plantree.ConsumerReadNode); ok {
		return er.s.rd.ExplainProps(cn, er.stats != nil)
	}
	return nil
}

// jsonPlan is the plan as PostgreSQL's FORMAT JSON lays it out: a node is
// an object with "Node Type", its properties and "Plans".
func (er *explainRun) jsonPlan(p plantree.Plan) *jsonObj {
	head, props, tree := top(p)
	if head == "" {
		return er.jsonNode(tree, "")
	}
	m := &jsonObj{}
	m.set("Node Type", head)
	for _, pr := range props {
		m.set(pr.Key, pr.Value)
	}
	if tree != nil {
		m.set("Plans", []any{er.jsonNode(tree, "Source")})
	}
	return m
}

func (er *explainRun) jsonNode(n plantree.Node, rel string) *jsonObj {
	name, props := n.Describe()
	m := &jsonObj{}
	m.set("Node Type", name)
	if rel != "" {
		m.set("Parent Relationship", rel)
	}
	for _, pr := range append(props, er.runtimeProps(n)...) {
		m.set(pr.Key, pr.Value)
	}
	if er.stats != nil {
		st := er.stats.Of(n)
		if er.stats.Timing && st.Loops > 0 {
			m.set("Actual Startup Time", ms(st.Startup)/float64(st.Loops))
			m.set("Actual Total Time", ms(st.Total)/float64(st.Loops))
		}
		rows := st.Rows
		if st.Loops > 0 {
			rows = (st.Rows + st.Loops/2) / st.Loops
		}
		m.set("Actual Rows", rows)
		m.set("Actual Loops", st.Loops)
	}
	var plans []any
	for _, sq := range n.SubPlans() {
		c := er.jsonNode(plantree.Tree(sq.Plan), "SubPlan")
		c.set("Subplan Name", sq.String())
		plans = append(plans, c)
	}
	_, init := n.(*plantree.InitPlanNode)
	kids := n.Children()
	for i, c := range kids {
		r := "Outer"
		switch {
		case init && i < len(kids)-1:
			r = "InitPlan"
		case len(kids) == 2 && i == 1:
			r = "Inner"
		}
		plans = append(plans, er.jsonNode(c, r))
	}
	if plans != nil {
		m.set("Plans", plans)
	}
	return m
}

// jsonObj is a JSON object that keeps its keys in the order they were
// set, as PostgreSQL prints them ("Node Type" first).
type jsonObj struct {
	keys []string
	vals []any
}

func (o *jsonObj) set(k string, v any) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o *jsonObj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(k); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(o.vals[i]); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func orText(f string) string {
	if f == "" {
		return "text"
	}
	return f
}

func colNames(cols []plantree.MsgCol) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = plantree.MsgColumns[c].Name
	}
	return strings.Join(names, ", ")
}
