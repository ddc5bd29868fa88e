package rowexec

import (
	"context"
	"math"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// Run runs a query block: it opens the block's plan tree (the one the
// planner built, plantree.Tree) as one Iter. The statement's memory budget
// is created by the first block that runs and shared by every block of
// the statement (EvalCtx.mem).
//
// direct, when not nil, offers an encoder for rows built ahead of sending;
// it reaches the session's consumer read (Host.Open) at the top of the
// tree, package consume's direct.go. Only a caller that sends the whole
// result at once may pass it.
func Run(ctx context.Context, ec *EvalCtx, p *plantree.SelectPlan, direct func() *wire.RowEncoder) (Iter, error) {
	ec.ctx = ctx
	if ec.mem == nil {
		ec.mem = &queryMem{limit: ec.host.MaxQueryBytes()}
	}
	if ec.read == nil {
		ec.read = &readPoint{}
	}
	return open(ctx, ec, plantree.Tree(p), direct)
}

// readPoint is a statement's read point on a store whose state this
// process folds from a log others write too (topicstore.ReadBarrier: the
// cluster store). A statement's first topic scan waits at it, once, so
// that it sees every commit acknowledged before the statement began,
// through whichever gateway: PostgreSQL's READ COMMITTED snapshot per
// statement. The embedded store is the only writer of its state and
// needs none. Consumer reads do not wait: what they read from is a stored
// position that their commit is conditional on, so a stale one ends in
// 40001, never in a wrong answer.
type readPoint struct{ taken bool }

// TakeReadPoint waits at the statement's read point, the first time.
func (ec *EvalCtx) TakeReadPoint() error {
	rb, ok := ec.host.Store().(topicstore.ReadBarrier)
	if !ok || ec.read == nil || ec.read.taken {
		return nil
	}
	ctx := ec.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if err := rb.Barrier(ctx); err != nil {
		return txn.StoreError(err, "")
	}
	ec.read.taken = true
	return nil
}

// open starts the iterator of node n (under EXPLAIN ANALYZE, counted).
func open(ctx context.Context, ec *EvalCtx, n plantree.Node, direct func() *wire.RowEncoder) (Iter, error) {
	if ec.stats == nil {
		return openNode(ctx, ec, n, direct)
	}
	st := ec.stats.of(n)
	st.Loops++
	stop := st.start()
	it, err := openNode(ctx, ec, n, direct)
	stop()
	if it == nil || err != nil {
		return it, err
	}
	return &statIter{in: it, st: st}, nil
}

// openNode maps each kind of plan node to its one iterator. It decides
// nothing the tree does not say: the strategy is the node.
func openNode(ctx context.Context, ec *EvalCtx, n plantree.Node, direct func() *wire.RowEncoder) (Iter, error) {
	switch x := n.(type) {
	case *plantree.InitPlanNode:
		if err := ec.runSubqueries(ctx, x.Subs, ec.mem); err != nil {
			return nil, err
		}
		return open(ctx, ec, x.Input, direct)
	case *plantree.ConsumerReadNode, *plantree.SysScanNode:
		return ec.host.Open(ctx, ec, n, direct)
	case *plantree.ScanNode:
		return openScan(ec, x)
	case *plantree.FilterNode:
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		return &filterIter{ec: ec, in: in, filter: x.Cond}, nil
	case *plantree.ProjectNode:
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		return &projectIter{ec: ec, in: in, project: x.Exprs, limit: -1}, nil
	case *plantree.LimitNode:
		skip, limit, err := counts(ec, x.Limit, x.Offset)
		if err != nil {
			return nil, err
		}
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		return &limitIter{in: in, skip: skip, limit: limit}, nil
	case *plantree.SortNode:
		rows, err := drain(ctx, ec, x.Input, true)
		if err != nil {
			return nil, err
		}
		sortRows(rows, x.Keys)
		return &sliceIter{rows: rows}, nil
	case *plantree.TopNNode:
		return openTopN(ctx, ec, x)
	case *plantree.DistinctOnNode:
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		firsts := &distinctOn{cols: x.Cols, keys: x.Keys, at: map[string]int{}}
		var rows [][]any
		for {
			r, err := in.Next(ctx)
			if err != nil {
				return nil, err
			}
			if r == nil {
				return &sliceIter{rows: rows}, nil
			}
			if err := firsts.add(r, &rows, ec.mem); err != nil {
				return nil, err
			}
		}
	case *plantree.AggregateNode:
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		return aggregate(ctx, ec, x.Agg, x.Having, in, ec.mem)
	case *plantree.WindowNode:
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		return computeWindows(ctx, ec, x.Windows, in, ec.mem)
	case *plantree.ProjectSetNode:
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		return &srfIter{ec: ec, in: in, srfs: x.SRFs, project: x.Exprs}, nil
	case *plantree.HashJoinNode:
		l, r, err := openBoth(ctx, ec, x.Left, x.Right)
		if err != nil {
			return nil, err
		}
		return &joinIter{ec: ec, jp: x.Join, leftKeys: x.LeftKeys, rightKeys: x.RightKeys, residual: x.Residual, left: l, right: r, mem: ec.mem}, nil
	case *plantree.NestedLoopNode:
		l, r, err := openBoth(ctx, ec, x.Left, x.Right)
		if err != nil {
			return nil, err
		}
		return &joinIter{ec: ec, jp: x.Join, residual: x.Residual, left: l, right: r, mem: ec.mem}, nil
	case *plantree.LateralJoinNode:
		l, err := open(ctx, ec, x.Left, nil)
		if err != nil {
			return nil, err
		}
		return &lateralJoinIter{ec: ec, node: x, left: l}, nil
	case *plantree.SetOpNode:
		l, r, err := openBoth(ctx, ec, x.Left, x.Right)
		if err != nil {
			return nil, err
		}
		return &setOpIter{op: x.Op, left: l, right: r, width: len(x.Op.Left.Cols), mem: ec.mem}, nil
	case *plantree.ValuesNode:
		return &valuesIter{ec: ec, rows: x.Rows}, nil
	case *plantree.SubqueryScanNode:
		return open(ctx, ec, x.Input, nil)
	case *plantree.RecursiveUnionNode:
		return &recursiveIter{ec: ec, node: x, rp: x.Rec, mem: ec.mem}, nil
	case *plantree.WorkTableScanNode:
		return &sliceIter{rows: ec.work[x.Work]}, nil
	case *plantree.FunctionScanNode:
		return &funcScanIter{ec: ec, fs: x.Func}, nil
	case *plantree.ResultNode:
		return &sliceIter{rows: [][]any{{}}}, nil
	}
	return nil, errNoIterator(n)
}

// errNoIterator is the error of a plan node nothing opens.
func errNoIterator(n plantree.Node) error {
	return pgerror.AssertionFailed("no iterator for plan node %T", n)
}

// openBoth starts the two inputs of a join or set operation.
func openBoth(ctx context.Context, ec *EvalCtx, l, r plantree.Node) (Iter, Iter, error) {
	li, err := open(ctx, ec, l, nil)
	if err != nil {
		return nil, nil, err
	}
	ri, err := open(ctx, ec, r, nil)
	return li, ri, err
}

// openScan starts a topic scan over the ranges its bounds give, in its
// order, with its filter, projection and limit applied as it reads.
func openScan(ec *EvalCtx, x *plantree.ScanNode) (Iter, error) {
	skip, limit, err := counts(ec, x.Limit, x.Offset)
	if err != nil {
		return nil, err
	}
	if err := ec.TakeReadPoint(); err != nil {
		return nil, err
	}
	store := ec.host.Store()
	ti, err := store.Topic(x.Scan.Topic)
	if err != nil {
		return nil, txn.StoreError(err, x.Scan.Topic)
	}
	ranges, minWrite, err := scanRanges(ec, &x.Scan, ti)
	if err != nil {
		return nil, err
	}
	if x.Scan.Order != (plantree.ScanOrder{}) {
		return newOrderedScan(ec, store, x, ti, ranges, minWrite, skip, limit), nil
	}
	return &scanIter{ec: ec, store: store, plan: x, ranges: ranges, minWrite: minWrite, skip: skip, limit: limit}, nil
}

// drain reads a node's rows to the end, charged to the statement's memory
// when charge is set.
func drain(ctx context.Context, ec *EvalCtx, n plantree.Node, charge bool) ([][]any, error) {
	in, err := open(ctx, ec, n, nil)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for {
		r, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return rows, nil
		}
		if charge {
			if err := ec.mem.charge(rowBytes(r)); err != nil {
				return nil, err
			}
		}
		rows = append(rows, r)
	}
}

// openTopN keeps the rows ORDER BY ... LIMIT can return (all of them,
// sorted, when the limit is too large to keep that way).
func openTopN(ctx context.Context, ec *EvalCtx, x *plantree.TopNNode) (Iter, error) {
	skip, limit, err := counts(ec, x.Limit, x.Offset)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	if limit >= 0 && limit <= math.MaxInt32-skip {
		in, err := open(ctx, ec, x.Input, nil)
		if err != nil {
			return nil, err
		}
		top := newTopN(x.Keys, skip+limit)
		for {
			r, err := in.Next(ctx)
			if err != nil {
				return nil, err
			}
			if r == nil {
				break
			}
			top.add(r)
		}
		rows = top.sorted()
	} else {
		if rows, err = drain(ctx, ec, x.Input, true); err != nil {
			return nil, err
		}
		sortRows(rows, x.Keys)
	}
	rows = rows[min(int64(len(rows)), skip):]
	if limit >= 0 && int64(len(rows)) > limit {
		rows = rows[:limit]
	}
	return &sliceIter{rows: rows}, nil
}

// counts evaluates LIMIT and OFFSET: skip >= 0, limit -1 for none.
func counts(ec *EvalCtx, limitExpr, offsetExpr plantree.Expr) (skip, limit int64, err error) {
	if limit, err = EvalCount(ec, limitExpr, "LIMIT"); err != nil {
		return 0, 0, err
	}
	if skip, err = EvalCount(ec, offsetExpr, "OFFSET"); err != nil {
		return 0, 0, err
	}
	return max(skip, 0), limit, nil
}

// limitIter skips and cuts its input's rows.
type limitIter struct {
	in          Iter
	skip, limit int64
}

func (it *limitIter) Next(ctx context.Context) ([]any, error) {
	for it.limit != 0 {
		r, err := it.in.Next(ctx)
		if r == nil || err != nil {
			return nil, err
		}
		if it.skip > 0 {
			it.skip--
			continue
		}
		if it.limit > 0 {
			it.limit--
		}
		return r, nil
	}
	return nil, nil
}
