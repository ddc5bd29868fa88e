package plantree

import (
	"fmt"
	"strings"

	"topicgate/sql"
)

// Node is one operator of a query's plan tree (tree.go builds it). The
// executor opens each node as exactly one row iterator; a node's rows are
// its input's after the node's own work. Nodes are immutable once built.
//
// A unary node (Filter, Project, Sort, ...) reads Input. A leaf reads a
// source: a topic (ScanNode, ConsumerReadNode), a view, VALUES, a work
// table, a function; or the trees of other query blocks (joins, set
// operations, derived tables, recursive unions), each the Tree of its
// SelectPlan.
type Node interface {
	// Children are the node's inputs, in the order EXPLAIN lists them.
	Children() []Node
	// Describe names the node for EXPLAIN and lists its properties.
	Describe() (name string, props []Prop)
	// SubPlans are the correlated subqueries the node's expressions run
	// per row (EXPLAIN lists their trees under the node).
	SubPlans() []*SubqueryExpr
}

// Prop is one property of a node as EXPLAIN prints it.
type Prop struct{ Key, Value string }

// nodeBase holds what every node has.
type nodeBase struct{ subs []*SubqueryExpr }

func (b *nodeBase) SubPlans() []*SubqueryExpr { return b.subs }

// unary is a node with one input in its own query block; rules rewrite
// such chains.
type unary interface {
	Node
	input() Node
	setInput(Node)
}

type unaryBase struct {
	nodeBase
	Input Node
}

func (u *unaryBase) input() Node      { return u.Input }
func (u *unaryBase) setInput(n Node)  { u.Input = n }
func (u *unaryBase) Children() []Node { return []Node{u.Input} }

type leafBase struct{ nodeBase }

func (leafBase) Children() []Node { return nil }

// ScanNode reads a topic's stateless messages: partition by partition in
// offset order, or in Scan.Order (newest first, or partitions merged by
// offset). Rules fuse into it the filter above it (pushdownFilter), the
// projection (streamScan) and LIMIT/OFFSET (pushdownLimit), so the
// streaming read applies them while it scans and stops early; Project is
// the raw message row (every stateless column) when nothing was fused.
type ScanNode struct {
	leafBase
	Scan    MsgScan
	Filter  Expr
	Project []Expr
	Fused   bool // Project is the query's projection, not the raw row
	Limit   Expr
	Offset  Expr
}

// ConsumerReadNode reads as a named consumer (package consume): from
// its position on the partitions the session holds, or (a shared
// consumer) the messages it acquires. Like a ScanNode it produces the raw
// message row (with a shared consumer's delivery_count and locked_until)
// until rule fuseConsumerRead makes the filter, projection and LIMIT
// above it its own; unlike a ScanNode's, that fusion is not an
// optimization but what a consumer read means, so the rule always fuses
// them (the planner leaves nothing else between them: checkConsumerRead)
// and the executor refuses a read that is not Fused. LIMIT counts
// matching rows with a fair quota per partition, the position moves past
// every message looked at (matching or not), and a WAIT read long-polls
// until some message matches: a Filter or Limit above the read could not
// say any of that.
type ConsumerReadNode struct {
	leafBase
	Read    *ConsumerRead
	Filter  Expr
	Project []Expr
	// Cols are the result's columns, the first len(Cols) of Project (the
	// rest are hidden sort columns of ORDER BY partition, offset, the
	// read's own order); nil until fused.
	Cols  []Column
	Fused bool // Project is the query's projection, not the raw row
	Limit Expr
}

// SysScanNode produces a sys or pg_catalog view's rows.
type SysScanNode struct {
	leafBase
	Sys *SysScan
}

// FilterNode keeps the rows Cond is true for.
type FilterNode struct {
	unaryBase
	Cond Expr
}

// ProjectNode evaluates the select list (visible, then hidden sort-only
// columns) over each row.
type ProjectNode struct {
	unaryBase
	Exprs []Expr
	Cols  []Column
}

// SortNode holds its input (charged to the statement's memory) and
// yields it ordered by Keys.
type SortNode struct {
	unaryBase
	Keys  []SortKey
	Names []string
}

// TopNNode keeps only the first Offset+Limit rows in Keys' order.
type TopNNode struct {
	unaryBase
	Keys          []SortKey
	Names         []string
	Limit, Offset Expr
}

// LimitNode skips Offset rows and stops after Limit (nil: none).
type LimitNode struct {
	unaryBase
	Limit, Offset Expr
}

// AggregateNode groups its input by Agg.GroupBy, computes Agg.Aggs and
// keeps the groups Having (nil: all) is true for.
type AggregateNode struct {
	unaryBase
	Agg    *AggSpec
	Having Expr
}

// WindowNode holds its input and appends each window function's value.
type WindowNode struct {
	unaryBase
	Windows []*WindowExpr
}

// DistinctOnNode keeps, per distinct value of Cols, the row first in Keys'
// order (DISTINCT ON).
type DistinctOnNode struct {
	unaryBase
	Cols               []int
	Keys               []SortKey
	ColNames, KeyNames []string
}

// ProjectSetNode steps the select list's set-returning calls per input
// row in lockstep and projects Exprs per step (PostgreSQL's ProjectSet).
type ProjectSetNode struct {
	unaryBase
	SRFs  []*FuncExpr
	Exprs []Expr
}

// InitPlanNode runs the block's uncorrelated subqueries once, before its
// input starts (their values may bound its scan).
type InitPlanNode struct {
	unaryBase
	Subs []*SubqueryExpr
}

// Children implements Node: the subqueries run first, then the input.
func (n *InitPlanNode) Children() []Node {
	out := make([]Node, 0, len(n.Subs)+1)
	for _, s := range n.Subs {
		out = append(out, Tree(s.Plan))
	}
	return append(out, n.Input)
}

// joinBase is what the join nodes share: the join, its inputs' trees.
type joinBase struct {
	nodeBase
	Join        *JoinPlan
	Left, Right Node
}

func (j *joinBase) Children() []Node { return []Node{j.Left, j.Right} }

// HashJoinNode holds the right input's rows in a hash table on RightKeys
// (charged to the statement's memory) and streams the left input,
// looking each row's LeftKeys up; Residual filters the joined rows.
type HashJoinNode struct {
	joinBase
	LeftKeys, RightKeys []Expr
	Residual            Expr
}

// NestedLoopNode holds the right input's rows and tries each for every
// left row; Residual (nil: none) filters the joined rows.
type NestedLoopNode struct {
	joinBase
	Residual Expr
	// conds are the join's conditions until extractJoinKeys splits them.
	conds []Expr
}

// LateralJoinNode runs the right input's tree again for each left row,
// which it reads (LATERAL); nothing is held.
type LateralJoinNode struct {
	joinBase
	Residual Expr
}

// SetOpNode combines its inputs' rows (UNION streams; INTERSECT and
// EXCEPT hold the right side).
type SetOpNode struct {
	nodeBase
	Op          *SetOpPlan
	Left, Right Node
}

func (n *SetOpNode) Children() []Node { return []Node{n.Left, n.Right} }

// ValuesNode evaluates a VALUES list row by row.
type ValuesNode struct {
	leafBase
	Rows [][]Expr
}

// SubqueryScanNode reads a derived table or WITH query: the rows of
// Input, another block's tree.
type SubqueryScanNode struct {
	nodeBase
	Input Node
}

func (n *SubqueryScanNode) Children() []Node { return []Node{n.Input} }

// RecursiveUnionNode runs NonRec, then Rec over the work table holding
// the previous iteration's rows, until an iteration yields none.
type RecursiveUnionNode struct {
	nodeBase
	Rec         *RecursivePlan
	First, Next Node
}

func (n *RecursiveUnionNode) Children() []Node { return []Node{n.First, n.Next} }

// WorkTableScanNode reads the running iteration's work table.
type WorkTableScanNode struct {
	leafBase
	Work *WorkTable
}

// FunctionScanNode produces a set-returning function's rows (in FROM).
type FunctionScanNode struct {
	leafBase
	Func *FuncScan
}

// ResultNode produces one empty row (SELECT without FROM).
type ResultNode struct{ leafBase }

func exprList(es []Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}

func sortText(keys []SortKey, names []string) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = names[i]
		if k.Desc {
			s[i] += " DESC"
		}
	}
	return strings.Join(s, ", ")
}

func limitProps(props []Prop, limit, offset Expr) []Prop {
	if limit != nil {
		props = append(props, Prop{"Limit", limit.String()})
	}
	if offset != nil {
		props = append(props, Prop{"Offset", offset.String()})
	}
	return props
}

// BoundsText describes pushed-down bounds (offset >= 10 and offset < 20).
func BoundsText(col string, lo, hi []Bound) string {
	var parts []string
	for _, b := range lo {
		op := ">"
		if b.Inclusive {
			op = ">="
		}
		parts = append(parts, col+" "+op+" "+b.X.String())
	}
	for _, b := range hi {
		op := "<"
		if b.Inclusive {
			op = "<="
		}
		parts = append(parts, col+" "+op+" "+b.X.String())
	}
	return strings.Join(parts, " AND ")
}

func (n *ScanNode) Describe() (string, []Prop) {
	s := &n.Scan
	props := []Prop{}
	if s.Partitions != nil {
		props = append(props, Prop{"Partitions", exprList(s.Partitions)})
	} else if s.PartArray != nil {
		props = append(props, Prop{"Partitions", "ANY(" + s.PartArray.String() + ")"})
	}
	if b := BoundsText("offset", s.Lo, s.Hi); b != "" {
		props = append(props, Prop{"Offsets", b})
	}
	if b := BoundsText("written_at", s.MinWrittenAt, nil); b != "" {
		props = append(props, Prop{"Written At", b})
	}
	if s.Order != (ScanOrder{}) {
		props = append(props, Prop{"Order", s.Order.String()})
	}
	if n.Filter != nil {
		props = append(props, Prop{"Filter", n.Filter.String()})
	}
	if n.Fused {
		props = append(props, Prop{"Output", exprList(n.Project)})
	}
	props = limitProps(props, n.Limit, n.Offset)
	props = append(props, Prop{"Decode Data", fmt.Sprint(s.NeedData)})
	return "Topic Scan on " + s.Topic, props
}

func (n *ConsumerReadNode) Describe() (string, []Prop) {
	cr := n.Read
	kind := "streaming"
	if cr.Shared {
		kind = "shared"
	}
	props := []Prop{{"Consumer", cr.Consumer + " (" + kind + ")"}}
	if n.Filter != nil {
		props = append(props, Prop{"Filter", n.Filter.String()})
	}
	if n.Fused {
		props = append(props, Prop{"Output", exprList(n.Project[:len(n.Cols)])})
	}
	props = limitProps(props, n.Limit, nil)
	for _, o := range []struct {
		k string
		e Expr
	}{{"Wait", cr.Wait}, {"Max Bytes", cr.MaxBytes}, {"Read From", cr.ReadFrom}, {"Max Lag", cr.MaxLag}, {"Only Partitions", cr.Partitions}} {
		if o.e != nil {
			props = append(props, Prop{o.k, o.e.String()})
		}
	}
	return "Consumer Read on " + cr.Topic, props
}

func (n *SysScanNode) Describe() (string, []Prop) {
	v := n.Sys.View
	if !strings.Contains(v, ".") {
		v = "sys." + v
	}
	return "View Scan on " + v, nil
}

func (n *FilterNode) Describe() (string, []Prop) {
	return "Filter", []Prop{{"Filter", n.Cond.String()}}
}

func (n *ProjectNode) Describe() (string, []Prop) {
	return "Project", []Prop{{"Output", exprList(n.Exprs[:len(n.Cols)])}}
}

func (n *SortNode) Describe() (string, []Prop) {
	return "Sort", []Prop{{"Sort Key", sortText(n.Keys, n.Names)}}
}

func (n *TopNNode) Describe() (string, []Prop) {
	return "Top-N Sort", limitProps([]Prop{{"Sort Key", sortText(n.Keys, n.Names)}}, n.Limit, n.Offset)
}

func (n *LimitNode) Describe() (string, []Prop) {
	return "Limit", limitProps(nil, n.Limit, n.Offset)
}

func (n *AggregateNode) Describe() (string, []Prop) {
	var props []Prop
	if len(n.Agg.GroupBy) > 0 {
		props = append(props, Prop{"Group Key", exprList(n.Agg.GroupBy)})
	}
	aggs := make([]Expr, len(n.Agg.Aggs))
	for i, a := range n.Agg.Aggs {
		aggs[i] = a
	}
	if len(aggs) > 0 {
		props = append(props, Prop{"Aggregates", exprList(aggs)})
	}
	if n.Having != nil {
		props = append(props, Prop{"Having", n.Having.String()})
	}
	name := "Aggregate"
	if len(n.Agg.GroupBy) > 0 {
		name = "HashAggregate"
	}
	return name, props
}

func (n *WindowNode) Describe() (string, []Prop) {
	props := make([]Prop, len(n.Windows))
	for i, w := range n.Windows {
		props[i] = Prop{"Window", WindowText(w)}
	}
	return "WindowAgg", props
}

func (n *DistinctOnNode) Describe() (string, []Prop) {
	props := []Prop{{"Distinct On", strings.Join(n.ColNames, ", ")}}
	if len(n.Keys) > 0 {
		props = append(props, Prop{"First By", sortText(n.Keys, n.KeyNames)})
	}
	return "Unique", props
}

func (n *ProjectSetNode) Describe() (string, []Prop) {
	fs := make([]Expr, len(n.SRFs))
	for i, f := range n.SRFs {
		fs[i] = f
	}
	return "ProjectSet", []Prop{{"Functions", exprList(fs)}, {"Output", exprList(n.Exprs)}}
}

func (n *InitPlanNode) Describe() (string, []Prop) {
	names := make([]string, len(n.Subs))
	for i, s := range n.Subs {
		names[i] = s.String()
	}
	return "InitPlan", []Prop{{"Runs First", strings.Join(names, ", ")}}
}

func joinProps(j *JoinPlan, residual Expr) []Prop {
	props := []Prop{{"Join Type", j.Kind}}
	if residual != nil {
		props = append(props, Prop{"Join Filter", residual.String()})
	}
	return props
}

func (n *HashJoinNode) Describe() (string, []Prop) {
	keys := make([]string, len(n.LeftKeys))
	for i := range n.LeftKeys {
		keys[i] = "(" + n.LeftKeys[i].String() + " = " + n.RightKeys[i].String() + ")"
	}
	props := joinProps(n.Join, n.Residual)
	props = append(props[:1], append([]Prop{{"Hash Cond", strings.Join(keys, " AND ")}}, props[1:]...)...)
	return "Hash Join", props
}

func (n *NestedLoopNode) Describe() (string, []Prop) {
	return "Nested Loop", joinProps(n.Join, n.Residual)
}

func (n *LateralJoinNode) Describe() (string, []Prop) {
	return "Nested Loop Lateral", joinProps(n.Join, n.Residual)
}

func (n *SetOpNode) Describe() (string, []Prop) {
	op := n.Op.Op
	if n.Op.All {
		op += " ALL"
	}
	return "SetOp", []Prop{{"Operation", op}}
}

func (n *ValuesNode) Describe() (string, []Prop) {
	return "Values Scan", []Prop{{"Rows", fmt.Sprint(len(n.Rows))}}
}

func (n *SubqueryScanNode) Describe() (string, []Prop) { return "Subquery Scan", nil }

func (n *RecursiveUnionNode) Describe() (string, []Prop) {
	op := "UNION"
	if n.Rec.All {
		op += " ALL"
	}
	return "Recursive Union", []Prop{{"Operation", op}, {"Work Table", n.Rec.Work.Name}}
}

func (n *WorkTableScanNode) Describe() (string, []Prop) {
	return "WorkTable Scan on " + n.Work.Name, nil
}

func (n *FunctionScanNode) Describe() (string, []Prop) {
	return "Function Scan", []Prop{{"Function", n.Func.String()}}
}

func (n *ResultNode) Describe() (string, []Prop) { return "Result", nil }

// WindowText describes a window function for EXPLAIN.
func WindowText(w *WindowExpr) string {
	var b strings.Builder
	if w.Agg != nil {
		b.WriteString(w.Agg.String())
	} else {
		b.WriteString(w.Name + "(" + exprList(w.Args) + ")")
	}
	b.WriteString(" OVER (")
	var parts []string
	if len(w.PartitionBy) > 0 {
		parts = append(parts, "PARTITION BY "+exprList(w.PartitionBy))
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
		bt := func(b FrameBound) string {
			off := ""
			if b.Offset != nil {
				off = b.Offset.String()
			}
			return sql.BoundText(b.Kind, off)
		}
		parts = append(parts, fmt.Sprintf("%s BETWEEN %s AND %s%s", f.Mode, bt(f.Start), bt(f.End), f.Exclude))
	}
	b.WriteString(strings.Join(parts, " ") + ")")
	return b.String()
}
