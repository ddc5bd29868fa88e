package sql

import (
	"math"
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
