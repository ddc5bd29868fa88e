package plantree

// pushdownFilter evaluates the filter right above a topic scan inside the
// scan, on each message as it is read.
func pushdownFilter(n Node) Node {
	if f, ok := n.(*FilterNode); ok {
		if s, ok := f.Input.(*ScanNode); ok && s.Filter == nil {
			s.Filter = f.Cond
			s.subs = f.subs
			return s
		}
	}
	return n
}
