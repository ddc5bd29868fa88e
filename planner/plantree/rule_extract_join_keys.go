package plantree

// extractJoinKeys splits a join's conditions (ON, USING and the WHERE
// terms over both sides of an inner join) into equality keys between an
// expression of each side and a residual.
func extractJoinKeys(n Node) Node {
	nl, ok := n.(*NestedLoopNode)
	if !ok || nl.conds == nil {
		return n
	}
	var lk, rk, rest []Expr
	seen := map[string]bool{}
	for _, c := range nl.conds {
		if l, r, ok := equiKey(c, nl.Join.LeftWidth); ok {
			k := l.String() + "\x00" + r.String()
			if !seen[k] { // ON a.k = b.k WHERE a.k = b.k: one key
				seen[k] = true
				lk, rk = append(lk, l), append(rk, r)
			}
			continue
		}
		rest = append(rest, c)
	}
	nl.conds = nil
	nl.Residual = andExprs(rest)
	if lk != nil {
		return &HashJoinNode{joinBase: nl.joinBase, LeftKeys: lk, RightKeys: rk, Residual: nl.Residual}
	}
	return nl
}

// equiKey splits an equality between an expression over the left columns
// only and one over the right columns only (either way round) into join
// keys of one type.
func equiKey(c Expr, lw int) (Expr, Expr, bool) {
	cmp, ok := c.(*CmpExpr)
	if !ok || cmp.Op != "=" {
		return nil, nil, false
	}
	ls, rs := colSides(cmp.L, lw), colSides(cmp.R, lw)
	var lk, rk Expr
	switch {
	case ls == 1 && rs == 2:
		lk, rk = cmp.L, cmp.R
	case ls == 2 && rs == 1:
		lk, rk = cmp.R, cmp.L
	default:
		return nil, nil, false
	}
	lt, rt := lk.Type(), rk.Type()
	if lt != rt { // compare as one type, so that equal keys have one text
		switch {
		case lt.IsNumeric() && rt.IsNumeric():
			t := max(RankOf(lt), RankOf(rt)).Type()
			lk, rk = castTo(lk, t), castTo(rk, t)
		case lt.IsText() && rt.IsText():
			lk, rk = castTo(lk, TText), castTo(rk, TText)
		default:
			return nil, nil, false // compared row by row, as bound
		}
	}
	return lk, rk, true
}

func castTo(e Expr, t Type) Expr {
	if e.Type() == t {
		return e
	}
	return &CastExpr{X: e, T: t}
}

// colSides reports which side's columns e reads: 0 none, 1 left only,
// 2 right only, 3 both. Subqueries count as neither.
func colSides(e Expr, lw int) int {
	s := 0
	Walk(e, func(x Expr) {
		if c, ok := x.(*ColExpr); ok {
			if c.Idx < lw {
				s |= 1
			} else {
				s |= 2
			}
		}
	})
	return s
}
