package rowexec

import (
	"context"

	"topicgate/eval"
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
)

// funcScanIter yields the rows of a function in FROM (plantree.FuncScan):
// the values of a set-returning call, from the generators the select
// list steps too (eval.NewGenerator), or the one value of a scalar call; a row of
// jsonb_each is its key and value; WITH ORDINALITY numbers the rows. The
// arguments are evaluated when it starts, against ec's outer row (a
// lateral join's left row, the row around a subquery).
type funcScanIter struct {
	ec  *EvalCtx
	fs  *plantree.FuncScan
	gen eval.Generator
	n   int64 // rows yielded
}

func (it *funcScanIter) start() error {
	call, ok := it.fs.Call.(*plantree.FuncExpr)
	if !ok || !call.Set {
		v, err := it.ec.Eval(it.fs.Call, nil)
		if err != nil {
			return err
		}
		it.gen = eval.Values(v)
		return nil
	}
	args := make([]any, len(call.Args))
	for i, a := range call.Args {
		v, err := it.ec.Eval(a, nil)
		if err != nil {
			return err
		}
		args[i] = v
	}
	g, err := eval.NewGenerator(call, args)
	if err != nil {
		return err
	}
	it.gen = g
	return nil
}

func (it *funcScanIter) Next(ctx context.Context) ([]any, error) {
	if it.gen == nil {
		if err := it.start(); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil { // a series may be long
		return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	v, ok, err := it.gen.Next()
	if !ok || err != nil {
		return nil, err
	}
	out := make([]any, 0, len(it.fs.Cols))
	if p, ok := v.(eval.JSONBPair); ok {
		out = append(out, p.Key, p.Value)
	} else {
		out = append(out, v)
	}
	if it.fs.Ordinality {
		it.n++
		out = append(out, it.n)
	}
	return out, nil
}
