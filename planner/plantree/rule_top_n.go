package plantree

// topNRule keeps only LIMIT rows of a sort (ORDER BY ... LIMIT).
func topNRule(n Node) Node {
	if l, ok := n.(*LimitNode); ok && l.Limit != nil {
		if s, ok := l.Input.(*SortNode); ok {
			t := &TopNNode{Keys: s.Keys, Names: s.Names, Limit: l.Limit, Offset: l.Offset}
			t.Input = s.Input
			return t
		}
	}
	return n
}
