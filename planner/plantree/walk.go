package plantree

// Helpers over bound expressions that binding and the rules share.

// Walk calls fn for e and every sub-expression.
func Walk(e Expr, fn func(Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch x := e.(type) {
	case *CmpExpr:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *LogicExpr:
		for _, a := range x.Args {
			Walk(a, fn)
		}
	case *NotExpr:
		Walk(x.X, fn)
	case *ArithExpr:
		Walk(x.L, fn)
		Walk(x.R, fn)
	case *NegExpr:
		Walk(x.X, fn)
	case *JSONGetExpr:
		Walk(x.X, fn)
		Walk(x.Key, fn)
	case *JSONTestExpr:
		Walk(x.X, fn)
		Walk(x.Y, fn)
	case *JSONPathExpr:
		Walk(x.X, fn)
		Walk(x.Path, fn)
	case *FuncExpr:
		for _, a := range x.Args {
			Walk(a, fn)
		}
	case *CastExpr:
		Walk(x.X, fn)
	case *InExpr:
		Walk(x.X, fn)
		for _, a := range x.List {
			Walk(a, fn)
		}
	case *AnyExpr:
		Walk(x.X, fn)
		Walk(x.Array, fn)
	case *IsNullExpr:
		Walk(x.X, fn)
	case *IsBoolExpr:
		Walk(x.X, fn)
	case *CaseExpr:
		for _, w := range x.Whens {
			Walk(w.Cond, fn)
			Walk(w.Result, fn)
		}
		Walk(x.Else, fn)
	case *CoalesceExpr:
		for _, a := range x.Args {
			Walk(a, fn)
		}
	case *ArrayExpr:
		for _, a := range x.Elems {
			Walk(a, fn)
		}
	case *SubscriptExpr:
		Walk(x.X, fn)
		Walk(x.Index, fn)
	case *SubqueryExpr:
		Walk(x.X, fn) // the subquery's own plan is not part of this one
	case *WindowExpr:
		for _, l := range [][]Expr{x.Args, x.PartitionBy, x.Order} {
			for _, a := range l {
				Walk(a, fn)
			}
		}
		if x.Agg != nil {
			Walk(x.Agg, fn)
		}
	case *AggExpr:
		Walk(x.Arg, fn)
		Walk(x.Sep, fn)
		Walk(x.Filter, fn)
		for _, o := range x.Order {
			Walk(o, fn)
		}
	}
}

// Conjuncts splits a filter into its top-level AND terms.
func Conjuncts(e Expr, out []Expr) []Expr {
	if l, ok := e.(*LogicExpr); ok && l.And {
		for _, a := range l.Args {
			out = Conjuncts(a, out)
		}
		return out
	}
	if e != nil {
		out = append(out, e)
	}
	return out
}

// IsConstant reports whether e has no column references (constants and
// parameters only), so the executor can evaluate it once per execution.
func IsConstant(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) {
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
