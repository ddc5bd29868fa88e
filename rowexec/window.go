package rowexec

import (
	"context"
	"sort"
	"time"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// computeWindows reads every input row (charged to the statement's
// memory), computes each window function over its partitions, and returns
// the rows with the results appended at the windows' slots.
func computeWindows(ctx context.Context, ec *EvalCtx, windows []*plantree.WindowExpr, in Iter, mem *queryMem) (Iter, error) {
	width := windows[0].Slot
	var rows [][]any
	for {
		r, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		ext := make([]any, width+len(windows))
		copy(ext, r[:width])
		if err := mem.charge(rowBytes(ext)); err != nil {
			return nil, err
		}
		rows = append(rows, ext)
	}
	for _, w := range windows {
		if err := computeWindow(ctx, ec, w, rows); err != nil {
			return nil, err
		}
	}
	return &sliceIter{rows: rows}, nil
}

// winRow is one input row with its partition key and order values.
type winRow struct {
	row   []any
	order []any
}

func computeWindow(ctx context.Context, ec *EvalCtx, w *plantree.WindowExpr, rows [][]any) error {
	parts := map[string][]winRow{}
	var keys []string
	var kb []byte
	for _, r := range rows {
		kb = kb[:0]
		for _, e := range w.PartitionBy {
			v, err := ec.Eval(e, ValuesRow(r))
			if err != nil {
				return err
			}
			kb = appendKey(kb, v)
		}
		wr := winRow{row: r}
		for _, e := range w.Order {
			v, err := ec.Eval(e, ValuesRow(r))
			if err != nil {
				return err
			}
			wr.order = append(wr.order, v)
		}
		k := string(kb)
		if _, ok := parts[k]; !ok {
			keys = append(keys, k)
		}
		parts[k] = append(parts[k], wr)
	}
	for _, k := range keys {
		part := parts[k]
		sort.SliceStable(part, func(i, j int) bool { return lessRow(part[i].order, part[j].order, w.OrderBy) })
		if err := fillWindow(ctx, ec, w, part); err != nil {
			return err
		}
	}
	return nil
}

// peers reports whether two rows tie on the window's ORDER BY (every row
// is a peer of every other without one).
func peers(w *plantree.WindowExpr, a, b winRow) bool {
	return !lessRow(a.order, b.order, w.OrderBy) && !lessRow(b.order, a.order, w.OrderBy)
}

// fillWindow writes w's value for each row of one sorted partition.
func fillWindow(ctx context.Context, ec *EvalCtx, w *plantree.WindowExpr, part []winRow) error {
	set := func(i int, v any) { part[i].row[w.Slot] = v }
	switch w.Name {
	case "row_number":
		for i := range part {
			set(i, int64(i+1))
		}
		return nil
	case "rank", "dense_rank":
		rank, dense := int64(0), int64(0)
		for i := range part {
			if i == 0 || !peers(w, part[i-1], part[i]) {
				rank, dense = int64(i+1), dense+1
			}
			if w.Name == "rank" {
				set(i, rank)
			} else {
				set(i, dense)
			}
		}
		return nil
	case "lag", "lead":
		for i := range part {
			off := int64(1)
			if len(w.Args) > 1 {
				v, err := ec.Eval(w.Args[1], ValuesRow(part[i].row))
				if err != nil {
					return err
				}
				if v == nil {
					set(i, nil)
					continue
				}
				off = v.(int64)
			}
			j := int64(i) - off
			if w.Name == "lead" {
				j = int64(i) + off
			}
			var v any
			var err error
			if j >= 0 && j < int64(len(part)) {
				v, err = ec.Eval(w.Args[0], ValuesRow(part[j].row))
			} else if len(w.Args) > 2 {
				v, err = ec.Eval(w.Args[2], ValuesRow(part[i].row))
			}
			if err != nil {
				return err
			}
			set(i, v)
		}
		return nil
	}
	return fillFramed(ctx, ec, w, part)
}

// defaultFrame is PostgreSQL's frame without a frame clause: RANGE
// UNBOUNDED PRECEDING, that is from the partition's start to the current
// row's last peer (every row is a peer of every other without an ORDER BY).
var defaultFrame = &plantree.WindowFrame{Mode: sql.FrameRange,
	Start: plantree.FrameBound{Kind: sql.BoundUnboundedPreceding},
	End:   plantree.FrameBound{Kind: sql.BoundCurrentRow}}

// winFrame locates a frame's rows in one sorted partition.
type winFrame struct {
	w          *plantree.WindowExpr
	f          *plantree.WindowFrame
	part       []winRow
	n          int
	grp        []int // row -> its peer group
	gstart     []int // peer group -> its first row
	start, end int64 // ROWS and GROUPS: the bounds' offsets
	rstart     any   // RANGE: the bounds' offsets
	rend       any
	nnLo, nnHi int // RANGE with an offset: the rows whose ORDER BY value is not NULL
}

func newWinFrame(ec *EvalCtx, w *plantree.WindowExpr, part []winRow) (*winFrame, error) {
	f := w.Frame
	if f == nil {
		f = defaultFrame
	}
	wf := &winFrame{w: w, f: f, part: part, n: len(part), grp: make([]int, len(part))}
	for i := range part {
		if i == 0 || !peers(w, part[i-1], part[i]) {
			wf.gstart = append(wf.gstart, i)
		}
		wf.grp[i] = len(wf.gstart) - 1
	}
	var err error
	if wf.rstart, err = frameOffset(ec, f, f.Start, "starting"); err != nil {
		return nil, err
	}
	if wf.rend, err = frameOffset(ec, f, f.End, "ending"); err != nil {
		return nil, err
	}
	if f.Mode != sql.FrameRange {
		wf.start, _ = wf.rstart.(int64)
		wf.end, _ = wf.rend.(int64)
	} else if f.Start.Offset != nil || f.End.Offset != nil {
		wf.nnLo, wf.nnHi = 0, len(part)
		for wf.nnLo < wf.nnHi && part[wf.nnLo].order[0] == nil {
			wf.nnLo++
		}
		for wf.nnHi > wf.nnLo && part[wf.nnHi-1].order[0] == nil {
			wf.nnHi--
		}
	}
	return wf, nil
}

// frameOffset evaluates a bound's offset (nil without one), as PostgreSQL
// does: not NULL, not negative.
func frameOffset(ec *EvalCtx, f *plantree.WindowFrame, b plantree.FrameBound, which string) (any, error) {
	if b.Offset == nil {
		return nil, nil
	}
	v, err := ec.Eval(b.Offset, nil)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, pgerror.Newf(pgerror.CodeNullValueNotAllowed, "frame %s offset must not be null", which)
	}
	c, err := compareZero(v)
	switch {
	case err != nil:
		return nil, err
	case c >= 0:
		return v, nil
	case f.Mode == sql.FrameRange:
		return nil, pgerror.New(pgerror.CodeInvalidFrameOffset, "invalid preceding or following size in window function")
	}
	return nil, pgerror.Newf(pgerror.CodeInvalidFrameOffset, "frame %s offset must not be negative", which)
}

// compareZero orders a number or an interval against zero.
func compareZero(v any) (int, error) {
	switch x := v.(type) {
	case int64:
		return values.Compare(x, int64(0))
	case float64:
		return values.Compare(x, float64(0))
	case time.Duration:
		return values.Compare(x, time.Duration(0))
	}
	return values.Compare(v, int64(0))
}

// groupEnd is one past the last row of peer group g.
func (wf *winFrame) groupEnd(g int) int {
	if g+1 < len(wf.gstart) {
		return wf.gstart[g+1]
	}
	return wf.n
}

// bounds returns row i's frame as [lo, hi); hi <= lo is an empty frame.
func (wf *winFrame) bounds(i int) (lo, hi int) {
	return wf.bound(wf.f.Start, wf.start, i, false), wf.bound(wf.f.End, wf.end, i, true)
}

// bound places one frame bound for row i: the frame's first row for the
// start, one past its last row for the end.
func (wf *winFrame) bound(b plantree.FrameBound, off int64, i int, end bool) int {
	switch b.Kind {
	case sql.BoundUnboundedPreceding:
		return 0
	case sql.BoundUnboundedFollowing:
		return wf.n
	case sql.BoundCurrentRow:
		if wf.f.Mode == sql.FrameRows {
			if end {
				return i + 1
			}
			return i
		}
		if end {
			return wf.groupEnd(wf.grp[i])
		}
		return wf.gstart[wf.grp[i]]
	}
	if wf.f.Mode == sql.FrameRange {
		if end {
			return wf.rangeBound(b.Kind, wf.rend, i, true)
		}
		return wf.rangeBound(b.Kind, wf.rstart, i, false)
	}
	if off > int64(wf.n) {
		off = int64(wf.n) + 1 // beyond either end of the partition
	}
	d := int(off)
	if b.Kind == sql.BoundPreceding {
		d = -d
	}
	if wf.f.Mode == sql.FrameRows {
		j := i + d
		if end {
			j++
		}
		return min(max(j, 0), wf.n)
	}
	g := wf.grp[i] + d // GROUPS: count peer groups
	switch {
	case g < 0:
		return 0
	case g >= len(wf.gstart):
		return wf.n
	case end:
		return wf.groupEnd(g)
	}
	return wf.gstart[g]
}

// rangeBound places a RANGE bound "off PRECEDING" or "off FOLLOWING" for
// row i: the rows whose ORDER BY value lies within off of row i's (after
// it in the window's order for FOLLOWING, before it for PRECEDING). As in
// PostgreSQL, a row whose value is NULL has only its NULL peers in range,
// and a NULL is in range of no value.
func (wf *winFrame) rangeBound(kind sql.BoundKind, off any, i int, end bool) int {
	x := wf.part[i].order[0]
	if x == nil {
		g := wf.grp[i]
		if end {
			return wf.groupEnd(g)
		}
		return wf.gstart[g]
	}
	desc := wf.w.OrderBy[0].Desc
	// The bound's value: toward the partition's start for PRECEDING.
	op := "+"
	if (kind == sql.BoundPreceding) != desc {
		op = "-"
	}
	b, err := values.Arith(op, x, off, wf.w.Order[0].Type())
	if err != nil { // out of the type's range: past every value
		if kind == sql.BoundPreceding {
			return wf.nnLo
		}
		return wf.nnHi
	}
	// The first row past the bound in the window's order (for an end), or
	// at or past it (for a start).
	return wf.nnLo + sort.Search(wf.nnHi-wf.nnLo, func(k int) bool {
		c, err := values.Compare(wf.part[wf.nnLo+k].order[0], b)
		if err != nil {
			return true
		}
		if desc {
			c = -c
		}
		if end {
			return c > 0
		}
		return c >= 0
	})
}

// excluded reports whether the frame clause's EXCLUDE drops row j from
// row i's frame.
func (wf *winFrame) excluded(i, j int) bool {
	switch wf.f.Exclude {
	case sql.ExcludeCurrentRow:
		return j == i
	case sql.ExcludeGroup:
		return wf.grp[j] == wf.grp[i]
	case sql.ExcludeTies:
		return j != i && wf.grp[j] == wf.grp[i]
	}
	return false
}

// fillFramed computes a frame-dependent window function (an aggregate,
// first_value, last_value, nth_value) for each row of a sorted partition.
// A frame that starts at the partition's start and excludes nothing grows
// with the row (its end never moves back), so its aggregate is folded
// incrementally, and so is one that ends at the partition's end, from the
// last row back, when the aggregate is order-free; any other frame is
// folded afresh for each row, which for a sliding frame of W rows costs
// O(W) per row (PostgreSQL too restarts an aggregate such as max whenever
// the frame's start moves).
func fillFramed(ctx context.Context, ec *EvalCtx, w *plantree.WindowExpr, part []winRow) error {
	wf, err := newWinFrame(ec, w, part)
	if err != nil {
		return err
	}
	whole := wf.f.Exclude == sql.ExcludeNoOthers
	growing := whole && wf.f.Start.Kind == sql.BoundUnboundedPreceding
	// A frame that ends at the partition's end grows as the row moves
	// back, so rows are visited from the last when the aggregate does not
	// depend on the order it sees values in.
	backward := whole && !growing && wf.f.End.Kind == sql.BoundUnboundedFollowing && w.Agg != nil && orderFree(w.Agg)
	var st aggState
	folded := 0 // growing: rows [0, folded) are in st; backward: [folded, n)
	if backward {
		folded = len(part)
	}
	for k := range part {
		if err := ctx.Err(); err != nil { // a frame folded afresh per row can take long
			return pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		i := k
		if backward {
			i = len(part) - 1 - k
		}
		lo, hi := wf.bounds(i)
		var v any
		switch {
		case w.Agg == nil: // first_value, last_value, nth_value
			if v, err = frameValue(ec, w, wf, part, i, lo, hi); err != nil {
				return err
			}
		case backward:
			for ; folded > lo; folded-- {
				if err := accumulate(ec, &st, w.Agg, part[folded-1].row, &queryMem{}); err != nil {
					return err
				}
			}
			v = finish(&st, w.Agg)
		default:
			if !growing {
				st, folded = aggState{}, lo
			}
			for ; folded < hi; folded++ {
				if wf.excluded(i, folded) {
					continue
				}
				if err := accumulate(ec, &st, w.Agg, part[folded].row, &queryMem{}); err != nil {
					return err
				}
			}
			v = finish(&st, w.Agg)
		}
		part[i].row[w.Slot] = v
	}
	return nil
}

// orderFree reports whether an aggregate's result does not depend on the
// order of its input: not a float sum, whose rounding does.
func orderFree(a *plantree.AggExpr) bool {
	switch a.Name {
	case "count", "min", "max", "bool_and", "bool_or", "every":
		return true
	case "sum", "avg":
		return a.Arg != nil && a.Arg.Type() != values.TFloat8
	}
	return false
}

// frameValue computes first_value, last_value or nth_value for row i,
// whose frame is [lo, hi) less the excluded rows; NULL when the frame has
// no such row.
func frameValue(ec *EvalCtx, w *plantree.WindowExpr, wf *winFrame, part []winRow, i, lo, hi int) (any, error) {
	nth := int64(1)
	if w.Name == "nth_value" {
		v, err := ec.Eval(w.Args[1], ValuesRow(part[i].row))
		if err != nil || v == nil {
			return nil, err
		}
		if nth = v.(int64); nth <= 0 {
			return nil, pgerror.New(pgerror.CodeInvalidNthValueArgument, "argument of nth_value must be greater than zero")
		}
	}
	step, j := 1, lo
	if w.Name == "last_value" {
		step, j = -1, hi-1
	}
	for ; j >= lo && j < hi; j += step {
		if wf.excluded(i, j) {
			continue
		}
		if nth--; nth == 0 {
			return ec.Eval(w.Args[0], ValuesRow(part[j].row))
		}
	}
	return nil, nil
}
