package rowexec

import (
	"context"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
)

// lateralJoinIter joins each left row with the rows its right side gives
// for it (plantree.JoinPlan.Lateral: `FROM t, jsonb_each_text(t.attrs)`):
// the right plan runs again for every left row, whose columns its
// OuterRefs read (then those of the row around a subquery), and nothing
// is held. Residual filters the joined rows; a LEFT join keeps a left row
// without matches, padded with NULLs.
type lateralJoinIter struct {
	ec   *EvalCtx
	node *plantree.LateralJoinNode
	left Iter
	mem  *queryMem // what the right side holds for the current left row

	cur     []any // the left row being joined
	right   Iter  // its right rows
	matched bool  // cur has had a match
}

// lateralRow is the outer row of a lateral right side: the left row's
// columns, then those of the row around (a correlated subquery's).
type lateralRow struct {
	left  []any
	outer row
}

func (r lateralRow) Col(i int) (any, error) {
	if i < len(r.left) {
		return r.left[i], nil
	}
	if r.outer == nil {
		return nil, pgerror.AssertionFailed("lateral reference %d past the left row, outside a subquery", i)
	}
	return r.outer.Col(i - len(r.left))
}

func (it *lateralJoinIter) Next(ctx context.Context) ([]any, error) {
	jp := it.node.Join
	lw := jp.LeftWidth
	for {
		if it.cur == nil {
			if err := ctx.Err(); err != nil {
				return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
			}
			l, err := it.left.Next(ctx)
			if l == nil || err != nil {
				return nil, err
			}
			it.cur, it.matched = l[:lw:lw], false
			inner := *it.ec
			inner.outer = lateralRow{left: it.cur, outer: it.ec.outer}
			it.mem = it.ec.mem.sub()
			inner.mem = it.mem
			if it.right, err = open(ctx, &inner, it.node.Right, nil); err != nil {
				return nil, err
			}
		}
		for r, err := it.right.Next(ctx); r != nil || err != nil; r, err = it.right.Next(ctx) {
			if err == nil {
				r, err = it.ec.tryJoin(jp, it.node.Residual, it.cur, r)
			}
			if r != nil || err != nil {
				it.matched = true
				return r, err
			}
		}
		cur, matched := it.cur, it.matched
		it.cur, it.right = nil, nil
		it.mem.end()                       // what the right side held for this row is gone
		if jp.Kind == "LEFT" && !matched { // the left row with NULLs
			return joinedRow(jp, cur, nil), nil
		}
	}
}
