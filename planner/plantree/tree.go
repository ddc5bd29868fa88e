package plantree

import "slices"

// Tree building: a SelectPlan is the bound query block; Tree turns it into
// a tree of nodes (nodes.go) in two steps. logical lays the block out as
// PostgreSQL's executor would run it without shortcuts (source, filter,
// aggregate, windows, project, DISTINCT ON, sort, limit, subqueries first);
// then the rules (rules.go lists them in order, each in its own
// rule_*.go file) rewrite the block's chain. Every
// query block (a derived table, a join input, a subquery) has its own tree,
// built once when the statement is planned (Finish), so a prepared
// statement runs the same tree every time and EXPLAIN prints the tree that
// runs.

// Tree is p's plan tree: the one Finish built, else (a plan built outside
// Plan, as in some tests) a new one.
func Tree(p *SelectPlan) Node {
	if p.Tree != nil {
		return p.Tree
	}
	return buildTree(p)
}

// buildTree builds p's tree and those of the blocks it reads.
func buildTree(p *SelectPlan) Node {
	n := logical(p)
	for _, r := range rules {
		n = applyChain(n, r.apply)
	}
	for _, r := range blockRules {
		r.apply(p)
	}
	return n
}

// Finish builds the trees of every query block of a planned statement.
func Finish(p Plan) {
	switch x := p.(type) {
	case *SelectPlan:
		finishSelect(x)
	case *InsertPlan:
		if x.Select != nil {
			finishSelect(x.Select)
		}
	case *CopyOutPlan:
		finishSelect(x.Select)
	case *DeclareCursorPlan:
		finishSelect(x.Query)
	case *ExplainPlan:
		Finish(x.Inner)
	}
}

func finishSelect(p *SelectPlan) {
	if p == nil || p.Tree != nil {
		return
	}
	for _, c := range blockInputs(p) {
		finishSelect(c)
	}
	for _, sq := range allSubqueries(p) {
		finishSelect(sq.Plan)
	}
	p.Tree = buildTree(p)
}

// blockInputs are the query blocks p reads rows from.
func blockInputs(p *SelectPlan) []*SelectPlan {
	switch {
	case p.Sub != nil:
		return []*SelectPlan{p.Sub}
	case p.Join != nil:
		return []*SelectPlan{p.Join.Left, p.Join.Right}
	case p.SetOp != nil:
		return []*SelectPlan{p.SetOp.Left, p.SetOp.Right}
	case p.Recursive != nil:
		return []*SelectPlan{p.Recursive.NonRec, p.Recursive.Rec}
	}
	return nil
}

// blockExprs are the expressions of p itself (not of the blocks it reads).
func blockExprs(p *SelectPlan) []Expr {
	es := append([]Expr{p.Filter, p.Having, p.Limit, p.Offset}, p.Project...)
	if p.Agg != nil {
		es = append(es, p.Agg.GroupBy...)
		for _, a := range p.Agg.Aggs {
			es = append(es, a)
		}
	}
	if p.Join != nil {
		es = append(es, p.Join.Conds...)
	}
	for _, w := range p.Windows {
		es = append(es, w)
	}
	for _, r := range p.Values {
		es = append(es, r...)
	}
	if p.Func != nil {
		es = append(es, p.Func.Call)
	}
	return es
}

// allSubqueries are the subquery expressions of p's own expressions and
// its uncorrelated ones.
func allSubqueries(p *SelectPlan) []*SubqueryExpr {
	out := p.Subqueries[:len(p.Subqueries):len(p.Subqueries)]
	for _, e := range blockExprs(p) {
		Walk(e, func(x Expr) {
			if sq, ok := x.(*SubqueryExpr); ok && !slices.Contains(out, sq) {
				out = append(out, sq)
			}
		})
	}
	return out
}

// correlatedIn lists the correlated subqueries of es.
func correlatedIn(es ...Expr) []*SubqueryExpr {
	var out []*SubqueryExpr
	for _, e := range es {
		Walk(e, func(x Expr) {
			if sq, ok := x.(*SubqueryExpr); ok && sq.Correlated {
				for _, s := range out {
					if s == sq {
						return
					}
				}
				out = append(out, sq)
			}
		})
	}
	return out
}

// logical lays p out as a chain of nodes without any shortcut.
func logical(p *SelectPlan) Node {
	n := source(p)
	if p.Filter != nil {
		f := &FilterNode{Cond: p.Filter}
		f.Input, f.subs = n, correlatedIn(p.Filter)
		n = f
	}
	windows := func() {
		if p.Windows != nil {
			w := &WindowNode{Windows: p.Windows}
			w.Input = n
			n = w
		}
	}
	project := func() {
		if p.SRFs != nil {
			ps := &ProjectSetNode{SRFs: p.SRFs, Exprs: p.Project}
			ps.Input, ps.subs = n, correlatedIn(p.Project...)
			n = ps
			return
		}
		pr := &ProjectNode{Exprs: p.Project, Cols: p.Cols}
		pr.Input, pr.subs = n, correlatedIn(p.Project...)
		n = pr
	}
	if p.Agg != nil {
		a := &AggregateNode{Agg: p.Agg, Having: p.Having}
		a.Input, a.subs = n, correlatedIn(p.Having)
		n = a
	}
	windows()
	project()
	names := func(keys []SortKey) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = p.Project[k.Idx].String()
		}
		return out
	}
	if p.DistinctOn != nil {
		d := &DistinctOnNode{Cols: p.DistinctOn, Keys: p.Sort, KeyNames: names(p.Sort)}
		for _, c := range p.DistinctOn {
			d.ColNames = append(d.ColNames, p.Project[c].String())
		}
		d.Input = n
		n = d
	}
	if len(p.Sort) > 0 {
		s := &SortNode{Keys: p.Sort, Names: names(p.Sort)}
		s.Input = n
		n = s
	}
	if p.Limit != nil || p.Offset != nil {
		l := &LimitNode{Limit: p.Limit, Offset: p.Offset}
		l.Input = n
		n = l
	}
	return withInitPlan(p, n)
}

func withInitPlan(p *SelectPlan, n Node) Node {
	if len(p.Subqueries) == 0 {
		return n
	}
	ip := &InitPlanNode{Subs: p.Subqueries}
	ip.Input = n
	return ip
}

// source is the node producing p's input rows.
func source(p *SelectPlan) Node {
	switch {
	case p.Consumer != nil: // p.Scan is set too: the topic, whether data is read
		return &ConsumerReadNode{Read: p.Consumer, Project: rawConsumerRow(p.Scan.NeedData, p.Consumer.Shared)}
	case p.Scan != nil:
		return &ScanNode{Scan: *p.Scan, Project: rawProjection(p.Scan.NeedData)}
	case p.Sys != nil:
		return &SysScanNode{Sys: p.Sys}
	case p.Sub != nil:
		return &SubqueryScanNode{Input: Tree(p.Sub)}
	case p.Join != nil:
		j := joinBase{Join: p.Join, Left: Tree(p.Join.Left), Right: Tree(p.Join.Right)}
		j.subs = correlatedIn(p.Join.Conds...)
		if p.Join.Lateral {
			return &LateralJoinNode{joinBase: j, Residual: andExprs(p.Join.Conds)}
		}
		return &NestedLoopNode{joinBase: j, conds: p.Join.Conds}
	case p.SetOp != nil:
		return &SetOpNode{Op: p.SetOp, Left: Tree(p.SetOp.Left), Right: Tree(p.SetOp.Right)}
	case p.Values != nil:
		n := &ValuesNode{Rows: p.Values}
		for _, r := range p.Values {
			n.subs = append(n.subs, correlatedIn(r...)...)
		}
		return n
	case p.Recursive != nil:
		return &RecursiveUnionNode{Rec: p.Recursive, First: Tree(p.Recursive.NonRec), Next: Tree(p.Recursive.Rec)}
	case p.Work != nil:
		return &WorkTableScanNode{Work: p.Work}
	case p.Func != nil:
		n := &FunctionScanNode{Func: p.Func}
		n.subs = correlatedIn(p.Func.Call)
		return n
	}
	return &ResultNode{}
}

// rawProjection is a message row with every stateless column (data only
// when the query reads it). The two lists are shared: expressions are
// immutable.
func rawProjection(needData bool) []Expr {
	if needData {
		return rawWithData
	}
	return rawWithoutData
}

// rawConsumerRow is the raw row of a read as a consumer: a shared
// consumer's has its delivery_count and locked_until too.
func rawConsumerRow(needData, shared bool) []Expr {
	if !shared {
		return rawProjection(needData)
	}
	if needData {
		return rawSharedWithData
	}
	return rawSharedWithoutData
}

var (
	rawWithData, rawWithoutData             = newRawProjection(true, false), newRawProjection(false, false)
	rawSharedWithData, rawSharedWithoutData = newRawProjection(true, true), newRawProjection(false, true)
)

func newRawProjection(needData, shared bool) []Expr {
	n := NumTopicCols
	if shared {
		n = int(ColLockedUntil) + 1
	}
	out := make([]Expr, n)
	for i := 0; i < n; i++ {
		if i == int(ColData) && !needData {
			out[i] = &ConstExpr{}
			continue
		}
		out[i] = &ColExpr{Idx: i, T: MsgColumns[i].Type, Name: MsgColumns[i].Name}
	}
	return out
}

func andExprs(es []Expr) Expr {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return &LogicExpr{And: true, Args: es}
}
