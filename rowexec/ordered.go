package rowexec

import (
	"container/heap"
	"context"
	"slices"
	"time"

	"topicgate/planner/plantree"
	"topicgate/topicstore"
	"topicgate/txn"
)

// orderedScanIter streams a topic scan in a plantree.ScanOrder other than
// the natural one (scanIter's): partitions in descending order, each
// partition newest first, or all partitions merged by offset. Skip and
// limit apply as rows come out, so ORDER BY offset DESC LIMIT 10 reads
// about ten messages per partition.
type orderedScanIter struct {
	ec      *EvalCtx
	plan    *plantree.ScanNode
	order   plantree.ScanOrder
	cursors []*partCursor // in partition order; merged when order.Merge
	heap    cursorHeap    // order.Merge: cursors with a row ready
	started bool
	skip    int64
	limit   int64 // -1 = none
}

func newOrderedScan(ec *EvalCtx, store topicstore.Store, p *plantree.ScanNode, ti topicstore.TopicInfo,
	ranges []partRange, minWrite time.Time, skip, limit int64) *orderedScanIter {
	o := p.Scan.Order
	if o.PartDesc {
		slices.Reverse(ranges)
	}
	it := &orderedScanIter{ec: ec, plan: p, order: o, skip: skip, limit: limit}
	// A cursor need not read more than skip+limit rows of its partition.
	want := int64(-1)
	if limit >= 0 {
		want = skip + limit
	}
	for _, r := range ranges {
		var start, end int64
		for _, pi := range ti.Partitions {
			if pi.ID == r.id {
				start, end = pi.StartOffset, pi.EndOffset
			}
		}
		c := &partCursor{ec: ec, store: store, plan: p, id: r.id, desc: o.OffsetDesc, want: want, minWrite: minWrite,
			lo: max(r.lo, start), hi: end}
		if r.hi >= 0 {
			c.hi = min(c.hi, r.hi)
		}
		it.cursors = append(it.cursors, c)
	}
	it.heap.desc = o.OffsetDesc
	return it
}

func (it *orderedScanIter) Next(ctx context.Context) ([]any, error) {
	for it.limit != 0 {
		r, err := it.nextRow(ctx)
		if r == nil || err != nil {
			return nil, err
		}
		if it.skip > 0 {
			it.skip--
			continue
		}
		if it.limit > 0 {
			it.limit--
		}
		return r, nil
	}
	return nil, nil
}

// nextRow returns the next row in order, before skip and limit.
func (it *orderedScanIter) nextRow(ctx context.Context) ([]any, error) {
	if !it.order.Merge {
		for len(it.cursors) > 0 {
			r, _, err := it.cursors[0].next(ctx)
			if r != nil || err != nil {
				return r, err
			}
			it.cursors = it.cursors[1:]
		}
		return nil, nil
	}
	if !it.started { // prime the heap with each partition's first row
		it.started = true
		for _, c := range it.cursors {
			if err := it.push(ctx, c); err != nil {
				return nil, err
			}
		}
	}
	if it.heap.Len() == 0 {
		return nil, nil
	}
	top := heap.Pop(&it.heap).(*headRow)
	if err := it.push(ctx, top.c); err != nil {
		return nil, err
	}
	return top.row, nil
}

// push reads c's next row into the heap (nothing when c is exhausted).
func (it *orderedScanIter) push(ctx context.Context, c *partCursor) error {
	r, off, err := c.next(ctx)
	if r != nil {
		heap.Push(&it.heap, &headRow{row: r, off: off, c: c})
	}
	return err
}

// partCursor yields one partition's filtered, projected rows in offset
// order, ascending or descending, reading chunks of the range [lo, hi).
// Descending, it reads windows just below hi forward and hands their rows
// out in reverse; the window grows from the rows wanted so that a LIMIT
// reads little and a long walk back takes few store scans.
type partCursor struct {
	ec       *EvalCtx
	store    topicstore.Store
	plan     *plantree.ScanNode
	id       int32
	desc     bool
	want     int64 // rows that can still matter (skip+limit), -1 = all
	minWrite time.Time
	lo, hi   int64 // offsets still to read: [lo, hi)
	window   int64
	rows     [][]any
	offs     []int64
	pos      int
	mr       MsgRow
}

const (
	minWindow = 16
	maxWindow = scanChunk * 8
)

func (c *partCursor) next(ctx context.Context) ([]any, int64, error) {
	for c.pos >= len(c.rows) {
		if c.lo >= c.hi || c.want == 0 {
			return nil, 0, nil
		}
		if err := c.fill(ctx); err != nil {
			return nil, 0, err
		}
	}
	i := c.pos
	if c.desc {
		i = len(c.rows) - 1 - c.pos
	}
	c.pos++
	if c.want > 0 {
		c.want--
	}
	return c.rows[i], c.offs[i], nil
}

// fill reads the next chunk (ascending) or window (descending).
func (c *partCursor) fill(ctx context.Context) error {
	c.rows, c.offs, c.pos = c.rows[:0], c.offs[:0], 0
	from, to := c.lo, c.hi
	if c.desc {
		switch {
		case c.window == 0 && c.want > 0:
			c.window = max(c.want, minWindow)
		case c.window == 0:
			c.window = scanChunk
		default:
			c.window = min(c.window*2, maxWindow)
		}
		from = max(c.lo, c.hi-c.window)
	}
	var cbErr error
	var n, nb int64
	defer func() { c.ec.host.NoteRead(c.plan.Scan.Topic, n, nb) }()
	sr := topicstore.ScanRange{Partition: c.id, Start: from, End: to, MinWrittenAt: c.minWrite}
	err := c.store.Scan(ctx, c.plan.Scan.Topic, sr, func(m *topicstore.Message) bool {
		n, nb = n+1, nb+int64(len(m.Body))
		if !c.desc {
			c.lo = m.Offset + 1
		}
		c.mr.Reset(m)
		if keep, err := c.ec.filter(c.plan.Filter, &c.mr); err != nil || !keep {
			cbErr = err
			return err == nil
		}
		out, err := c.ec.project(c.plan.Project, &c.mr)
		if err != nil {
			cbErr = err
			return false
		}
		c.rows = append(c.rows, out)
		c.offs = append(c.offs, m.Offset)
		return c.desc || len(c.rows) < scanChunk
	})
	if cbErr != nil {
		return cbErr
	}
	if err != nil {
		return txn.StoreError(err, c.plan.Scan.Topic)
	}
	if c.desc {
		c.hi = from // the whole window was read
	} else if len(c.rows) < scanChunk {
		c.lo = c.hi // the range is exhausted
	}
	return nil
}

// headRow is a partition's next row in a merge.
type headRow struct {
	row []any
	off int64
	c   *partCursor
}

// cursorHeap orders head rows by offset: smallest first, or largest first
// when desc.
type cursorHeap struct {
	rows []*headRow
	desc bool
}

func (h *cursorHeap) Len() int { return len(h.rows) }
func (h *cursorHeap) Less(i, j int) bool {
	if h.desc {
		return h.rows[i].off > h.rows[j].off
	}
	return h.rows[i].off < h.rows[j].off
}
func (h *cursorHeap) Swap(i, j int) { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *cursorHeap) Push(x any)    { h.rows = append(h.rows, x.(*headRow)) }
func (h *cursorHeap) Pop() any {
	r := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return r
}
