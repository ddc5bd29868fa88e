package plantree

// chooseHashJoin names an inner or cross join that found keys an INNER
// hash join (a cross join with keys from WHERE is one).
func chooseHashJoin(n Node) Node {
	if h, ok := n.(*HashJoinNode); ok && h.Join.Kind == "CROSS" {
		j := *h.Join
		j.Kind = "INNER"
		h.Join = &j
	}
	return n
}
