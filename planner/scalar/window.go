package scalar

import (
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

var windowOnly = map[string]bool{"row_number": true, "rank": true, "dense_rank": true, "lag": true, "lead": true,
	"first_value": true, "last_value": true, "nth_value": true}

// bindWindow binds a window function call; allowed in the select list and
// ORDER BY only (b.AllowWindow); over the groups when there is a grouping.
func (b *Binder) bindWindow(x *sql.FuncCall) (plantree.Expr, error) {
	if !b.AllowWindow {
		return nil, pgerror.Newf(pgerror.CodeWindowingError, "window functions are not allowed here")
	}
	w := &plantree.WindowExpr{Name: x.Name}
	// Its arguments, PARTITION BY and ORDER BY may use aggregates (of the
	// grouping the window runs over), but not window functions.
	saveAgg, saveWin := b.AllowAgg, b.AllowWindow
	b.AllowWindow = false
	defer func() { b.AllowAgg, b.AllowWindow = saveAgg, saveWin }()
	for _, p := range x.Over.PartitionBy {
		e, err := b.Bind(p, values.TUnknown)
		if err != nil {
			return nil, err
		}
		w.PartitionBy = append(w.PartitionBy, e)
	}
	for i, o := range x.Over.OrderBy {
		e, err := b.Bind(o.Expr, values.TUnknown)
		if err != nil {
			return nil, err
		}
		nf := o.Desc
		if o.NullsFirst != nil {
			nf = *o.NullsFirst
		}
		w.Order = append(w.Order, e)
		w.OrderBy = append(w.OrderBy, plantree.SortKey{Idx: i, Desc: o.Desc, NullsFirst: nf})
	}
	if f := x.Over.Frame; f != nil {
		var err error
		if w.Frame, err = b.bindFrame(f, w.Order); err != nil {
			return nil, err
		}
	}
	switch {
	case aggregates[x.Name]:
		if x.Distinct || len(x.Order) > 0 {
			return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "DISTINCT or ORDER BY in a window aggregate is not supported")
		}
		inner := *x
		inner.Over = nil
		b.AllowAgg, b.argAggs = true, saveAgg
		e, err := b.bindAgg(&inner)
		b.AllowAgg, b.argAggs = saveAgg, false
		if err != nil {
			return nil, err
		}
		// bindAgg registered the call last, after any aggregate of its
		// argument: it is computed by the window, not by a grouping.
		if len(b.Aggs) == 0 || b.Aggs[len(b.Aggs)-1] != e {
			return nil, pgerror.AssertionFailed("window aggregate %s not registered last", e)
		}
		b.Aggs = b.Aggs[:len(b.Aggs)-1]
		w.Agg = e.(*plantree.AggExpr)
		w.T = w.Agg.T
		if w.Agg.Name == "array_agg" || w.Agg.Name == "string_agg" {
			return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "%s as a window function is not supported", x.Name)
		}
	case windowOnly[x.Name]:
		if x.Filter != nil || x.Star || x.Distinct || len(x.Order) > 0 {
			return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "%s is not an aggregate function", x.Name)
		}
		min, max := 0, 0
		switch x.Name {
		case "lag", "lead":
			min, max = 1, 3
		case "first_value", "last_value":
			min, max = 1, 1
		case "nth_value":
			min, max = 2, 2
		}
		if len(x.Args) < min || len(x.Args) > max {
			return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s does not accept %d arguments", x.Name, len(x.Args))
		}
		w.T = values.TInt8
		for i, a := range x.Args {
			want := values.TUnknown
			if i == 1 {
				want = values.TInt8
			} else if i == 2 {
				want = w.Args[0].Type()
			}
			e, err := b.Bind(a, want)
			if err != nil {
				return nil, err
			}
			if IsUntyped(e) {
				if want == values.TUnknown {
					want = values.TText
				}
				if e, err = Coerce(e, want); err != nil {
					return nil, err
				}
			}
			if i == 1 && !e.Type().IsInt() {
				return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s, %s) does not exist", x.Name, w.Args[0].Type(), e.Type())
			}
			if i == 2 && e.Type() != w.Args[0].Type() {
				if err := Comparable(w.Args[0], e, ","); err != nil {
					return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function %s(%s, bigint, %s) does not exist", x.Name, w.Args[0].Type(), e.Type())
				}
				e = &plantree.CastExpr{X: e, T: w.Args[0].Type()}
			}
			w.Args = append(w.Args, e)
		}
		if len(w.Args) > 0 {
			w.T = w.Args[0].Type()
		}
	default:
		return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "OVER specified, but %s is not a window function nor an aggregate function", x.Name)
	}
	b.Windows = append(b.Windows, w)
	return w, nil
}

// bindFrame binds a frame clause; order is the window's ORDER BY.
func (b *Binder) bindFrame(f *sql.Frame, order []plantree.Expr) (*plantree.WindowFrame, error) {
	mode := f.Mode.String()
	if f.Mode == sql.FrameGroups && len(order) == 0 {
		return nil, pgerror.New(pgerror.CodeWindowingError, "GROUPS mode requires an ORDER BY clause")
	}
	wf := &plantree.WindowFrame{Mode: f.Mode, Exclude: f.Exclude}
	bounds := []*plantree.FrameBound{&wf.Start, &wf.End}
	for i, fb := range []sql.FrameBound{f.Start, f.End} {
		bounds[i].Kind = fb.Kind
		if fb.Offset == nil {
			continue
		}
		if f.Mode == sql.FrameRange && len(order) != 1 {
			return nil, pgerror.New(pgerror.CodeWindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
		}
		vars := false
		sql.WalkExpr(fb.Offset, func(e sql.Expr) {
			if _, ok := e.(*sql.ColumnRef); ok {
				vars = true
			}
		})
		if vars {
			return nil, pgerror.Newf(pgerror.CodeInvalidColumnReference, "argument of %s must not contain variables", mode)
		}
		var e plantree.Expr
		var err error
		if f.Mode == sql.FrameRange {
			e, err = b.bindRangeOffset(fb.Offset, order[0].Type())
		} else {
			e, err = b.bindOffset(fb.Offset, values.TInt8)
			if err == nil && !e.Type().IsInt() && e.Type() != values.TNull {
				err = pgerror.Newf(pgerror.CodeDatatypeMismatch, "argument of %s must be type bigint, not type %s", mode, e.Type())
			}
		}
		if err != nil {
			return nil, err
		}
		bounds[i].Offset = e
	}
	return wf, nil
}

func (b *Binder) bindOffset(x sql.Expr, want values.Type) (plantree.Expr, error) {
	e, err := b.Bind(x, want)
	if err == nil && IsUntyped(e) {
		e, err = Coerce(e, want)
	}
	return e, err
}

// bindRangeOffset binds a RANGE frame's offset for an ORDER BY column of
// type ct: a number for a number, an interval for a timestamptz or an
// interval (PostgreSQL's in_range support functions).
func (b *Binder) bindRangeOffset(x sql.Expr, ct values.Type) (plantree.Expr, error) {
	want := ct
	switch {
	case ct.IsInt():
		want = values.TInt8
	case ct == values.TFloat8, ct == values.TNumeric, ct == values.TInterval:
	case ct == values.TTimestamptz:
		want = values.TInterval
	default:
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", ct)
	}
	e, err := b.bindOffset(x, want)
	if err != nil {
		return nil, err
	}
	ot := e.Type()
	switch {
	case ot == want || ot == values.TNull:
	case ot.IsInt() && (want.IsInt() || want == values.TFloat8 || want == values.TNumeric):
		e = &plantree.CastExpr{X: e, T: want}
	default:
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", ct, ot)
	}
	return e, nil
}
