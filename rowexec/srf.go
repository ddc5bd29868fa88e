package rowexec

import (
	"context"
	"strings"

	"topicgate/eval"
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
)

// srfIter is PostgreSQL's ProjectSet: for each input row it starts the
// plan's set-returning calls and steps them in lockstep, projecting one
// row per step with the exhausted ones NULL, until all are exhausted.
type srfIter struct {
	ec      *EvalCtx
	in      Iter
	srfs    []*plantree.FuncExpr
	project []plantree.Expr
	cur     row
	gens    []eval.Generator
}

func (it *srfIter) Next(ctx context.Context) ([]any, error) {
	if it.ec.srf == nil {
		it.ec.srf = map[*plantree.FuncExpr]any{}
	}
	for {
		if it.cur == nil {
			r, err := it.in.Next(ctx)
			if r == nil || err != nil {
				return nil, err
			}
			it.cur = ValuesRow(r)
			it.gens = it.gens[:0]
			for _, f := range it.srfs {
				args := make([]any, len(f.Args))
				for i, a := range f.Args {
					if args[i], err = it.ec.Eval(a, it.cur); err != nil {
						return nil, err
					}
				}
				g, err := eval.NewGenerator(f, args)
				if err != nil {
					return nil, err
				}
				it.gens = append(it.gens, g)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		any := false
		for i, g := range it.gens {
			v, ok, err := g.Next()
			if err != nil {
				return nil, err
			}
			any = any || ok
			it.ec.srf[it.srfs[i]] = v
		}
		if !any {
			it.cur = nil
			continue
		}
		return it.ec.project(it.project, it.cur)
	}
}

// srfValue is the current value of a set-returning call (set by srfIter).
func (ec *EvalCtx) srfValue(f *plantree.FuncExpr) (any, error) {
	v, ok := ec.srf[f]
	if !ok {
		return nil, pgerror.AssertionFailed("set-returning function %s evaluated outside its ProjectSet", strings.ToLower(f.Name))
	}
	return v, nil
}
