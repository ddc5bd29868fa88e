package plantree_test

import (
	"fmt"
	"testing"
	"topicgate/planner/plantree"

	"github.com/stretchr/testify/require"
)

// kinds lists the node kinds of a query's tree, depth first.
func kinds(t *testing.T, q string) []string {
	t.Helper()
	p := plan(t, q)
	var out []string
	for _, n := range nodes(plantree.Tree(p.(*plantree.SelectPlan))) {
		out = append(out, fmt.Sprintf("%T", n)[len("*plantree."):])
	}
	return out
}

func TestTreeRules(t *testing.T) {
	require.Equal(t, []string{"fuseConsumerRead", "pushdownBounds", "scanOrder", "extractJoinKeys", "chooseHashJoin",
		"pushdownFilter", "streamScan", "topN", "pushdownLimit", "cacheCorrelatedSubqueries"}, plantree.Rules())

	// A filtered, projected, limited scan is one streaming scan node.
	require.Equal(t, []string{"ScanNode"}, kinds(t, "SELECT data FROM t WHERE partition = 1 LIMIT 3"))
	// So is a read as a consumer, always (fuseConsumerRead), its filter,
	// projection and LIMIT its own; uncorrelated subqueries run first.
	require.Equal(t, []string{"ConsumerReadNode"}, kinds(t, "SELECT data FROM t WITH (CONSUMER = c) WHERE attrs->>'k' = 'v' LIMIT 3"))
	require.Equal(t, []string{"ConsumerReadNode"}, kinds(t, "SELECT offset, delivery_count FROM t WITH (CONSUMER = q) LIMIT 3"))
	require.Equal(t, []string{"InitPlanNode", "ProjectNode", "AggregateNode", "ScanNode", "ConsumerReadNode"},
		kinds(t, "SELECT data FROM t WITH (CONSUMER = c) WHERE offset > (SELECT max(offset) FROM t) LIMIT 3"))
	cr := plantree.Tree(plan(t, "SELECT data FROM t WITH (CONSUMER = c) WHERE attrs->>'k' = 'v' ORDER BY partition, offset LIMIT 3").(*plantree.SelectPlan)).(*plantree.ConsumerReadNode)
	require.True(t, cr.Fused)
	require.Equal(t, "((attrs->>'k') = 'v')", cr.Filter.String())
	require.Equal(t, "3", cr.Limit.String())
	require.Len(t, cr.Cols, 1, "data; partition and offset are hidden sort columns")
	require.Len(t, cr.Project, 3)
	// ORDER BY over something a scan cannot order by sorts, with LIMIT a top-N.
	require.Equal(t, []string{"TopNNode", "ScanNode"}, kinds(t, "SELECT data FROM t ORDER BY data LIMIT 3"))
	require.Equal(t, []string{"LimitNode", "SortNode", "ScanNode"}, kinds(t, "SELECT data FROM t ORDER BY data OFFSET 3"))

	// WHERE equalities between comma-joined relations are hash keys;
	// a cross join without any stays a nested loop.
	k := kinds(t, "SELECT count(*) FROM t a, t b, t c WHERE a.offset = b.offset AND b.offset = c.offset")
	require.Equal(t, []string{"ProjectNode", "AggregateNode", "FilterNode", "HashJoinNode", "ProjectNode", "HashJoinNode", "ScanNode", "ScanNode", "ScanNode"}, k)
	p := plan(t, "SELECT count(*) FROM t a, t b WHERE a.offset = b.offset AND a.partition < b.partition")
	var hj *plantree.HashJoinNode
	for _, n := range nodes(plantree.Tree(p.(*plantree.SelectPlan))) {
		if h, ok := n.(*plantree.HashJoinNode); ok {
			hj = h
		}
	}
	require.NotNil(t, hj)
	require.Equal(t, "INNER", hj.Join.Kind, "a cross join with keys is an inner hash join")
	require.Len(t, hj.LeftKeys, 1)
	require.Equal(t, "(partition < partition)", hj.Residual.String())
	require.Contains(t, kinds(t, "SELECT count(*) FROM t a, t b"), "NestedLoopNode")
	// A LEFT join does not take WHERE terms as keys: they filter above.
	require.Contains(t, kinds(t, "SELECT count(*) FROM t a LEFT JOIN t b ON true WHERE a.offset = b.offset"), "NestedLoopNode")

	// Uncorrelated subqueries run first; the tree is built once.
	p = plan(t, "SELECT offset FROM t WHERE offset = (SELECT max(offset) FROM t)")
	sp := p.(*plantree.SelectPlan)
	require.IsType(t, &plantree.InitPlanNode{}, sp.Tree)
	require.Same(t, sp.Tree, plantree.Tree(sp))
	require.NotNil(t, sp.Subqueries[0].Plan.Tree, "a subquery's block has its own tree")
}
