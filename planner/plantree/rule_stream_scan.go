package plantree

// streamScan makes a projection right above a topic scan the scan's own
// output: the scan then streams the query's rows.
func streamScan(n Node) Node {
	if p, ok := n.(*ProjectNode); ok {
		if s, ok := p.Input.(*ScanNode); ok && !s.Fused {
			s.Project, s.Fused = p.Exprs, true
			s.subs = append(s.subs, p.subs...)
			return s
		}
	}
	return n
}
