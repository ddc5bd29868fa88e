package plantree

// pushdownBounds moves partition, offset and written_at predicates of the
// filter right above a topic scan into the scan's ranges (pushDown), so a
// small read of a huge topic seeks instead of scanning. The filter stays.
func pushdownBounds(n Node) Node {
	if f, ok := n.(*FilterNode); ok {
		if s, ok := f.Input.(*ScanNode); ok {
			pushDown(&s.Scan, f.Cond)
		}
	}
	return n
}

var flipOp = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// pushDown is the rule that moves partition, offset and written_at
// predicates of the filter into the scan, so a read of a few messages from a
// huge topic seeks instead of scanning. The filter itself is kept.
func pushDown(s *MsgScan, filter Expr) {
	for _, c := range Conjuncts(filter, nil) {
		switch x := c.(type) {
		case *CmpExpr:
			col, ok := x.L.(*ColExpr)
			val, op := x.R, x.Op
			if !ok {
				col, ok = x.R.(*ColExpr)
				val, op = x.L, flipOp[x.Op]
			}
			if !ok || op == "" || !IsConstant(val) {
				continue
			}
			switch MsgCol(col.Idx) {
			case ColPartition:
				if op == "=" && s.Partitions == nil && s.PartArray == nil {
					s.Partitions = []Expr{val}
				}
			case ColOffset:
				addBound(&s.Lo, &s.Hi, op, val)
			case ColWrittenAt:
				var hi []Bound
				addBound(&s.MinWrittenAt, &hi, op, val)
			}
		case *InExpr:
			col, ok := x.X.(*ColExpr)
			if !ok || x.Not || MsgCol(col.Idx) != ColPartition || s.Partitions != nil {
				continue
			}
			all := true
			for _, v := range x.List {
				all = all && IsConstant(v)
			}
			if all {
				s.Partitions = x.List
			}
		case *AnyExpr:
			col, ok := x.X.(*ColExpr)
			if ok && !x.All && x.Op == "=" && MsgCol(col.Idx) == ColPartition && IsConstant(x.Array) && s.Partitions == nil {
				s.PartArray = x.Array
			}
		}
	}
}

func addBound(lo, hi *[]Bound, op string, val Expr) {
	switch op {
	case "=":
		*lo = append(*lo, Bound{X: val, Inclusive: true})
		*hi = append(*hi, Bound{X: val, Inclusive: true})
	case ">":
		*lo = append(*lo, Bound{X: val})
	case ">=":
		*lo = append(*lo, Bound{X: val, Inclusive: true})
	case "<":
		*hi = append(*hi, Bound{X: val})
	case "<=":
		*hi = append(*hi, Bound{X: val, Inclusive: true})
	}
}
