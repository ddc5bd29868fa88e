package sql

// NumParams returns the highest $n used anywhere in s (expressions, hints
// and option values), or 0.
func NumParams(s Stmt) int { return len(ParamsUsed(s)) }

// ParamsUsed reports, for $1 up to the highest $n of s, whether s uses it.
func ParamsUsed(s Stmt) []bool {
	var used []bool
	use := func(n int) {
		for len(used) < n {
			used = append(used, false)
		}
		if n > 0 {
			used[n-1] = true
		}
	}
	lit := func(l Literal) {
		if l.Kind == LitParam {
			use(l.Param)
		}
	}
	opts := func(os []Option) {
		for _, o := range os {
			lit(o.Value)
		}
	}
	WalkStmt(s, func(e Expr) {
		switch x := e.(type) {
		case *ParamRef:
			use(x.N)
		case *Const:
			lit(x.Lit)
		}
	}, func(t *TableRef) { opts(t.Hints) })
	switch x := s.(type) {
	case *CreateTopic:
		opts(x.Options)
		for _, c := range x.Consumers {
			opts(c.Options)
		}
	case *AlterTopic:
		for _, a := range x.Actions {
			switch a := a.(type) {
			case *AddConsumer:
				opts(a.Consumer.Options)
			case *AlterConsumer:
				opts(a.Set)
			case *SetOptions:
				opts(a.Options)
			}
		}
	}
	return used
}

// WalkStmt calls fe for every expression (pre-order, nested ones included)
// and ft for every table reference of s. Either may be nil.
func WalkStmt(s Stmt, fe func(Expr), ft func(*TableRef)) {
	w := walker{fe: fe, ft: ft}
	w.stmt(s)
}

// WalkExpr calls fe for e and every expression nested in it (pre-order).
func WalkExpr(e Expr, fe func(Expr)) {
	walker{fe: fe}.expr(e)
}

type walker struct {
	fe func(Expr)
	ft func(*TableRef)
}

func (w walker) table(t *TableRef) {
	if t == nil {
		return
	}
	if w.ft != nil {
		w.ft(t)
	}
	w.sel(t.Sub)
	if t.Recursive != nil { // not through WorkTable: the query is walked once
		w.sel(t.Recursive.NonRec)
		w.sel(t.Recursive.Rec)
	}
	if t.Join != nil {
		w.table(&t.Join.Left)
		w.table(&t.Join.Right)
		w.expr(t.Join.On)
	}
	if t.SetOp != nil {
		w.sel(t.SetOp.Left)
		w.sel(t.SetOp.Right)
	}
	for _, row := range t.Values {
		w.exprs(row)
	}
	if t.Func != nil {
		w.expr(t.Func)
	}
}

func (w walker) targets(ts []Target) {
	for _, t := range ts {
		w.expr(t.Expr)
	}
}

func (w walker) exprs(es []Expr) {
	for _, e := range es {
		w.expr(e)
	}
}

func (w walker) stmt(s Stmt) {
	switch x := s.(type) {
	case *Select:
		w.sel(x)
	case *Insert:
		w.table(&x.Table)
		for _, row := range x.Values {
			w.exprs(row)
		}
		w.sel(x.Select)
		w.targets(x.Returning)
	case *Update:
		w.table(&x.Table)
		for _, sc := range x.Set {
			w.expr(sc.Value)
		}
		w.expr(x.Where)
		w.targets(x.Returning)
	case *Delete:
		w.table(&x.Table)
		w.expr(x.Where)
		w.targets(x.Returning)
	case *CopyFrom:
		w.table(&x.Table)
	case *CopyTo:
		w.sel(x.Query)
	case *DeclareCursor:
		w.sel(x.Query)
	case *Explain:
		w.stmt(x.Stmt)
	}
}

func (w walker) sel(s *Select) {
	if s == nil {
		return
	}
	w.exprs(s.DistinctOn)
	w.targets(s.Targets)
	w.table(s.From)
	w.expr(s.Where)
	w.exprs(s.GroupBy)
	w.expr(s.Having)
	for _, o := range s.OrderBy {
		w.expr(o.Expr)
	}
	w.expr(s.Limit)
	w.expr(s.Offset)
}

func (w walker) expr(e Expr) {
	if e == nil {
		return
	}
	if w.fe != nil {
		w.fe(e)
	}
	switch x := e.(type) {
	case *BinOp:
		w.expr(x.L)
		w.expr(x.R)
	case *UnaryOp:
		w.expr(x.X)
	case *FuncCall:
		w.exprs(x.Args)
		for _, o := range x.Order {
			w.expr(o.Expr)
		}
		if x.Filter != nil {
			w.expr(x.Filter)
		}
		if x.Over != nil {
			w.exprs(x.Over.PartitionBy)
			for _, o := range x.Over.OrderBy {
				w.expr(o.Expr)
			}
			if f := x.Over.Frame; f != nil {
				for _, e := range []Expr{f.Start.Offset, f.End.Offset} {
					if e != nil {
						w.expr(e)
					}
				}
			}
		}
	case *Cast:
		w.expr(x.X)
	case *InList:
		w.expr(x.X)
		w.exprs(x.List)
	case *Between:
		w.expr(x.X)
		w.expr(x.Lo)
		w.expr(x.Hi)
	case *IsNull:
		w.expr(x.X)
	case *IsBool:
		w.expr(x.X)
	case *AnyAll:
		w.expr(x.X)
		w.expr(x.Array)
	case *ArrayLit:
		w.exprs(x.Elems)
	case *Case:
		w.expr(x.Arg)
		for _, wh := range x.Whens {
			w.expr(wh.Cond)
			w.expr(wh.Result)
		}
		w.expr(x.Else)
	case *Coalesce:
		w.exprs(x.Args)
	case *NullIf:
		w.expr(x.A)
		w.expr(x.B)
	case *SubLink:
		w.expr(x.X)
		w.sel(x.Select)
	case *Subscript:
		w.expr(x.X)
		w.expr(x.Index)
	case *Collate:
		w.expr(x.X)
	}
}
