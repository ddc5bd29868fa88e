package planner

// Helpers over bound expressions that binding and the rules share.

// walk calls fn for e and every sub-expression.
func walk(e Expr, fn func(Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch x := e.(type) {
	case *CmpExpr:
		walk(x.L, fn)
		walk(x.R, fn)
	case *LogicExpr:
		for _, a := range x.Args {
			walk(a, fn)
		}
	case *NotExpr:
		walk(x.X, fn)
	case *ArithExpr:
		walk(x.L, fn)
		walk(x.R, fn)
	case *NegExpr:
		walk(x.X, fn)
	case *JSONGetExpr:
		walk(x.X, fn)
		walk(x.Key, fn)
	case *JSONTestExpr:
		walk(x.X, fn)
		walk(x.Y, fn)
	case *JSONPathExpr:
		walk(x.X, fn)
		walk(x.Path, fn)
	case *FuncExpr:
		for _, a := range x.Args {
			walk(a, fn)
		}
	case *CastExpr:
		walk(x.X, fn)
	case *InExpr:
		walk(x.X, fn)
		for _, a := range x.List {
			walk(a, fn)
		}
	case *AnyExpr:
		walk(x.X, fn)
		walk(x.Array, fn)
	case *IsNullExpr:
		walk(x.X, fn)
	case *IsBoolExpr:
		walk(x.X, fn)
	case *CaseExpr:
		for _, w := range x.Whens {
			walk(w.Cond, fn)
			walk(w.Result, fn)
		}
		walk(x.Else, fn)
	case *CoalesceExpr:
		for _, a := range x.Args {
			walk(a, fn)
		}
	case *ArrayExpr:
		for _, a := range x.Elems {
			walk(a, fn)
		}
	case *SubscriptExpr:
		walk(x.X, fn)
		walk(x.Index, fn)
	case *SubqueryExpr:
		walk(x.X, fn) // the subquery's own plan is not part of this one
	case *WindowExpr:
		for _, l := range [][]Expr{x.Args, x.PartitionBy, x.Order} {
			for _, a := range l {
				walk(a, fn)
			}
		}
		if x.Agg != nil {
			walk(x.Agg, fn)
		}
	case *AggExpr:
		walk(x.Arg, fn)
		walk(x.Sep, fn)
		walk(x.Filter, fn)
		for _, o := range x.Order {
			walk(o, fn)
		}
	}
}

// conjuncts splits a filter into its top-level AND terms.
func conjuncts(e Expr, out []Expr) []Expr {
	if l, ok := e.(*LogicExpr); ok && l.And {
		for _, a := range l.Args {
			out = conjuncts(a, out)
		}
		return out
	}
	if e != nil {
		out = append(out, e)
	}
	return out
}

// isConstant reports whether e has no column references (constants and
// parameters only), so the executor can evaluate it once per execution.
func isConstant(e Expr) bool {
	ok := true
	walk(e, func(x Expr) {
		switch x.(type) {
		case *ColExpr, *AggExpr:
			ok = false
		case *SubqueryExpr: // a correlated one needs the row
			ok = ok && !x.(*SubqueryExpr).Correlated
		case *FuncExpr:
			if f := x.(*FuncExpr); f.Name == "clock_timestamp" {
				ok = false
			}
		}
	})
	return ok
}
