package parser

import (
	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
)

// PostgreSQL's CURSOR_OPT_* bits of DeclareCursorStmt.Options.
const (
	cursorOptBinary = 0x0001
	cursorOptScroll = 0x0002
	cursorOptHold   = 0x0020
)

func (c *converter) declareCursor(d *pg.DeclareCursorStmt) (sql.Stmt, error) {
	sel := d.Query.GetSelectStmt()
	if sel == nil {
		return nil, c.unsupported(-1, "this cursor query")
	}
	q, err := c.selectStmt(sel)
	if err != nil {
		return nil, err
	}
	return &sql.DeclareCursor{Name: d.Portalname, Binary: d.Options&cursorOptBinary != 0,
		Scroll: d.Options&cursorOptScroll != 0, Hold: d.Options&cursorOptHold != 0, Query: q}, nil
}

func (c *converter) fetch(f *pg.FetchStmt) sql.Stmt {
	out := &sql.Fetch{Name: f.Portalname, Move: f.Ismove, Count: f.HowMany}
	switch f.Direction {
	case pg.FetchDirection_FETCH_BACKWARD:
		out.Direction = sql.FetchBackward
	case pg.FetchDirection_FETCH_ABSOLUTE:
		out.Direction = sql.FetchAbsolute
	case pg.FetchDirection_FETCH_RELATIVE:
		out.Direction = sql.FetchRelative
	}
	return out
}
