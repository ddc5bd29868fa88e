package plantree

import (
	"fmt"
	"strings"
)

// ExplainAnnotator adds what only the run knows to a node's EXPLAIN line:
// a suffix for the line (EXPLAIN ANALYZE's actual rows and time) and
// properties after the node's own (a consumer read's partitions).
type ExplainAnnotator func(Node) (suffix string, props []Prop)

// ExplainText prints the tree under n as EXPLAIN's text format does,
// starting at indent: each node's line ("->  " before a child's, and
// before n's own when child is set), its properties, its subplans, then
// its children. annotate may be nil.
func ExplainText(n Node, indent int, child bool, annotate ExplainAnnotator) []string {
	var lines []string
	explainText(&lines, n, indent, !child, annotate)
	return lines
}

func explainText(lines *[]string, n Node, indent int, root bool, annotate ExplainAnnotator) {
	name, props := n.Describe()
	if annotate != nil {
		suffix, more := annotate(n)
		name += suffix
		props = append(props, more...)
	}
	in := indent + 2
	if !root {
		name, in = "->  "+name, indent+6
	}
	add := func(indent int, s string) { *lines = append(*lines, strings.Repeat(" ", indent)+s) }
	add(indent, name)
	for _, pr := range props {
		add(in, pr.Key+": "+pr.Value)
	}
	for _, sq := range n.SubPlans() {
		add(in, SubPlanTitle(sq))
		explainText(lines, Tree(sq.Plan), in+2, false, annotate)
	}
	for _, c := range n.Children() {
		explainText(lines, c, in, false, annotate)
	}
}

// SubPlanTitle is a subplan's line in EXPLAIN: how often it runs.
func SubPlanTitle(sq *SubqueryExpr) string {
	if sq.Reusable {
		return fmt.Sprintf("SubPlan %s, run per distinct values of the %d outer column(s) it reads", sq, len(sq.OuterCols))
	}
	return fmt.Sprintf("SubPlan %s, run per outer row", sq)
}
