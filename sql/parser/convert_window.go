package parser

import (
	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Windows: a function call's OVER clause, a named WINDOW it refers to, and
// its frame.

// over converts a function call's OVER clause.
func (c *converter) over(def *pg.WindowDef) (*sql.Window, error) {
	w, err := c.resolveWindow(def)
	if err != nil {
		return nil, err
	}
	over := &sql.Window{}
	if over.Frame, err = c.frame(w); err != nil {
		return nil, err
	}
	if over.PartitionBy, err = c.exprs(w.PartitionClause); err != nil {
		return nil, err
	}
	if over.OrderBy, err = c.orderBy(w.OrderClause); err != nil {
		return nil, err
	}
	return over, nil
}

// PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h).
const (
	frameNonDefault     = 0x00001
	frameRows           = 0x00004
	frameGroups         = 0x00008
	frameStartUnbPrec   = 0x00020
	frameEndUnbFoll     = 0x00100
	frameStartCurrent   = 0x00200
	frameEndCurrent     = 0x00400
	frameStartFollowing = 0x02000
	frameEndFollowing   = 0x04000
	frameStartOffset    = 0x00800 | frameStartFollowing
	frameEndOffset      = 0x01000 | frameEndFollowing
	frameExclCurrent    = 0x08000
	frameExclGroup      = 0x10000
	frameExclTies       = 0x20000
)

// frame converts a window's frame clause; nil for the default frame. The
// grammar has already refused the impossible ones (a frame starting at
// UNBOUNDED FOLLOWING, or ending before it starts by construction).
func (c *converter) frame(w *pg.WindowDef) (*sql.Frame, error) {
	o := w.FrameOptions
	if o&frameNonDefault == 0 {
		return nil, nil
	}
	f := &sql.Frame{Mode: sql.FrameRange}
	switch {
	case o&frameRows != 0:
		f.Mode = sql.FrameRows
	case o&frameGroups != 0:
		f.Mode = sql.FrameGroups
	}
	var err error
	if f.Start, err = c.frameBound(o, o&frameStartUnbPrec != 0, o&frameStartCurrent != 0, false,
		o&frameStartOffset != 0, o&frameStartFollowing != 0, w.StartOffset); err != nil {
		return nil, err
	}
	if f.End, err = c.frameBound(o, false, o&frameEndCurrent != 0, o&frameEndUnbFoll != 0,
		o&frameEndOffset != 0, o&frameEndFollowing != 0, w.EndOffset); err != nil {
		return nil, err
	}
	switch {
	case o&frameExclCurrent != 0:
		f.Exclude = sql.ExcludeCurrentRow
	case o&frameExclGroup != 0:
		f.Exclude = sql.ExcludeGroup
	case o&frameExclTies != 0:
		f.Exclude = sql.ExcludeTies
	}
	return f, nil
}

func (c *converter) frameBound(o int32, unbPrec, current, unbFoll, offset, following bool, off *pg.Node) (sql.FrameBound, error) {
	switch {
	case unbPrec:
		return sql.FrameBound{Kind: sql.BoundUnboundedPreceding}, nil
	case current:
		return sql.FrameBound{Kind: sql.BoundCurrentRow}, nil
	case unbFoll:
		return sql.FrameBound{Kind: sql.BoundUnboundedFollowing}, nil
	case !offset:
		return sql.FrameBound{}, pgerror.AssertionFailed("window frame options %#x name no bound", o)
	}
	e, err := c.expr(off)
	if err != nil {
		return sql.FrameBound{}, err
	}
	if following {
		return sql.FrameBound{Kind: sql.BoundFollowing, Offset: e}, nil
	}
	return sql.FrameBound{Kind: sql.BoundPreceding, Offset: e}, nil
}

// resolveWindow returns the window an OVER clause means: OVER w is the
// WINDOW definition w; OVER (w ...) copies w's PARTITION BY and ORDER BY
// and adds to them, under PostgreSQL's rules (42P20 otherwise).
func (c *converter) resolveWindow(w *pg.WindowDef) (*pg.WindowDef, error) {
	name := w.Name
	if c.windows[name] == w { // a definition of the WINDOW clause
		name = ""
	}
	if name == "" && w.Refname == "" {
		return w, nil
	}
	ref := name
	if ref == "" {
		ref = w.Refname
	}
	base, ok := c.windows[ref]
	if !ok {
		return nil, errAt(pgerror.CodeUndefinedObject, c.pp.orig(int(w.Location)), "window \"%s\" does not exist", ref)
	}
	base, err := c.resolveWindow(base)
	if err != nil {
		return nil, err
	}
	if name != "" { // OVER w
		return base, nil
	}
	switch {
	case len(w.PartitionClause) > 0:
		return nil, errAt(pgerror.CodeWindowingError, c.pp.orig(int(w.Location)), "cannot override PARTITION BY clause of window \"%s\"", ref)
	case len(w.OrderClause) > 0 && len(base.OrderClause) > 0:
		return nil, errAt(pgerror.CodeWindowingError, c.pp.orig(int(w.Location)), "cannot override ORDER BY clause of window \"%s\"", ref)
	case base.FrameOptions&frameNonDefault != 0:
		return nil, errAt(pgerror.CodeWindowingError, c.pp.orig(int(w.Location)), "cannot copy window \"%s\" because it has a frame clause", ref)
	}
	out := &pg.WindowDef{PartitionClause: base.PartitionClause, OrderClause: base.OrderClause,
		FrameOptions: w.FrameOptions, StartOffset: w.StartOffset, EndOffset: w.EndOffset, Location: w.Location}
	if len(w.OrderClause) > 0 {
		out.OrderClause = w.OrderClause
	}
	return out, nil
}
