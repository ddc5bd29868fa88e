package rowexec

import (
	"container/heap"
	"sort"

	"topicgate/planner/plantree"
	"topicgate/sql/values"
)

// lessRow orders two rows by the sort keys (NULLs as the keys say); it
// reports false for rows with equal keys.
func lessRow(a, b []any, keys []plantree.SortKey) bool {
	for _, k := range keys {
		x, y := a[k.Idx], b[k.Idx]
		if x == nil || y == nil {
			if x == nil && y == nil {
				continue
			}
			return (x == nil) == k.NullsFirst
		}
		c, err := values.Compare(x, y)
		if err != nil || c == 0 {
			continue
		}
		if k.Desc {
			return c > 0
		}
		return c < 0
	}
	return false
}

// sortRows sorts rows by the keys, keeping the input order of equal rows.
func sortRows(rows [][]any, keys []plantree.SortKey) {
	sort.SliceStable(rows, func(i, j int) bool { return lessRow(rows[i], rows[j], keys) })
}

// topN keeps the first n rows of a stable sort of the rows added, in O(n)
// memory: ORDER BY ... LIMIT n over a large topic holds n rows, not all of
// them. The heap's top is the worst row kept (among equal keys, the one
// added last, so that ties keep their input order as sortRows does).
type topN struct {
	keys []plantree.SortKey
	n    int
	rows [][]any
	seq  []int64
	next int64
}

func newTopN(keys []plantree.SortKey, n int64) *topN { return &topN{keys: keys, n: int(n)} }

// worse reports whether row i sorts after row j.
func (t *topN) worse(i, j int) bool {
	if lessRow(t.rows[j], t.rows[i], t.keys) {
		return true
	}
	if lessRow(t.rows[i], t.rows[j], t.keys) {
		return false
	}
	return t.seq[i] > t.seq[j]
}

func (t *topN) Len() int           { return len(t.rows) }
func (t *topN) Less(i, j int) bool { return t.worse(i, j) }
func (t *topN) Swap(i, j int) {
	t.rows[i], t.rows[j] = t.rows[j], t.rows[i]
	t.seq[i], t.seq[j] = t.seq[j], t.seq[i]
}
func (t *topN) Push(x any) { panic("topN: use add") }
func (t *topN) Pop() any   { panic("topN: use add") }

// add offers a row.
func (t *topN) add(r []any) {
	seq := t.next
	t.next++
	if len(t.rows) < t.n {
		t.rows = append(t.rows, r)
		t.seq = append(t.seq, seq)
		heap.Fix(t, len(t.rows)-1) // sift up the new leaf
		return
	}
	if t.n == 0 || !lessRow(r, t.rows[0], t.keys) {
		return // not better than the worst kept (a tie loses: it came later)
	}
	t.rows[0], t.seq[0] = r, seq
	heap.Fix(t, 0)
}

// sorted returns the kept rows in order.
func (t *topN) sorted() [][]any {
	sort.Sort(byOrder{t})
	return t.rows
}

type byOrder struct{ t *topN }

func (b byOrder) Len() int           { return len(b.t.rows) }
func (b byOrder) Less(i, j int) bool { return b.t.worse(j, i) }
func (b byOrder) Swap(i, j int)      { b.t.Swap(i, j) }

// distinctOn keeps, for each distinct value of the DISTINCT ON columns,
// the row that sorts first (the first one seen among equals, as a stable
// sort would put it first).
type distinctOn struct {
	cols []int
	keys []plantree.SortKey
	at   map[string]int // key -> index in rows
	kb   []byte
}

func (d *distinctOn) add(r []any, rows *[][]any, mem *queryMem) error {
	d.kb = d.kb[:0]
	for _, c := range d.cols {
		d.kb = appendKey(d.kb, r[c])
	}
	if i, ok := d.at[string(d.kb)]; ok {
		if lessRow(r, (*rows)[i], d.keys) {
			(*rows)[i] = r
		}
		return nil
	}
	d.at[string(d.kb)] = len(*rows)
	*rows = append(*rows, r)
	return mem.charge(rowBytes(r) + 2*int64(len(d.kb)) + 48)
}
