package sql

import "time"

// Stmt is one parsed statement. Both front ends (pg_query for PostgreSQL
// statements, our own parser for topic DDL and hints) produce these types.
type Stmt interface{ stmtNode() }

// Expr is a scalar expression.
type Expr interface{ exprNode() }

// LitKind is the kind of a Literal.
type LitKind int

const (
	LitNull LitKind = iota
	LitInt
	LitFloat // Str holds the exact text too, for numeric
	LitString
	LitBool
	LitIdent    // a bare identifier used as a value in WITH (...) options: CONSUMER = analytics
	LitInterval // Interval('PT30S') or INTERVAL '30 seconds'
	LitTime     // Datetime('...') / Timestamp('...') / TIMESTAMPTZ '...'
	LitParam    // $n in an option value
)

// Literal is a constant value, in expressions and in WITH (...) options.
type Literal struct {
	Kind  LitKind
	Int   int64
	Float float64
	Str   string // LitString, LitIdent, LitFloat (text form)
	Bool  bool
	Dur   time.Duration
	Time  time.Time
	Param int // 1-based, LitParam
}

// Option is one `name = value` item of a WITH (...) list: topic options,
// consumer options and read hints. Name is lower-cased.
type Option struct {
	Name  string
	Value Literal
	Pos   int // 1-based position in the query text, 0 if unknown
}

// TableRef names a topic (or a system view such as sys.topics) with the
// optional WITH (...) hints that follow the name.
type TableRef struct {
	Schema string // "" or "sys" / "pg_catalog" / "information_schema"
	Name   string // topic path, e.g. "orders/eu"; a CTE's name
	Alias  string
	Hints  []Option
	Pos    int // 1-based character position of the name in the query, 0 if unknown
	// A derived table instead of a named one: a subquery in FROM (or a
	// WITH query it names), or a VALUES list, with optional column names.
	Sub        *Select
	Values     [][]Expr
	ColAliases []string
	SetOp      *SetOp
	Join       *Join
	// Func is a function in FROM (generate_series, unnest, jsonb_each_text,
	// a scalar function): its columns, then an ordinality column WITH
	// ORDINALITY. Its arguments may name the columns of the FROM items to
	// its left (it is LATERAL, as in PostgreSQL).
	Func       *FuncCall
	Ordinality bool
	// Lateral marks a subquery in FROM written LATERAL (...): it may name
	// the columns of the FROM items to its left.
	Lateral bool
	// Recursive is a reference to a WITH RECURSIVE query that refers to
	// itself, from outside it; WorkTable is that self-reference inside its
	// recursive term (the previous iteration's rows).
	Recursive *RecursiveCTE
	WorkTable *RecursiveCTE
}

// RecursiveCTE is a WITH RECURSIVE query that refers to itself: NonRec
// UNION [ALL] Rec, where Rec reads the query once, through a TableRef
// whose WorkTable is this query. Every reference to the query shares one
// RecursiveCTE, which is immutable once converted.
type RecursiveCTE struct {
	Name   string
	Cols   []string // the column list after the name; nil if none
	NonRec *Select
	Rec    *Select
	All    bool // UNION ALL: rows equal to earlier ones are kept
	Pos    int  // 1-based character position of the name, 0 if unknown
}

// Join is Left [INNER|LEFT|CROSS] JOIN Right [ON On | USING (Using)]; a
// FROM list of several items is a chain of CROSS joins.
type Join struct {
	Kind        string // INNER, LEFT or CROSS
	Left, Right TableRef
	On          Expr
	Using       []string
}

// SetOp is Left UNION/INTERSECT/EXCEPT [ALL] Right. A set operation
// statement is a SELECT * over a TableRef holding it, so that its ORDER BY
// and LIMIT apply to the combined rows.
type SetOp struct {
	Op          string // UNION, INTERSECT or EXCEPT
	All         bool
	Left, Right *Select
}
