package rowexec

import (
	"context"
	"time"
	"topicgate/planner/plantree"
)

// NodeStat is what EXPLAIN ANALYZE measured of one node: the rows it
// returned and the times it was opened (loops), in all, and the time its
// opening and its calls took, to its first row (Startup) and in all.
type NodeStat struct {
	Rows, Loops    int64
	Total, Startup time.Duration
	started        bool
}

// NodeStats holds the measured nodes of one EXPLAIN ANALYZE: open counts
// each node it opens while an EvalCtx carries them (EvalCtx.WithStats).
type NodeStats struct {
	by     map[plantree.Node]*NodeStat
	Timing bool // time is measured (EXPLAIN's TIMING)
}

// NewNodeStats is an EXPLAIN ANALYZE's measurements, none yet.
func NewNodeStats(timing bool) *NodeStats {
	return &NodeStats{by: map[plantree.Node]*NodeStat{}, Timing: timing}
}

// Of is what was measured of n; zero when n never opened.
func (ns *NodeStats) Of(n plantree.Node) NodeStat {
	if st := ns.by[n]; st != nil {
		return *st
	}
	return NodeStat{}
}

func (ns *NodeStats) of(n plantree.Node) *NodeStat {
	st := ns.by[n]
	if st == nil {
		st = &NodeStat{}
		ns.by[n] = st
	}
	return st
}

// start begins timing a call; the returned func ends it.
func (st *NodeStat) start() func() {
	t := time.Now()
	return func() { st.Total += time.Since(t) }
}

// statIter counts a node's rows and time.
type statIter struct {
	in Iter
	st *NodeStat
}

func (it *statIter) Next(ctx context.Context) ([]any, error) {
	t := time.Now()
	r, err := it.in.Next(ctx)
	it.st.Total += time.Since(t)
	if !it.st.started {
		it.st.started, it.st.Startup = true, it.st.Total
	}
	if r != nil {
		it.st.Rows++
	}
	return r, err
}
