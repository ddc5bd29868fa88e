package rowexec

import (
	"context"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
)

// recursiveIter evaluates a WITH RECURSIVE query as PostgreSQL's
// RecursiveUnion does: it streams the non-recursive term's rows, then runs
// the recursive term over the rows the previous iteration produced (the
// work table) and streams its rows, until an iteration produces none.
// Without ALL, a row equal to one produced before is discarded (also
// within the non-recursive term). Rows are produced as the caller pulls
// them, so a LIMIT around the query ends an endless recursion.
//
// Every row produced is charged to the statement's memory limit and never
// released, as if the query's result were held (PostgreSQL keeps it in a
// tuplestore, spilling to disk): a recursion that does not end fails with
// 54000 once it has produced more than --max-query-mib, instead of looping
// for ever.
type recursiveIter struct {
	ec       *EvalCtx
	node     *plantree.RecursiveUnionNode
	rp       *plantree.RecursivePlan
	mem      *queryMem
	cur      Iter    // the term being read; nil between terms
	produced [][]any // the rows of the running iteration: the next work table
	seen     map[string]bool
	kb       []byte
	// started is set once the non-recursive term ran.
	started bool
}

func (it *recursiveIter) Next(ctx context.Context) ([]any, error) {
	width := len(it.rp.Work.Cols)
	for {
		if it.cur == nil {
			var err error
			if it.cur, err = it.startTerm(ctx); it.cur == nil || err != nil {
				return nil, err
			}
		}
		r, err := it.cur.Next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			it.cur = nil
			continue
		}
		r = r[:width:width]
		if !it.rp.All {
			it.kb = it.kb[:0]
			for _, v := range r {
				it.kb = appendKey(it.kb, v)
			}
			if it.seen[string(it.kb)] {
				continue
			}
			if it.seen == nil {
				it.seen = map[string]bool{}
			}
			it.seen[string(it.kb)] = true
			if err := it.mem.chargeFor(2*int64(len(it.kb))+48, recursiveWhat); err != nil {
				return nil, err
			}
		}
		if err := it.mem.chargeFor(rowBytes(r), recursiveWhat); err != nil {
			return nil, err
		}
		it.produced = append(it.produced, r)
		return r, nil
	}
}

// recursiveWhat names what a recursive query holds memory for in 54000.
const recursiveWhat = "evaluate a recursive query (WITH RECURSIVE)"

// startTerm starts the non-recursive term, or the recursive term over the
// rows of the iteration that just ended; nil when that produced none.
func (it *recursiveIter) startTerm(ctx context.Context) (Iter, error) {
	if !it.started {
		it.started = true
		return open(ctx, it.ec, it.node.First, nil)
	}
	if len(it.produced) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	if it.ec.work == nil {
		it.ec.work = map[*plantree.WorkTable][][]any{}
	}
	// The recursive term's plan reads its work table when it is started
	// (its node is opened), so another execution of the same plan (a correlated
	// subquery run per row) setting its own rows later does not disturb
	// this one.
	it.ec.work[it.rp.Work] = it.produced
	it.produced = nil
	return open(ctx, it.ec, it.node.Next, nil)
}
