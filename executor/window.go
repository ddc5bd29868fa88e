package executor

import (
	"context"
	"sort"

	"topicgate/planner"
)

// computeWindows reads every input row (charged to the statement's
// memory), computes each window function of the plan over its partitions,
// and returns the rows with the results appended at the windows' slots.
func computeWindows(ctx context.Context, ec *evalCtx, p *planner.SelectPlan, in rowIter, mem *queryMem) (rowIter, error) {
	width := p.Windows[0].Slot
	var rows [][]any
	for {
		r, err := in.next(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		ext := make([]any, width+len(p.Windows))
		copy(ext, r[:width])
		if err := mem.charge(rowBytes(ext)); err != nil {
			return nil, err
		}
		rows = append(rows, ext)
	}
	for _, w := range p.Windows {
		if err := computeWindow(ec, w, rows); err != nil {
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

func computeWindow(ec *evalCtx, w *planner.WindowExpr, rows [][]any) error {
	parts := map[string][]winRow{}
	var keys []string
	var kb []byte
	for _, r := range rows {
		kb = kb[:0]
		for _, e := range w.PartitionBy {
			v, err := ec.eval(e, valuesRow(r))
			if err != nil {
				return err
			}
			kb = appendKey(kb, v)
		}
		wr := winRow{row: r}
		for _, e := range w.Order {
			v, err := ec.eval(e, valuesRow(r))
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
		if err := fillWindow(ec, w, part); err != nil {
			return err
		}
	}
	return nil
}

// peers reports whether two rows tie on the window's ORDER BY (every row
// is a peer of every other without one).
func peers(w *planner.WindowExpr, a, b winRow) bool {
	return !lessRow(a.order, b.order, w.OrderBy) && !lessRow(b.order, a.order, w.OrderBy)
}

// fillWindow writes w's value for each row of one sorted partition.
func fillWindow(ec *evalCtx, w *planner.WindowExpr, part []winRow) error {
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
				v, err := ec.eval(w.Args[1], valuesRow(part[i].row))
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
				v, err = ec.eval(w.Args[0], valuesRow(part[j].row))
			} else if len(w.Args) > 2 {
				v, err = ec.eval(w.Args[2], valuesRow(part[i].row))
			}
			if err != nil {
				return err
			}
			set(i, v)
		}
		return nil
	}
	// first_value, last_value and aggregates: over the frame, which ends at
	// the current row's last peer (or at the partition's end).
	var st aggState
	for i := 0; i < len(part); {
		end := i + 1
		if len(w.Order) == 0 {
			end = len(part)
		}
		for end < len(part) && len(w.Order) > 0 && peers(w, part[i], part[end]) {
			end++
		}
		for j := i; j < end; j++ {
			if err := foldWindow(ec, w, &st, part[j].row); err != nil {
				return err
			}
		}
		var v any
		switch w.Name {
		case "first_value":
			v = st.best
		case "last_value":
			v = st.last
		default:
			v = finish(&st, w.Agg)
		}
		for j := i; j < end; j++ {
			set(j, v)
		}
		i = end
	}
	return nil
}

// foldWindow adds one row to a window's running state.
func foldWindow(ec *evalCtx, w *planner.WindowExpr, st *aggState, r []any) error {
	switch w.Name {
	case "first_value", "last_value":
		v, err := ec.eval(w.Args[0], valuesRow(r))
		if err != nil {
			return err
		}
		if st.count == 0 {
			st.best = v
		}
		st.count++
		st.last = v
		return nil
	}
	return accumulate(ec, st, w.Agg, r, &queryMem{})
}
