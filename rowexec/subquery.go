package rowexec

import (
	"context"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// subResult is what a subquery expression evaluated to, once per
// execution of its statement.
type subResult struct {
	value   any             // scalar: the value (nil for no row); EXISTS: bool
	set     map[string]bool // IN: the non-NULL values, by values.KeyText
	list    []any           // IN: the values, when they are compared one by one
	hasNull bool            // IN: a NULL among them
}

// runSubqueries evaluates the plan's subquery expressions before the plan
// reads anything, so that no subquery runs inside another read.
func (ec *EvalCtx) runSubqueries(ctx context.Context, subs []*plantree.SubqueryExpr, mem *queryMem) error {
	for _, x := range subs {
		if _, done := ec.subs[x]; done {
			continue
		}
		// What the run held (a sort, a hash table) is given back when it
		// ends; its result stays charged. The run is over before the
		// statement reads on, so ec's budget is swapped for its time.
		run := mem.sub()
		saved := ec.mem
		ec.mem = run
		r, err := ec.runSubquery(ctx, x, run)
		ec.mem = saved
		run.end()
		if err != nil {
			return err
		}
		if err := mem.charge(r.bytes()); err != nil {
			return err
		}
		if ec.subs == nil {
			ec.subs = map[*plantree.SubqueryExpr]*subResult{}
		}
		ec.subs[x] = r
	}
	return nil
}

// bytes estimates the memory the result holds.
func (r *subResult) bytes() int64 {
	n := 64 + valueBytes(r.value)
	for k := range r.set {
		n += 32 + int64(len(k))
	}
	for _, v := range r.list {
		n += 32 + valueBytes(v)
	}
	return n
}

// runSubquery runs x's plan to the end (to its second row for a scalar
// subquery, its first for EXISTS) and returns what it evaluates to.
func (ec *EvalCtx) runSubquery(ctx context.Context, x *plantree.SubqueryExpr, mem *queryMem) (*subResult, error) {
	it, err := Run(ctx, ec, x.Plan, nil)
	if err != nil {
		return nil, err
	}
	r := &subResult{}
	switch x.Kind {
	case sql.SubExists:
		row, err := it.Next(ctx)
		if err != nil {
			return nil, err
		}
		r.value = row != nil
	case sql.SubScalar:
		row, err := it.Next(ctx)
		if err != nil {
			return nil, err
		}
		if row != nil {
			r.value = row[0]
			if more, err := it.Next(ctx); err != nil {
				return nil, err
			} else if more != nil {
				return nil, pgerror.New(pgerror.CodeCardinalityViolation, "more than one row returned by a subquery used as an expression")
			}
		}
	case sql.SubArray:
		vals := []any{}
		for {
			row, err := it.Next(ctx)
			if err != nil {
				return nil, err
			}
			if row == nil {
				break
			}
			vals = append(vals, row[0])
			if err := mem.charge(32 + valueBytes(row[0])); err != nil {
				return nil, err
			}
		}
		v, err := values.NormalizeParam(vals, x.T)
		if err != nil {
			return nil, err
		}
		r.value = v
	case sql.SubIn:
		// Values of one type are looked up by their key; a numeric
		// tested against integers (or the like) is compared one by one.
		byKey := x.X.Type() == x.Plan.Cols[0].T
		if byKey {
			r.set = map[string]bool{}
		}
		for {
			row, err := it.Next(ctx)
			if err != nil {
				return nil, err
			}
			if row == nil {
				break
			}
			v := row[0]
			switch {
			case v == nil:
				r.hasNull = true
			case byKey:
				r.set[values.KeyText(v)] = true
			default:
				r.list = append(r.list, v)
			}
			if err := mem.charge(32 + valueBytes(v)); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// maxMemo bounds how many results of one correlated subquery an execution
// keeps (beyond it, the subquery runs for every new outer value), and
// maxMemoValues bounds the IN list of a result kept: the memo's memory
// stays a few MB, outside --max-query-mib's accounting.
const (
	maxMemo       = 4096
	maxMemoValues = 64
)

// runCorrelated runs a correlated subquery for the outer row r: its
// OuterRefs read r. Each run is a whole execution of its plan; a reusable
// subquery's result is kept for the next row with the same outer values
// (the newest message of each partition runs once per partition, not once
// per message).
func (ec *EvalCtx) runCorrelated(x *plantree.SubqueryExpr, r row) (*subResult, error) {
	ctx := ec.ctx
	if ctx == nil {
		return nil, pgerror.AssertionFailed("correlated subquery %s evaluated outside a statement", x)
	}
	var key string
	if x.Reusable {
		var kb []byte
		for _, c := range x.OuterCols {
			v, err := r.Col(c)
			if err != nil {
				return nil, err
			}
			kb = appendKey(kb, v)
		}
		key = string(kb)
		if res, ok := ec.memo[x][key]; ok {
			return res, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
	}
	inner := *ec
	inner.outer = r
	// The run holds the statement's memory while it runs; its result is
	// all that is kept (and is small: see maxMemoValues).
	inner.mem = ec.mem.sub()
	res, err := inner.runSubquery(ctx, x, inner.mem)
	inner.mem.end()
	if err != nil || !x.Reusable {
		return res, err
	}
	if ec.memo == nil {
		ec.memo = map[*plantree.SubqueryExpr]map[string]*subResult{}
	}
	m := ec.memo[x]
	if m == nil {
		m = map[string]*subResult{}
		ec.memo[x] = m
	}
	if len(m) < maxMemo && len(res.set)+len(res.list) <= maxMemoValues {
		m[key] = res
	}
	return res, nil
}

// evalSubquery returns a subquery expression's value for the current row.
func (ec *EvalCtx) evalSubquery(x *plantree.SubqueryExpr, r row) (any, error) {
	res, ok := ec.subs[x]
	if x.Correlated {
		var err error
		if res, err = ec.runCorrelated(x, r); err != nil {
			return nil, err
		}
		ok = true
	}
	if !ok {
		return nil, pgerror.AssertionFailed("subquery %s evaluated before it ran", x)
	}
	if x.Kind != sql.SubIn {
		return res.value, nil
	}
	v, err := ec.Eval(x.X, r)
	if err != nil {
		return nil, err
	}
	empty := len(res.set) == 0 && len(res.list) == 0 && !res.hasNull
	switch {
	case empty:
		return false, nil // x IN (no rows) is false even for a NULL x
	case v == nil:
		return nil, nil
	case res.set != nil && res.set[values.KeyText(v)]:
		return true, nil
	}
	for _, w := range res.list {
		if c, err := values.Compare(v, w); err != nil {
			return nil, err
		} else if c == 0 {
			return true, nil
		}
	}
	if res.hasNull {
		return nil, nil // unknown: it may equal the NULL
	}
	return false, nil
}

// appendKey appends v to a grouping key: NULLs are one value, equal
// numerics of different scales are one value (values.KeyText).
func appendKey(kb []byte, v any) []byte {
	if v == nil {
		return append(kb, 0, 'N')
	}
	kb = append(kb, 0, 'V')
	return append(kb, values.KeyText(v)...)
}

// projectIter projects rows as they come, with OFFSET and LIMIT: a
// derived table, a VALUES list or a system view read without sorting or
// grouping is streamed, not held.
type projectIter struct {
	ec          *EvalCtx
	in          Iter
	project     []plantree.Expr
	skip, limit int64
}

func (it *projectIter) Next(ctx context.Context) ([]any, error) {
	for it.limit != 0 {
		r, err := it.in.Next(ctx)
		if r == nil || err != nil {
			return nil, err
		}
		if it.skip > 0 {
			it.skip--
			continue
		}
		out, err := it.ec.project(it.project, ValuesRow(r))
		if err != nil {
			return nil, err
		}
		if it.limit > 0 {
			it.limit--
		}
		return out, nil
	}
	return nil, nil
}

// valuesIter evaluates a VALUES list's rows one by one.
type valuesIter struct {
	ec   *EvalCtx
	rows [][]plantree.Expr
}

func (it *valuesIter) Next(context.Context) ([]any, error) {
	if len(it.rows) == 0 {
		return nil, nil
	}
	exprs := it.rows[0]
	it.rows = it.rows[1:]
	out := make([]any, len(exprs))
	for i, e := range exprs {
		v, err := it.ec.Eval(e, nil)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// setOpIter combines the rows of a set operation's sides: UNION ALL
// streams both; UNION streams the left then the right side without rows
// seen before; INTERSECT and EXCEPT hold the right side's rows (counted,
// for ALL) and stream the left side through them.
type setOpIter struct {
	op          *plantree.SetOpPlan
	left, right Iter
	width       int
	seen        map[string]int // UNION: rows out; INTERSECT/EXCEPT: right-side counts
	built       bool
	mem         *queryMem
	kb          []byte
}

func (it *setOpIter) key(r []any) string {
	it.kb = it.kb[:0]
	for _, v := range r[:it.width] {
		it.kb = appendKey(it.kb, v)
	}
	return string(it.kb)
}

func (it *setOpIter) Next(ctx context.Context) ([]any, error) {
	if it.seen == nil {
		it.seen = map[string]int{}
	}
	if it.op.Op == "UNION" {
		for _, side := range []*Iter{&it.left, &it.right} {
			for *side != nil {
				r, err := (*side).Next(ctx)
				if err != nil {
					return nil, err
				}
				if r == nil {
					*side = nil
					break
				}
				if it.op.All {
					return r, nil
				}
				k := it.key(r)
				if it.seen[k] > 0 {
					continue
				}
				it.seen[k] = 1
				if err := it.mem.charge(2*int64(len(k)) + 48); err != nil {
					return nil, err
				}
				return r, nil
			}
		}
		return nil, nil
	}
	if !it.built { // INTERSECT, EXCEPT: count the right side's rows
		it.built = true
		for {
			r, err := it.right.Next(ctx)
			if err != nil {
				return nil, err
			}
			if r == nil {
				break
			}
			k := it.key(r)
			if it.seen[k] == 0 {
				if err := it.mem.charge(2*int64(len(k)) + 48); err != nil {
					return nil, err
				}
			}
			it.seen[k]++
		}
	}
	for {
		r, err := it.left.Next(ctx)
		if r == nil || err != nil {
			return nil, err
		}
		k := it.key(r)
		n, in := it.seen[k]
		switch {
		case it.op.Op == "INTERSECT" && it.op.All:
			if in && n > 0 {
				it.seen[k] = n - 1
				return r, nil
			}
		case it.op.Op == "INTERSECT":
			if in && n > 0 {
				it.seen[k] = 0 // once
				return r, nil
			}
		case it.op.All: // EXCEPT ALL: left rows beyond the right side's count
			if in && n > 0 {
				it.seen[k] = n - 1
				continue
			}
			return r, nil
		default: // EXCEPT: distinct left rows not on the right
			if !in {
				it.seen[k] = 0 // emitted once; later copies are "in"
				return r, nil
			}
		}
	}
}
