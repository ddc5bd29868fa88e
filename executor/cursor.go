package executor

import (
	"context"
	"fmt"
	"math"
	"time"

	"topicgate/planner/plantree"
	"topicgate/rowexec"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/txn"
	"topicgate/wire"
)

// Server-side cursors (DECLARE, FETCH, MOVE, CLOSE) over stateless reads,
// with PostgreSQL's rules: a cursor without WITH HOLD may only be declared
// in a transaction block and is closed when the block ends; a WITH HOLD
// one lives until CLOSE or the end of the session. Cursors scan forward
// only (PostgreSQL's NO SCROLL): a backward move is 55000.
//
// A cursor keeps the row iterator its query started with, as a portal
// does between row-limited Executes: a topic scan reads on as FETCH asks
// for rows, so FETCH FORWARD 2000 from a huge topic reads about 2000
// messages. A cursor remembers the transaction block it was declared in;
// when that block ends the transaction manager tells the session
// (txn.Listener.Ended), and the block's cursors close (endCursors): those
// without WITH HOLD always, the WITH HOLD ones when it rolled back, as
// in PostgreSQL. Where topicgate
// differs: a WITH HOLD cursor is not materialized at COMMIT, so it reads
// the topic as it is when FETCH runs (messages are immutable once written;
// retention may have removed some meanwhile).
type cursor struct {
	name string
	hold bool
	// statement and created are what pg_cursors shows.
	statement string
	created   time.Time
	tx        *txn.Txn // the block it was declared in; nil in autocommit or once that committed
	ec        *rowexec.EvalCtx
	it        rowexec.Iter
	cols      []wire.Column
	// pos counts the rows fetched or moved over; atStart is true until the
	// first FETCH or MOVE, atEnd once the query has no more rows.
	pos     int64
	atStart bool
	atEnd   bool
}

// endCursors closes the cursors of the block tx, which is over: those
// without WITH HOLD, and the WITH HOLD ones too when it rolled back; the
// WITH HOLD ones of a committed block stay (txnListener.Ended).
func (s *Session) endCursors(tx *txn.Txn, committed bool) {
	for name, c := range s.cursors {
		switch {
		case c.tx != tx:
		case c.hold && committed:
			c.tx = nil
		default:
			delete(s.cursors, name)
		}
	}
}

func (s *Session) lookupCursor(name string) (*cursor, error) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, pgerror.Newf(pgerror.CodeInvalidCursorName, "cursor \"%s\" does not exist", name)
	}
	return c, nil
}

// fetchColumns are the columns a FETCH statement returns: its cursor's
// (none for MOVE, or for a cursor that does not exist: executing it is
// 34000). Statement preparation asks, since only the session knows them.
func (s *Session) fetchColumns(f *plantree.FetchPlan) []wire.Column {
	if f.Fetch.Move {
		return nil
	}
	c, err := s.lookupCursor(f.Fetch.Name)
	if err != nil {
		if p, ok := s.protocolPortal(f.Fetch.Name); ok {
			return p.Columns()
		}
		return nil
	}
	return c.cols
}

// UsePortals implements wire.PortalUser.
func (s *Session) UsePortals(lookup func(name string) (wire.Portal, bool)) { s.portals = lookup }

func (s *Session) protocolPortal(name string) (wire.Portal, bool) {
	if s.portals == nil {
		return nil, false
	}
	return s.portals(name)
}

// fetchPortal runs FETCH or MOVE forward on a protocol portal the client
// bound (in PostgreSQL cursors and portals share one namespace): the
// portal's next rows, sent or, for MOVE, counted.
func (s *Session) fetchPortal(ctx context.Context, f sql.Fetch, p wire.Portal, cols []wire.Column, out wire.Output) (string, error) {
	verb := "FETCH"
	if f.Move {
		verb = "MOVE"
	}
	if r, ok := p.(interface{ Running() bool }); ok && r.Running() {
		return "", pgerror.Newf(pgerror.CodeObjectNotInPrerequisiteState, "portal \"%s\" cannot be run", f.Name)
	}
	if f.Direction != sql.FetchForward || f.Count <= 0 {
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported, "%s on protocol portal \"%s\" goes forward only, by a positive count or ALL", verb, f.Name)
	}
	if !f.Move && !sameColumns(cols, p.Columns()) {
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"portal \"%s\" returns other columns than when this FETCH was prepared; prepare it again", f.Name)
	}
	max := 0 // ALL
	if f.Count < math.MaxInt32 {
		max = int(f.Count)
	}
	co := &countingOutput{Output: out, discard: f.Move}
	if _, _, err := p.Execute(ctx, co, max); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %d", verb, co.rows), nil
}

// countingOutput counts the rows written through it and, with discard,
// drops them (MOVE).
type countingOutput struct {
	wire.Output
	discard bool
	rows    int64
}

func (o *countingOutput) WriteRow(vals []any) error {
	o.rows++
	if o.discard {
		return nil
	}
	return o.Output.WriteRow(vals)
}

func (o *countingOutput) WriteRows(e *wire.RowEncoder) error {
	o.rows += int64(e.Rows())
	if o.discard {
		return nil
	}
	return o.Output.WriteRows(e)
}

// execDeclare opens a cursor: its query starts now (subqueries run, system
// views are read) and its rows come as FETCH asks for them.
func (s *Session) execDeclare(ctx context.Context, ec *rowexec.EvalCtx, plan *plantree.DeclareCursorPlan, statement string) error {
	if s.txc.Block() == nil && !plan.Hold {
		return pgerror.New(pgerror.CodeNoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, ok := s.cursors[plan.Name]; ok {
		return pgerror.Newf(pgerror.CodeDuplicateCursor, "cursor \"%s\" already exists", plan.Name)
	}
	it, err := rowexec.Run(ctx, ec, plan.Query, nil)
	if err != nil {
		return err
	}
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	s.cursors[plan.Name] = &cursor{name: plan.Name, hold: plan.Hold, tx: s.txc.Block(), ec: ec, it: it,
		statement: statement, created: s.eng.opts.Clock(),
		cols: wireColumns(plan.Query.Columns()), atStart: true}
	return nil
}

// errBackward is PostgreSQL's error for a backward move of a NO SCROLL
// cursor.
func errBackward() error {
	return pgerror.New(pgerror.CodeObjectNotInPrerequisiteState, "cursor can only scan forward").
		WithHint("Declare it with SCROLL option to enable backward scan.")
}

// execFetch runs FETCH or MOVE as PostgreSQL's DoPortalRunFetch does for a
// forward-only cursor, and returns the tag ("FETCH n", "MOVE n"). cols are
// the columns the statement was prepared with (its RowDescription): a
// prepared FETCH run again on a newer cursor of the same name with other
// columns is refused rather than sending rows that do not match them.
func (s *Session) execFetch(ctx context.Context, plan *plantree.FetchPlan, cols []wire.Column, out wire.Output) (string, error) {
	f := plan.Fetch
	c, err := s.lookupCursor(f.Name)
	if err != nil {
		if p, ok := s.protocolPortal(f.Name); ok {
			return s.fetchPortal(ctx, f, p, cols, out)
		}
		return "", err
	}
	if !f.Move && !sameColumns(cols, c.cols) {
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"cursor \"%s\" returns other columns than when this FETCH was prepared; prepare it again", f.Name)
	}
	verb := "FETCH"
	if f.Move {
		verb = "MOVE"
	}
	c.ec.SetContext(ctx) // correlated subqueries run in the fetching statement
	var n int64
	count := f.Count
	switch f.Direction {
	case sql.FetchBackward:
		if count >= 0 {
			return "", errBackward()
		}
		count = -count // BACKWARD -n is FORWARD n
		fallthrough
	case sql.FetchForward:
		if count < 0 {
			return "", errBackward()
		}
		if count == 0 { // the current row again: a step back first
			onRow := !c.atStart && !c.atEnd
			if f.Move {
				n = map[bool]int64{true: 1}[onRow]
			} else if onRow {
				return "", errBackward()
			}
			break
		}
		n, err = s.cursorStep(ctx, c, count, !f.Move, out)
	case sql.FetchRelative:
		switch {
		case count < 0:
			return "", errBackward()
		case count == 0:
			if !c.atStart && !c.atEnd {
				if !f.Move {
					return "", errBackward()
				}
				n = 1
			}
		default:
			if _, err = s.cursorStep(ctx, c, count-1, false, out); err == nil {
				n, err = s.cursorStep(ctx, c, 1, !f.Move, out)
			}
		}
	case sql.FetchAbsolute:
		pos := c.pos
		if c.atEnd {
			pos++
		}
		switch {
		case count == 0:
			if !c.atStart || c.atEnd { // a rewind
				return "", errBackward()
			}
		case count < 0 || count <= pos:
			return "", errBackward()
		default:
			if _, err = s.cursorStep(ctx, c, count-pos-1, false, out); err == nil {
				n, err = s.cursorStep(ctx, c, 1, !f.Move, out)
			}
		}
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %d", verb, n), nil
}

// CursorPortal implements wire.CursorPortals: a cursor seen as a protocol
// portal. Execute fetches up to maxRows rows (all with 0); Close does
// nothing (CLOSE closes the cursor).
func (s *Session) CursorPortal(name string) (wire.Portal, bool) {
	c, err := s.lookupCursor(name)
	if err != nil {
		return nil, false
	}
	return &cursorPortal{s: s, c: c}, true
}

type cursorPortal struct {
	s *Session
	c *cursor
}

func (p *cursorPortal) Columns() []wire.Column { return p.c.cols }

func (p *cursorPortal) Close() {}

func (p *cursorPortal) Execute(ctx context.Context, out wire.Output, maxRows int) (string, bool, error) {
	count := int64(maxRows)
	if count <= 0 {
		count = math.MaxInt64
	}
	n, err := p.s.cursorStep(ctx, p.c, count, true, out)
	if err != nil {
		return "", true, err
	}
	if n == count && !p.c.atEnd && maxRows > 0 {
		return "", false, nil
	}
	return fmt.Sprintf("SELECT %d", n), true, nil
}

// cursorStep reads up to count rows of c forward, sending them when send,
// and returns how many it read.
func (s *Session) cursorStep(ctx context.Context, c *cursor, count int64, send bool, out wire.Output) (int64, error) {
	var n int64
	for n < count && !c.atEnd {
		c.atStart = false
		if err := ctx.Err(); err != nil {
			return n, pgerror.New(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		}
		r, err := c.it.Next(ctx)
		if err != nil {
			return n, err
		}
		if r == nil {
			c.atEnd = true
			break
		}
		n++
		c.pos++
		if !send {
			continue
		}
		if len(r) > len(c.cols) {
			r = r[:len(c.cols)]
		}
		presentRow(r, c.cols, s.settings)
		if err := out.WriteRow(r); err != nil {
			return n, err
		}
	}
	if count > 0 {
		c.atStart = false
	}
	return n, nil
}

// execCloseCursor closes one cursor or all of them.
func (s *Session) execCloseCursor(plan *plantree.CloseCursorPlan) (string, error) {
	if plan.Close.All {
		s.cursors = nil
		return "CLOSE CURSOR ALL", nil
	}
	if _, err := s.lookupCursor(plan.Close.Name); err != nil {
		return "", err
	}
	delete(s.cursors, plan.Close.Name)
	return "CLOSE CURSOR", nil
}

func sameColumns(a, b []wire.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].TypeOID != b[i].TypeOID {
			return false
		}
	}
	return true
}
