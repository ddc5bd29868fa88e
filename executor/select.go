package executor

import (
	"context"
	"math"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/planner"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
	"topicgate/wire"
)

// rowIter yields result rows. next returns nil at the end.
type rowIter interface {
	next(ctx context.Context) ([]any, error)
}

// sliceIter yields materialized rows.
type sliceIter struct {
	rows [][]any
	pos  int
}

func (it *sliceIter) next(context.Context) ([]any, error) {
	if it.pos >= len(it.rows) {
		return nil, nil
	}
	r := it.rows[it.pos]
	it.rows[it.pos] = nil
	it.pos++
	return r, nil
}

// scanChunk is how many output rows one store Scan call produces before the
// streaming iterator yields them; the next chunk re-seeks after the last
// offset seen.
const scanChunk = 512

// partRange is one partition's offset range to read.
type partRange struct {
	id     int32
	lo, hi int64 // hi exclusive; -1 = visible end
}

// scanIter streams a topic's messages through filter and projection,
// partition by partition, with limit and offset applied as it goes so a
// small LIMIT touches few messages.
type scanIter struct {
	ec       *evalCtx
	store    topicstore.Store
	plan     *planner.SelectPlan
	ranges   []partRange
	minWrite time.Time
	skip     int64
	limit    int64 // -1 = none
	buf      [][]any
	pos      int
	mr       msgRow
	err      error
}

func (it *scanIter) next(ctx context.Context) ([]any, error) {
	for it.pos >= len(it.buf) {
		if it.limit == 0 || len(it.ranges) == 0 {
			return nil, nil
		}
		it.buf = it.buf[:0]
		it.pos = 0
		if err := it.fill(ctx); err != nil {
			return nil, err
		}
	}
	r := it.buf[it.pos]
	it.pos++
	return r, nil
}

// fill reads the next chunk from the current partition range.
func (it *scanIter) fill(ctx context.Context) error {
	pr := &it.ranges[0]
	exhausted := true
	var cbErr error
	var n, nb int64
	sr := topicstore.ScanRange{Partition: pr.id, Start: pr.lo, End: pr.hi, MinWrittenAt: it.minWrite}
	err := it.store.Scan(ctx, it.plan.Scan.Topic, sr, func(m *topicstore.Message) bool {
		n, nb = n+1, nb+int64(len(m.Body))
		pr.lo = m.Offset + 1
		it.mr.reset(m)
		if keep, err := it.ec.filter(it.plan.Filter, &it.mr); err != nil || !keep {
			cbErr = err
			return err == nil
		}
		if it.skip > 0 {
			it.skip--
			return true
		}
		out, err := it.ec.project(it.plan.Project, &it.mr)
		if err != nil {
			cbErr = err
			return false
		}
		it.buf = append(it.buf, out)
		if it.limit > 0 {
			it.limit--
		}
		if it.limit == 0 || len(it.buf) >= scanChunk {
			exhausted = false
			return false
		}
		return true
	})
	it.ec.sess.eng.metrics.noteRead(it.plan.Scan.Topic, n, nb)
	if cbErr != nil {
		return cbErr
	}
	if err != nil {
		return txn.StoreError(err, it.plan.Scan.Topic)
	}
	if exhausted {
		it.ranges = it.ranges[1:]
	}
	return nil
}

// runBoth starts the two inputs of a join or set operation.
func (s *Session) runBoth(ctx context.Context, ec *evalCtx, l, r *planner.SelectPlan) (rowIter, rowIter, error) {
	li, err := s.runSelect(ctx, ec, l, nil)
	if err != nil {
		return nil, nil, err
	}
	ri, err := s.runSelect(ctx, ec, r, nil)
	return li, ri, err
}

// filter reports whether the row passes f (nil passes everything).
func (ec *evalCtx) filter(f planner.Expr, r row) (bool, error) {
	if f == nil {
		return true, nil
	}
	ok, err := ec.eval(f, r)
	return ok == true, err
}

// project evaluates the projection of a row.
func (ec *evalCtx) project(exprs []planner.Expr, r row) ([]any, error) {
	out := make([]any, len(exprs))
	for i, e := range exprs {
		v, err := ec.eval(e, r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// scanRanges evaluates the pushed-down bounds against the topic's
// partitions.
func scanRanges(ec *evalCtx, s *planner.MsgScan, ti topicstore.TopicInfo) ([]partRange, time.Time, error) {
	var want map[int64]bool
	if s.Partitions != nil || s.PartArray != nil {
		want = map[int64]bool{}
		for _, e := range s.Partitions {
			v, err := ec.eval(e, nil)
			if err != nil {
				return nil, time.Time{}, err
			}
			if n, ok := toInt(v); ok {
				want[n] = true
			}
		}
		if s.PartArray != nil {
			v, err := ec.eval(s.PartArray, nil)
			if err != nil {
				return nil, time.Time{}, err
			}
			if arr, ok := v.([]int64); ok {
				for _, n := range arr {
					want[n] = true
				}
			}
		}
	}
	lo, hi := int64(0), int64(math.MaxInt64)
	for _, b := range s.Lo {
		n, null, err := boundOffset(ec, b, true)
		if err != nil || null {
			return nil, time.Time{}, err
		}
		lo = max(lo, n)
	}
	for _, b := range s.Hi {
		n, null, err := boundOffset(ec, b, false)
		if err != nil || null {
			return nil, time.Time{}, err
		}
		hi = min(hi, n)
	}
	var minWrite time.Time
	for _, b := range s.MinWrittenAt {
		v, err := ec.eval(b.X, nil)
		if err != nil {
			return nil, time.Time{}, err
		}
		if t, ok := v.(time.Time); ok && t.After(minWrite) {
			minWrite = t
		}
	}
	if hi <= lo {
		return nil, minWrite, nil
	}
	var out []partRange
	for _, p := range ti.Partitions {
		if want != nil && !want[int64(p.ID)] {
			continue
		}
		end := hi
		if end == math.MaxInt64 {
			end = -1
		}
		out = append(out, partRange{id: p.ID, lo: max(lo, 0), hi: end})
	}
	return out, minWrite, nil
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(math.Ceil(x)), true
	case *apd.Decimal:
		return int64(math.Ceil(planner.NumericToFloat(x))), true
	}
	return 0, false
}

// evalCount evaluates a LIMIT/OFFSET expression; -1 when absent.
func evalCount(ec *evalCtx, e planner.Expr, what string) (int64, error) {
	if e == nil {
		return -1, nil
	}
	v, err := ec.eval(e, nil)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return -1, nil
	}
	n, _ := toInt(v)
	if n < 0 {
		code := pgerror.CodeInvalidRowCountInLimit
		if what == "OFFSET" {
			code = pgerror.CodeInvalidRowCountInOffset
		}
		return 0, pgerror.Newf(code, "%s must not be negative", what)
	}
	return n, nil
}

// runSelect builds the iterator for a query.
//
// direct, when not nil, offers an encoder for rows built ahead of sending
// (see directrows.go); only a caller that sends the whole result at once
// may pass it.
func (s *Session) runSelect(ctx context.Context, ec *evalCtx, p *planner.SelectPlan, direct func() *wire.RowEncoder) (rowIter, error) {
	limit, err := evalCount(ec, p.Limit, "LIMIT")
	if err != nil {
		return nil, err
	}
	skip, err := evalCount(ec, p.Offset, "OFFSET")
	if err != nil {
		return nil, err
	}
	skip = max(skip, 0)
	ec.ctx = ctx
	mem := &queryMem{limit: s.eng.opts.MaxQueryBytes}
	if err := ec.runSubqueries(ctx, p.Subqueries, mem); err != nil {
		return nil, err
	}
	if p.Consumer != nil {
		return s.runConsumerRead(ctx, ec, p, direct)
	}
	streaming := p.Scan != nil && p.Agg == nil && len(p.Sort) == 0 && p.DistinctOn == nil && p.Windows == nil && p.SRFs == nil
	if streaming {
		ti, err := s.eng.store.Topic(p.Scan.Topic)
		if err != nil {
			return nil, txn.StoreError(err, p.Scan.Topic)
		}
		ranges, minWrite, err := scanRanges(ec, p.Scan, ti)
		if err != nil {
			return nil, err
		}
		if p.Scan.Order != (planner.ScanOrder{}) {
			return newOrderedScan(ec, s.eng.store, p, ti, ranges, minWrite, skip, limit), nil
		}
		return &scanIter{ec: ec, store: s.eng.store, plan: p, ranges: ranges, minWrite: minWrite, skip: skip, limit: limit}, nil
	}
	// Materializing path: collect input rows, aggregate, sort, cut.
	var input rowIter
	switch {
	case p.Scan != nil:
		inner := *p
		inner.Project = nil
		inner.Limit, inner.Offset = nil, nil
		ti, err := s.eng.store.Topic(p.Scan.Topic)
		if err != nil {
			return nil, txn.StoreError(err, p.Scan.Topic)
		}
		ranges, minWrite, err := scanRanges(ec, p.Scan, ti)
		if err != nil {
			return nil, err
		}
		input = &rawScanIter{scanIter{ec: ec, store: s.eng.store, plan: &inner, ranges: ranges, minWrite: minWrite, limit: -1}, p}
	case p.Sys != nil:
		rows, err := s.sysRows(p.Sys.View)
		if err != nil {
			return nil, err
		}
		input = &filterIter{ec: ec, in: &sliceIter{rows: rows}, filter: p.Filter}
	case p.Sub != nil:
		in, err := s.runSelect(ctx, ec, p.Sub, nil)
		if err != nil {
			return nil, err
		}
		input = &filterIter{ec: ec, in: in, filter: p.Filter}
	case p.Join != nil && p.Join.Lateral:
		l, err := s.runSelect(ctx, ec, p.Join.Left, nil)
		if err != nil {
			return nil, err
		}
		input = &filterIter{ec: ec, in: &lateralJoinIter{s: s, ec: ec, jp: p.Join, left: l}, filter: p.Filter}
	case p.Join != nil:
		l, r, err := s.runBoth(ctx, ec, p.Join.Left, p.Join.Right)
		if err != nil {
			return nil, err
		}
		input = &filterIter{ec: ec, in: &joinIter{ec: ec, jp: p.Join, left: l, right: r, mem: mem}, filter: p.Filter}
	case p.SetOp != nil:
		l, r, err := s.runBoth(ctx, ec, p.SetOp.Left, p.SetOp.Right)
		if err != nil {
			return nil, err
		}
		input = &filterIter{ec: ec, in: &setOpIter{op: p.SetOp, left: l, right: r, width: len(p.SetOp.Left.Cols), mem: mem}, filter: p.Filter}
	case p.Values != nil:
		input = &filterIter{ec: ec, in: &valuesIter{ec: ec, rows: p.Values}, filter: p.Filter}
	case p.Recursive != nil:
		input = &filterIter{ec: ec, in: &recursiveIter{s: s, ec: ec, rp: p.Recursive, mem: mem}, filter: p.Filter}
	case p.Work != nil:
		input = &filterIter{ec: ec, in: &sliceIter{rows: ec.work[p.Work]}, filter: p.Filter}
	case p.Func != nil:
		input = &filterIter{ec: ec, in: &funcScanIter{ec: ec, fs: p.Func}, filter: p.Filter}
	default:
		input = &sliceIter{rows: [][]any{{}}}
		if p.Filter != nil {
			input = &filterIter{ec: ec, in: input, filter: p.Filter}
		}
	}
	if p.Windows != nil && p.Agg == nil {
		if input, err = computeWindows(ctx, ec, p, input, mem); err != nil {
			return nil, err
		}
	}
	project := p.Project
	if p.SRFs != nil && p.Agg == nil {
		input, project = &srfIter{ec: ec, in: input, plan: p}, srfProjection(p)
	}
	if p.Agg == nil && len(p.Sort) == 0 && p.DistinctOn == nil {
		return &projectIter{ec: ec, in: input, project: project, skip: skip, limit: limit}, nil
	}
	if p.Agg != nil {
		if input, err = aggregate(ctx, ec, p, input, mem); err != nil {
			return nil, err
		}
		if p.Windows != nil { // over the groups
			if input, err = computeWindows(ctx, ec, p, input, mem); err != nil {
				return nil, err
			}
		}
		if p.SRFs != nil {
			input, project = &srfIter{ec: ec, in: input, plan: p}, srfProjection(p)
		}
	}
	var rows [][]any
	var top *topN // ORDER BY with LIMIT keeps only what the limit can return
	if len(p.Sort) > 0 && limit >= 0 && limit <= math.MaxInt32-skip && p.DistinctOn == nil {
		top = newTopN(p.Sort, skip+limit)
	}
	var firsts *distinctOn
	if p.DistinctOn != nil {
		firsts = &distinctOn{cols: p.DistinctOn, keys: p.Sort, at: map[string]int{}}
	}
	for {
		r, err := input.next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		out, err := ec.project(project, valuesRow(r))
		if err != nil {
			return nil, err
		}
		if top != nil {
			top.add(out)
			continue
		}
		if firsts != nil {
			if err := firsts.add(out, &rows, mem); err != nil {
				return nil, err
			}
			continue
		}
		if len(p.Sort) > 0 || p.Agg != nil {
			if err := mem.charge(rowBytes(out)); err != nil {
				return nil, err
			}
		}
		rows = append(rows, out)
	}
	switch {
	case top != nil:
		rows = top.sorted()
	case len(p.Sort) > 0:
		sortRows(rows, p.Sort)
	}
	if skip > 0 {
		rows = rows[min(int64(len(rows)), skip):]
	}
	if limit >= 0 && int64(len(rows)) > limit {
		rows = rows[:limit]
	}
	return &sliceIter{rows: rows}, nil
}

// rawScanIter yields message rows with every stateless column (for the
// materializing path): the projection happens above aggregation/sort.
type rawScanIter struct {
	scanIter
	outer *planner.SelectPlan
}

func (it *rawScanIter) next(ctx context.Context) ([]any, error) {
	if it.plan.Project == nil {
		n := int(planner.ColDelay) + 1
		it.plan.Project = make([]planner.Expr, n)
		for i := 0; i < n; i++ {
			if i == int(planner.ColData) && !it.outer.Scan.NeedData {
				it.plan.Project[i] = &planner.ConstExpr{}
				continue
			}
			it.plan.Project[i] = &planner.ColExpr{Idx: i, T: planner.MsgColumns[i].Type}
		}
	}
	return it.scanIter.next(ctx)
}

// filterIter applies a filter to materialized rows.
type filterIter struct {
	ec     *evalCtx
	in     rowIter
	filter planner.Expr
}

func (it *filterIter) next(ctx context.Context) ([]any, error) {
	for {
		r, err := it.in.next(ctx)
		if err != nil || r == nil {
			return r, err
		}
		keep, err := it.ec.filter(it.filter, valuesRow(r))
		if err != nil {
			return nil, err
		}
		if keep {
			return r, nil
		}
	}
}

// boundOffset evaluates a pushed-down offset bound as a half-open range
// edge: the first offset to read (lower) or the first not to read (upper).
// null reports a NULL bound (the predicate matches nothing); a value of
// another type leaves the range open (the filter still decides).
func boundOffset(ec *evalCtx, b planner.Bound, lower bool) (n int64, null bool, err error) {
	v, err := ec.eval(b.X, nil)
	if err != nil || v == nil {
		return 0, v == nil && err == nil, err
	}
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
		if lower && !b.Inclusive || !lower && b.Inclusive {
			if x == math.MaxInt64 {
				return x, false, nil
			}
			return x + 1, false, nil
		}
		return x, false, nil
	case float64:
		f = x
	case *apd.Decimal:
		f = planner.NumericToFloat(x)
	default:
		if lower {
			return 0, false, nil
		}
		return math.MaxInt64, false, nil
	}
	// offset > 2.5 and offset >= 2.5 both start at 3; offset < 2.5 and
	// offset <= 2.5 both end before 3.
	switch {
	case math.IsNaN(f):
		return 0, true, nil
	case f >= math.MaxInt64:
		return math.MaxInt64, false, nil
	case f <= math.MinInt64:
		return math.MinInt64, false, nil
	case f != math.Trunc(f):
		return int64(math.Ceil(f)), false, nil
	case lower && !b.Inclusive || !lower && b.Inclusive:
		return int64(f) + 1, false, nil
	}
	return int64(f), false, nil
}
