package rowexec

import (
	"context"

	"topicgate/planner/plantree"
	"topicgate/sql/values"
)

// joinIter joins the left input's rows, as they stream, with the right
// input's rows, which it holds (charged to the statement's memory):
// looked up by the equality keys when there are some, else all tried.
type joinIter struct {
	ec                  *EvalCtx
	jp                  *plantree.JoinPlan
	leftKeys, rightKeys []plantree.Expr // none: a nested loop
	residual            plantree.Expr
	left, right         Iter
	mem                 *queryMem

	built   bool
	rows    [][]any          // the right input
	byKey   map[string][]int // key -> indexes into rows (with keys)
	kb      []byte
	cur     []any // the left row being joined
	cands   []int // its candidate right rows (nil: all of them)
	pos     int   // next candidate to try
	all     bool  // cands is every right row
	matched bool  // cur has had a match
}

// shifted presents a right row at the joined row's column numbers.
type shifted struct {
	r   []any
	off int
}

func (s shifted) Col(i int) (any, error) { return s.r[i-s.off], nil }

// key encodes the join key values; ok is false when one is NULL (a NULL
// key matches nothing).
func (it *joinIter) key(exprs []plantree.Expr, r row) (string, bool, error) {
	it.kb = it.kb[:0]
	for _, e := range exprs {
		v, err := it.ec.Eval(e, r)
		if err != nil || v == nil {
			return "", false, err
		}
		it.kb = append(it.kb, 0)
		it.kb = append(it.kb, values.KeyText(v)...)
	}
	return string(it.kb), true, nil
}

func (it *joinIter) build(ctx context.Context) error {
	it.built = true
	if len(it.rightKeys) > 0 {
		it.byKey = map[string][]int{}
	}
	for {
		r, err := it.right.Next(ctx)
		if err != nil {
			return err
		}
		if r == nil {
			return nil
		}
		r = r[:it.jp.RightWidth:it.jp.RightWidth]
		if it.byKey != nil {
			k, ok, err := it.key(it.rightKeys, shifted{r, it.jp.LeftWidth})
			if err != nil {
				return err
			}
			if !ok {
				continue // never matches
			}
			it.byKey[k] = append(it.byKey[k], len(it.rows))
			if err := it.mem.charge(int64(len(k)) + 24); err != nil {
				return err
			}
		}
		it.rows = append(it.rows, r)
		if err := it.mem.charge(rowBytes(r)); err != nil {
			return err
		}
	}
}

func (it *joinIter) Next(ctx context.Context) ([]any, error) {
	if !it.built {
		if err := it.build(ctx); err != nil {
			return nil, err
		}
	}
	lw := it.jp.LeftWidth
	for {
		if it.cur == nil {
			if err := ctx.Err(); err != nil { // a cross join can run long: let a cancel in
				return nil, err
			}
			l, err := it.left.Next(ctx)
			if l == nil || err != nil {
				return nil, err
			}
			it.cur, it.pos, it.matched = l[:lw:lw], 0, false
			it.cands, it.all = nil, it.byKey == nil
			if it.byKey != nil {
				k, ok, err := it.key(it.leftKeys, ValuesRow(it.cur))
				if err != nil {
					return nil, err
				}
				if ok {
					it.cands = it.byKey[k]
				}
			}
		}
		n := len(it.cands)
		if it.all {
			n = len(it.rows)
		}
		for it.pos < n {
			i := it.pos
			if !it.all {
				i = it.cands[it.pos]
			}
			it.pos++
			out, err := it.ec.tryJoin(it.jp, it.residual, it.cur, it.rows[i])
			if out != nil || err != nil {
				it.matched = true
				return out, err
			}
		}
		cur, matched := it.cur, it.matched
		it.cur = nil
		if it.jp.Kind == "LEFT" && !matched { // the left row with NULLs
			return joinedRow(it.jp, cur, nil), nil
		}
	}
}

// joinedRow is left row l followed by right row r (nil: NULLs).
func joinedRow(jp *plantree.JoinPlan, l, r []any) []any {
	out := make([]any, jp.LeftWidth+jp.RightWidth)
	copy(out, l)
	copy(out[jp.LeftWidth:], r)
	return out
}

// tryJoin is the joined row of l and r if it passes residual, else nil.
func (ec *EvalCtx) tryJoin(jp *plantree.JoinPlan, residual plantree.Expr, l, r []any) ([]any, error) {
	out := joinedRow(jp, l, r)
	if keep, err := ec.filter(residual, ValuesRow(out)); !keep || err != nil {
		return nil, err
	}
	return out, nil
}
