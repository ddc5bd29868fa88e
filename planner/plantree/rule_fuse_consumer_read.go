package plantree

// fuseConsumerRead makes the filter, the projection and the LIMIT above a
// read as a consumer the read's own (ConsumerReadNode). It is no
// optimization: what a consumer read returns is defined by them together,
// as it reads (LIMIT counts the matching messages with a fair quota per
// partition, the position moves past every message looked at, a WAIT read
// waits until some message matches), so it always fires on a consumer
// read. The planner leaves nothing else above the read
// (checkConsumerRead: no aggregate, window, sort, OFFSET,
// set-returning call or correlated subquery), so the chain is always
// [Limit ->] Project -> [Filter ->] Consumer Read, under the block's
// InitPlan if it has one; the executor refuses a read it did not fuse.
func fuseConsumerRead(n Node) Node {
	switch x := n.(type) {
	case *FilterNode:
		if c, ok := x.Input.(*ConsumerReadNode); ok && c.Filter == nil && !c.Fused {
			c.Filter = x.Cond
			c.subs = x.subs
			return c
		}
	case *ProjectNode:
		if c, ok := x.Input.(*ConsumerReadNode); ok && !c.Fused {
			c.Project, c.Cols, c.Fused = x.Exprs, x.Cols, true
			c.subs = append(c.subs, x.subs...)
			return c
		}
	case *LimitNode:
		if c, ok := x.Input.(*ConsumerReadNode); ok && c.Fused && c.Limit == nil && x.Offset == nil {
			c.Limit = x.Limit
			return c
		}
	}
	return n
}
