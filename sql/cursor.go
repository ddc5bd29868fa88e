package sql

import (
	"math"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// DeclareCursor is DECLARE name [BINARY] [NO SCROLL | SCROLL] CURSOR
// [WITH HOLD | WITHOUT HOLD] FOR query.
type DeclareCursor struct {
	Name   string
	Binary bool
	Scroll bool // SCROLL given
	Hold   bool
	Query  *Select
}

// FetchDirection is how a FETCH or MOVE counts.
type FetchDirection uint8

// Fetch directions, as PostgreSQL's grammar reduces them: NEXT is FORWARD
// 1, PRIOR is BACKWARD 1, FIRST is ABSOLUTE 1, LAST is ABSOLUTE -1, ALL is
// FORWARD FetchAll.
const (
	FetchForward FetchDirection = iota
	FetchBackward
	FetchAbsolute
	FetchRelative
)

// FetchAll is the count of FETCH ALL (PostgreSQL's LONG_MAX).
const FetchAll = math.MaxInt64

// Fetch is FETCH [direction] [FROM | IN] name, or MOVE (Move) the same way.
type Fetch struct {
	Name      string
	Move      bool
	Direction FetchDirection
	Count     int64
}

// CloseCursor is CLOSE name or CLOSE ALL.
type CloseCursor struct {
	Name string
	All  bool
}

func (*DeclareCursor) stmtNode() {}
func (*Fetch) stmtNode()         {}
func (*CloseCursor) stmtNode()   {}

// PostgreSQL's CURSOR_OPT_* bits of DeclareCursorStmt.Options.
const (
	cursorOptBinary = 0x0001
	cursorOptScroll = 0x0002
	cursorOptHold   = 0x0020
)

func (c *converter) declareCursor(d *pg.DeclareCursorStmt) (Stmt, error) {
	sel := d.Query.GetSelectStmt()
	if sel == nil {
		return nil, c.unsupported(-1, "this cursor query")
	}
	q, err := c.selectStmt(sel)
	if err != nil {
		return nil, err
	}
	return &DeclareCursor{Name: d.Portalname, Binary: d.Options&cursorOptBinary != 0,
		Scroll: d.Options&cursorOptScroll != 0, Hold: d.Options&cursorOptHold != 0, Query: q}, nil
}

func (c *converter) fetch(f *pg.FetchStmt) Stmt {
	out := &Fetch{Name: f.Portalname, Move: f.Ismove, Count: f.HowMany}
	switch f.Direction {
	case pg.FetchDirection_FETCH_BACKWARD:
		out.Direction = FetchBackward
	case pg.FetchDirection_FETCH_ABSOLUTE:
		out.Direction = FetchAbsolute
	case pg.FetchDirection_FETCH_RELATIVE:
		out.Direction = FetchRelative
	}
	return out
}
