package executor

import (
	"context"

	"topicgate/planner"
	"topicgate/sql/pgerror"
)

// funcScanIter yields the rows of a set-returning function in FROM
// (planner.FuncScan): generate_series over integers, or unnest of an
// array. Its arguments are evaluated once, when it starts.
type funcScanIter struct {
	ec   *evalCtx
	fs   *planner.FuncScan
	init bool
	// generate_series
	cur, stop, step int64
	// unnest
	arr any
	i   int64
	n   int64
	end bool
}

func (it *funcScanIter) start() error {
	it.init = true
	args := make([]any, len(it.fs.Args))
	for i, a := range it.fs.Args {
		v, err := it.ec.eval(a, nil)
		if err != nil {
			return err
		}
		if v == nil {
			it.end = true // a NULL argument: no rows
			return nil
		}
		args[i] = v
	}
	switch it.fs.Name {
	case "generate_series":
		it.cur, it.stop, it.step = args[0].(int64), args[1].(int64), 1
		if len(args) == 3 {
			it.step = args[2].(int64)
		}
		if it.step == 0 {
			return pgerror.New(pgerror.CodeInvalidParameterValue, "step size cannot equal zero")
		}
	case "unnest":
		it.arr = args[0]
		if n, ok := arrayLen(args[0]).(int64); ok {
			it.n = n
		}
	}
	return nil
}

func (it *funcScanIter) next(ctx context.Context) ([]any, error) {
	if !it.init {
		if err := it.start(); err != nil {
			return nil, err
		}
	}
	if it.end {
		return nil, nil
	}
	switch it.fs.Name {
	case "generate_series":
		if it.step > 0 && it.cur > it.stop || it.step < 0 && it.cur < it.stop {
			it.end = true
			return nil, nil
		}
		v := it.cur
		if err := ctx.Err(); err != nil {
			return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		next := it.cur + it.step
		if (it.step > 0) != (next > it.cur) { // overflow: v was the last
			it.end = true
		}
		it.cur = next
		return []any{v}, nil
	default:
		if it.i >= it.n {
			it.end = true
			return nil, nil
		}
		it.i++
		return []any{arrayElem(it.arr, it.i)}, nil
	}
}
