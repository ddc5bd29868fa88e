package planner

import (
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
)

// Set-returning functions in the select list, as PostgreSQL 10+ runs them
// (its ProjectSet node): for each input row every SRF of the select list
// and ORDER BY is evaluated once, the SRFs then advance in lockstep, one
// output row per step, the ones already exhausted reading NULL, until all
// are; a row whose SRFs yield nothing produces no output. The executor
// does the stepping; package scalar binds and marks each such call
// (FuncExpr.Set), and the planner lists them in SelectPlan.SRFs. They run after aggregation and window
// functions and before sorting, DISTINCT ON and LIMIT.

// collectSRFs lists the set-returning calls of the select list and ORDER
// BY (p.Project, after any rewrite) and refuses the shapes the executor
// does not run them in.
func collectSRFs(p *plantree.SelectPlan, distinct bool, groupBy []plantree.Expr) error {
	for _, g := range groupBy {
		if hasSRF(g) {
			what := "GROUP BY"
			if distinct {
				what = "DISTINCT"
			}
			return pgerror.Newf(pgerror.CodeFeatureNotSupported, "set-returning functions with %s are not supported", what)
		}
	}
	for _, e := range p.Project {
		plantree.Walk(e, func(x plantree.Expr) {
			if f, ok := x.(*plantree.FuncExpr); ok && f.Set {
				p.SRFs = append(p.SRFs, f)
			}
		})
	}
	if len(p.SRFs) == 0 {
		return nil
	}
	if p.DistinctOn != nil {
		return pgerror.New(pgerror.CodeFeatureNotSupported, "set-returning functions with DISTINCT ON are not supported")
	}
	if p.Consumer != nil {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported, "set-returning functions are not supported with a read as consumer \"%s\"", p.Consumer.Consumer)
	}
	return nil
}

// hasSRF reports whether e calls a set-returning function.
func hasSRF(e plantree.Expr) bool {
	found := false
	plantree.Walk(e, func(x plantree.Expr) {
		if f, ok := x.(*plantree.FuncExpr); ok && f.Set {
			found = true
		}
	})
	return found
}
