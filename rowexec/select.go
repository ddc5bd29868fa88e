package rowexec

import (
	"context"
	"math"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/topicstore"
	"topicgate/txn"
)

// Iter yields result rows. Next returns nil at the end.
type Iter interface {
	Next(ctx context.Context) ([]any, error)
}

// Rows is an Iter over rows already materialized; it lets go of each row
// as it yields it. Rows(nil) is Empty.
func Rows(rows [][]any) Iter {
	if len(rows) == 0 {
		return Empty
	}
	return &sliceIter{rows: rows}
}

// Empty is an Iter that yields no row; it holds no state, so every
// statement with nothing to return shares it.
var Empty Iter = emptyIter{}

type emptyIter struct{}

func (emptyIter) Next(context.Context) ([]any, error) { return nil, nil }

// sliceIter yields materialized rows.
type sliceIter struct {
	rows [][]any
	pos  int
}

func (it *sliceIter) Next(context.Context) ([]any, error) {
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
	ec       *EvalCtx
	store    topicstore.Store
	plan     *plantree.ScanNode
	ranges   []partRange
	minWrite time.Time
	skip     int64
	limit    int64 // -1 = none
	buf      [][]any
	pos      int
	mr       MsgRow
}

func (it *scanIter) Next(ctx context.Context) ([]any, error) {
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
		it.mr.Reset(m)
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
	it.ec.host.NoteRead(it.plan.Scan.Topic, n, nb)
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

// filter reports whether the row passes f (nil passes everything).
func (ec *EvalCtx) filter(f plantree.Expr, r row) (bool, error) {
	if f == nil {
		return true, nil
	}
	ok, err := ec.Eval(f, r)
	return ok == true, err
}

// project evaluates the projection of a row.
func (ec *EvalCtx) project(exprs []plantree.Expr, r row) ([]any, error) {
	out := make([]any, len(exprs))
	for i, e := range exprs {
		v, err := ec.Eval(e, r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// scanRanges evaluates the pushed-down bounds against the topic's
// partitions.
func scanRanges(ec *EvalCtx, s *plantree.MsgScan, ti topicstore.TopicInfo) ([]partRange, time.Time, error) {
	var want map[int64]bool
	if s.Partitions != nil || s.PartArray != nil {
		want = map[int64]bool{}
		for _, e := range s.Partitions {
			v, err := ec.Eval(e, nil)
			if err != nil {
				return nil, time.Time{}, err
			}
			if n, ok := toInt(v); ok {
				want[n] = true
			}
		}
		if s.PartArray != nil {
			v, err := ec.Eval(s.PartArray, nil)
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
		v, err := ec.Eval(b.X, nil)
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
		return int64(math.Ceil(values.NumericToFloat(x))), true
	}
	return 0, false
}

// EvalCount evaluates a LIMIT/OFFSET expression; -1 when absent.
func EvalCount(ec *EvalCtx, e plantree.Expr, what string) (int64, error) {
	if e == nil {
		return -1, nil
	}
	v, err := ec.Eval(e, nil)
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

// filterIter applies a filter to materialized rows.
type filterIter struct {
	ec     *EvalCtx
	in     Iter
	filter plantree.Expr
}

func (it *filterIter) Next(ctx context.Context) ([]any, error) {
	for {
		r, err := it.in.Next(ctx)
		if err != nil || r == nil {
			return r, err
		}
		keep, err := it.ec.filter(it.filter, ValuesRow(r))
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
func boundOffset(ec *EvalCtx, b plantree.Bound, lower bool) (n int64, null bool, err error) {
	v, err := ec.Eval(b.X, nil)
	if err != nil || v == nil {
		return 0, v == nil && err == nil, err
	}
	var f float64
	switch x := v.(type) {
	case int64:
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
		f = values.NumericToFloat(x)
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
