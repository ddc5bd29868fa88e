package plantree

// scanOrderRule drops a sort of a scan's projected rows that the scan can
// produce itself (ScanOrderOf) and hands the order to the scan.
func scanOrderRule(n Node) Node {
	s, ok := n.(*SortNode)
	if !ok {
		return n
	}
	pr, ok := s.Input.(*ProjectNode)
	if !ok {
		return n
	}
	sc := scanBelow(pr.Input)
	if sc == nil {
		return n
	}
	o, ok := ScanOrderOf(s.Keys, pr.Exprs)
	if !ok {
		return n
	}
	sc.Scan.Order = o
	return pr
}

// ScanOrderOf is the order, if any, in which a topic scan can itself
// produce the sort of its projected rows (the scanOrder rule drops such a
// sort; the planner asks it too): by partition, by partition then offset,
// or by offset alone (the partitions merged), each ascending or
// descending. Offsets are unique within a
// partition, so these orders are total where PostgreSQL's would be, and
// ties of ORDER BY offset across partitions may come in any order, as in
// PostgreSQL. Reading newest first lets ORDER BY offset DESC LIMIT 10 (the
// tail of a topic) read about 10 messages per partition instead of all.
func ScanOrderOf(sort []SortKey, project []Expr) (ScanOrder, bool) {
	if len(sort) > 2 {
		return ScanOrder{}, false
	}
	col := func(k SortKey) MsgCol {
		if c, ok := project[k.Idx].(*ColExpr); ok && c.Idx < int(numMsgCols) {
			return MsgCol(c.Idx)
		}
		return numMsgCols
	}
	var o ScanOrder
	switch {
	case len(sort) == 0:
	case len(sort) == 1 && col(sort[0]) == ColOffset:
		o.Merge, o.OffsetDesc = true, sort[0].Desc
	case col(sort[0]) == ColPartition && (len(sort) == 1 || col(sort[1]) == ColOffset):
		o.PartDesc = sort[0].Desc
		o.OffsetDesc = len(sort) == 2 && sort[1].Desc
	default:
		return ScanOrder{}, false
	}
	return o, true
}

// scanBelow returns the scan under n's input when only a filter (if any)
// is between them.
func scanBelow(n Node) *ScanNode {
	if f, ok := n.(*FilterNode); ok {
		n = f.Input
	}
	s, _ := n.(*ScanNode)
	return s
}
