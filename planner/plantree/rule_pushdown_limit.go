package plantree

// pushdownLimit applies LIMIT and OFFSET inside a streaming scan (its
// rows projected), which then stops reading once it has them.
func pushdownLimit(n Node) Node {
	if l, ok := n.(*LimitNode); ok {
		if s, ok := l.Input.(*ScanNode); ok && s.Fused && s.Limit == nil && s.Offset == nil {
			s.Limit, s.Offset = l.Limit, l.Offset
			return s
		}
	}
	return n
}
