package plantree

// The rules that rewrite each query block's tree once logical (tree.go)
// has laid it out, in the order they run: each is in its own file
// (rule_<name>.go) with its cases in testdata/rules/<name>
// (rules_test.go). The first, fuseConsumerRead, is what a read as a
// consumer means, not an optimization (it always fires on one); the
// others are shortcuts a query's result does not depend on.

// rule is one named rewrite of a block's node chain.
type rule struct {
	name  string
	apply func(Node) Node
}

// Rules are the tree rules in the order they run (exported for tests and
// the report of EXPLAIN's documentation).
func Rules() []string {
	out := make([]string, 0, len(rules)+len(blockRules))
	for _, r := range rules {
		out = append(out, r.name)
	}
	for _, r := range blockRules {
		out = append(out, r.name)
	}
	return out
}

var rules []rule

func init() {
	rules = []rule{
		{"fuseConsumerRead", fuseConsumerRead},
		{"pushdownBounds", pushdownBounds},
		{"scanOrder", scanOrderRule},
		{"extractJoinKeys", extractJoinKeys},
		{"chooseHashJoin", chooseHashJoin},
		{"pushdownFilter", pushdownFilter},
		{"streamScan", streamScan},
		{"topN", topNRule},
		{"pushdownLimit", pushdownLimit},
	}
	blockRules = []blockRule{
		{"cacheCorrelatedSubqueries", cacheCorrelatedSubqueries},
	}
}

// blockRule is a named rule over a whole query block rather than its node
// chain; they run after the chain rules.
type blockRule struct {
	name  string
	apply func(*SelectPlan)
}

var blockRules []blockRule

// applyChain applies f to every node of a block's chain, innermost first.
func applyChain(n Node, f func(Node) Node) Node {
	if u, ok := n.(unary); ok {
		u.setInput(applyChain(u.input(), f))
	}
	return f(n)
}
