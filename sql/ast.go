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

// ---- expressions ----

// ExprPos returns where e is in the query as PostgreSQL's error positions
// point at it (1-based characters; 0 if unknown): a column reference, a
// constant or a function call where it starts, an operator at the
// operator, a cast at what it casts.
func ExprPos(e Expr) int {
	switch x := e.(type) {
	case *ColumnRef:
		return x.Pos
	case *Const:
		return x.Pos
	case *BinOp:
		return x.Pos
	case *FuncCall:
		return x.Pos
	case *Cast:
		return ExprPos(x.X)
	}
	return 0
}

// ColumnRef is a column name, optionally qualified.
type ColumnRef struct {
	Table string
	Name  string // lower-cased unless quoted; YDB aliases are kept as written
	Pos   int    // 1-based character position in the query, 0 if unknown
}

// Const is a literal in an expression. Untyped string literals keep
// LitString; the planner gives them a type from context, as PostgreSQL does.
type Const struct {
	Lit Literal
	Pos int // 1-based character position in the query, 0 if unknown
}

// ParamRef is a $n placeholder (1-based).
type ParamRef struct{ N int }

// BinOp is a binary operator: = <> < <= > >= + - * / % || AND OR -> ->>
// LIKE ILIKE NOT LIKE NOT ILIKE ~ (and @> ? for jsonb), IS DISTINCT FROM,
// IS NOT DISTINCT FROM.
type BinOp struct {
	Op   string
	L, R Expr
	Pos  int // of the operator: 1-based character position, 0 if unknown
}

// UnaryOp is NOT or unary minus.
type UnaryOp struct {
	Op string // "NOT", "-", "+"
	X  Expr
}

// FuncCall is a function call; Name is lower-cased and unqualified.
type FuncCall struct {
	Name     string
	Args     []Expr
	Star     bool // count(*)
	Distinct bool
	Filter   Expr      // aggregate FILTER (WHERE ...), or nil
	Order    []OrderBy // ORDER BY inside an aggregate call
	Over     *Window   // a window function call: f(...) OVER (...)
	Pos      int       // 1-based character position of the name, 0 if unknown
}

// Window is OVER (PARTITION BY ... ORDER BY ... [frame]).
type Window struct {
	PartitionBy []Expr
	OrderBy     []OrderBy
	Frame       *Frame // nil: the default frame (RANGE UNBOUNDED PRECEDING)
}

// Frame is a window frame clause: {ROWS | RANGE | GROUPS} BETWEEN Start
// AND End [EXCLUDE ...]. A frame given without BETWEEN ends at the current
// row, as in PostgreSQL.
type Frame struct {
	Mode       FrameMode
	Start, End FrameBound
	Exclude    FrameExclude
}

// FrameMode is the unit a frame's offsets count.
type FrameMode uint8

const (
	FrameRange  FrameMode = iota // peers of the ORDER BY
	FrameRows                    // rows
	FrameGroups                  // peer groups
)

// FrameBound is one end of a frame.
type FrameBound struct {
	Kind   BoundKind
	Offset Expr // for BoundPreceding and BoundFollowing
}

// BoundKind says where a frame bound is.
type BoundKind uint8

const (
	BoundUnboundedPreceding BoundKind = iota
	BoundPreceding                    // Offset PRECEDING
	BoundCurrentRow
	BoundFollowing // Offset FOLLOWING
	BoundUnboundedFollowing
)

func (m FrameMode) String() string {
	return [...]string{FrameRange: "RANGE", FrameRows: "ROWS", FrameGroups: "GROUPS"}[m]
}

// BoundText is the SQL of a frame bound of kind k whose offset (for
// BoundPreceding and BoundFollowing) reads off.
func BoundText(k BoundKind, off string) string {
	switch k {
	case BoundUnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case BoundCurrentRow:
		return "CURRENT ROW"
	case BoundUnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	case BoundPreceding:
		return off + " PRECEDING"
	}
	return off + " FOLLOWING"
}

// FrameExclude is a frame's EXCLUDE clause.
type FrameExclude uint8

// String is the clause's SQL with a leading space ("" for none).
func (x FrameExclude) String() string {
	return [...]string{ExcludeCurrentRow: " EXCLUDE CURRENT ROW", ExcludeGroup: " EXCLUDE GROUP", ExcludeTies: " EXCLUDE TIES"}[x]
}

const (
	ExcludeNoOthers FrameExclude = iota
	ExcludeCurrentRow
	ExcludeGroup // the current row and its peers
	ExcludeTies  // the current row's peers, not the row itself
)

// Cast is X::Type or CAST(X AS Type). Type is a normalized PostgreSQL type
// name: int2 int4 int8 float4 float8 numeric bool text varchar bytea json
// jsonb timestamptz timestamp interval date uuid, with "[]" suffix for arrays.
type Cast struct {
	X       Expr
	Type    string
	TypePos int // 1-based character position of the type name, 0 if unknown
}

// InList is X [NOT] IN (list).
type InList struct {
	X    Expr
	List []Expr
	Not  bool
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	X   Expr
	Not bool
}

// IsBool is X IS [NOT] TRUE/FALSE, or X IS [NOT] UNKNOWN (Unknown).
type IsBool struct {
	X       Expr
	Value   bool
	Not     bool
	Unknown bool
}

// AnyAll is X op ANY(array) or X op ALL(array).
type AnyAll struct {
	Op    string
	X     Expr
	Array Expr
	All   bool
}

// ArrayLit is ARRAY[...] .
type ArrayLit struct{ Elems []Expr }

// Case is CASE [Arg] WHEN ... THEN ... [ELSE ...] END.
type Case struct {
	Arg   Expr // nil for searched CASE
	Whens []When
	Else  Expr
}

// When is one WHEN of a Case.
type When struct{ Cond, Result Expr }

// Coalesce is COALESCE(args...); NullIf is NULLIF(a, b).
type Coalesce struct{ Args []Expr }

// NullIf is NULLIF(A, B).
type NullIf struct{ A, B Expr }

// Star is * in a select list (Table set for t.*).
type Star struct{ Table string }

// SubLink is a subquery in an expression: scalar (Kind SubScalar),
// EXISTS (SubExists) or X IN (subquery) (SubIn; NOT IN is a NOT around it).
type SubLink struct {
	Kind   SubKind
	X      Expr // SubIn: the value tested
	Select *Select
}

// SubKind is a SubLink's kind.
type SubKind uint8

// Subquery kinds.
const (
	SubScalar SubKind = iota
	SubExists
	SubIn
	SubArray // ARRAY(subquery): the column's values as an array
)

// Subscript is X[Index], one element of an array (1-based; NULL outside).
type Subscript struct{ X, Index Expr }

// Collate is X COLLATE Name with a default collation (default, C, POSIX),
// which compares as X does.
type Collate struct {
	X    Expr
	Name string
}

// Default is the DEFAULT keyword in an INSERT ... VALUES row or UPDATE SET.
type Default struct{}

func (*ColumnRef) exprNode() {}
func (*Const) exprNode()     {}
func (*ParamRef) exprNode()  {}
func (*BinOp) exprNode()     {}
func (*UnaryOp) exprNode()   {}
func (*FuncCall) exprNode()  {}
func (*Cast) exprNode()      {}
func (*InList) exprNode()    {}
func (*Between) exprNode()   {}
func (*IsNull) exprNode()    {}
func (*IsBool) exprNode()    {}
func (*AnyAll) exprNode()    {}
func (*ArrayLit) exprNode()  {}
func (*Case) exprNode()      {}
func (*Coalesce) exprNode()  {}
func (*NullIf) exprNode()    {}
func (*Star) exprNode()      {}
func (*SubLink) exprNode()   {}
func (*Default) exprNode()   {}
func (*Subscript) exprNode() {}
func (*Collate) exprNode()   {}

// ---- statements ----

// Target is one select-list item.
type Target struct {
	Expr  Expr
	Alias string // "" if none
}

// OrderBy is one ORDER BY item.
type OrderBy struct {
	Expr       Expr
	Desc       bool
	NullsFirst *bool // nil = default
}

// Select is SELECT targets [FROM table [WITH (hints)]] [WHERE] [GROUP BY]
// [ORDER BY] [LIMIT] [OFFSET]. From is nil for SELECT without FROM.
// Joins and subqueries in FROM are rejected with 0A000 by the front end.
type Select struct {
	Distinct   bool
	DistinctOn []Expr // DISTINCT ON (...): one row per distinct value of these
	Targets    []Target
	From       *TableRef
	Where      Expr
	GroupBy    []Expr
	Having     Expr
	OrderBy    []OrderBy
	Limit      Expr // nil = none
	Offset     Expr // nil = none
}

// Insert is INSERT INTO table [(cols)] VALUES (...), ... or INSERT ... SELECT.
type Insert struct {
	Table     TableRef
	Columns   []string // nil = all writable columns in default order
	Values    [][]Expr
	Select    *Select
	Returning []Target
}

// SetClause is one col = expr of UPDATE ... SET.
type SetClause struct {
	Column string
	Value  Expr
}

// Update is UPDATE table [WITH (hints)] SET ... [WHERE ...].
type Update struct {
	Table     TableRef
	Set       []SetClause
	Where     Expr
	Returning []Target
}

// Delete is DELETE FROM table [WITH (hints)] [WHERE ...].
type Delete struct {
	Table     TableRef
	Where     Expr
	Returning []Target
}

// CopyFrom is COPY table [(cols)] FROM STDIN [WITH (...)].
type CopyFrom struct {
	Table   TableRef
	Columns []string
	CopyOptions
}

// CopyOptions are the WITH (...) options of COPY, in both directions.
type CopyOptions struct {
	Format    string // "text", "csv", "binary"
	Delimiter string // "" = format default
	Null      string // NULL marker; Format default when NullSet is false
	NullSet   bool
	Header    bool
	Quote     string
	Escape    string
}

// CopyTo is COPY table [(columns)] | (query) TO STDOUT [WITH (...)]: the
// rows of Query in COPY text, csv or binary format.
type CopyTo struct {
	Query *Select
	CopyOptions
}

// CreateTopic is CREATE TOPIC [IF NOT EXISTS] name [(CONSUMER ...)] [WITH (...)].
type CreateTopic struct {
	Name        string
	IfNotExists bool
	Consumers   []ConsumerDef
	Options     []Option
}

// ConsumerDef is CONSUMER name [WITH (options)].
type ConsumerDef struct {
	Name    string
	Options []Option
	Pos     int
}

// AlterAction is one comma-separated action of ALTER TOPIC.
type AlterAction interface{ alterAction() }

// AddConsumer is ADD CONSUMER name [WITH (...)].
type AddConsumer struct{ Consumer ConsumerDef }

// DropConsumer is DROP CONSUMER name.
type DropConsumer struct{ Name string }

// AlterConsumer is ALTER CONSUMER name SET (...) | RESET (names).
type AlterConsumer struct {
	Name  string
	Set   []Option
	Reset []string
}

// SetOptions is SET (options) on the topic.
type SetOptions struct{ Options []Option }

// ResetOptions is RESET (names) on the topic.
type ResetOptions struct{ Names []string }

// SplitPartition is SPLIT PARTITION n: an operator's split of an active
// partition of an auto-partitioned topic (topicgate's extension).
type SplitPartition struct{ Partition int32 }

func (*AddConsumer) alterAction()    {}
func (*DropConsumer) alterAction()   {}
func (*AlterConsumer) alterAction()  {}
func (*SetOptions) alterAction()     {}
func (*ResetOptions) alterAction()   {}
func (*SplitPartition) alterAction() {}

// AlterTopic is ALTER TOPIC [IF EXISTS] name action, action, ...
type AlterTopic struct {
	Name     string
	IfExists bool
	Actions  []AlterAction
}

// DropTopic is DROP TOPIC [IF EXISTS] name[, name...].
type DropTopic struct {
	Names    []string
	IfExists bool
}

// Begin is BEGIN / START TRANSACTION.
type Begin struct {
	Start     bool // START TRANSACTION (its tag)
	ReadOnly  bool
	Isolation string // "" or lower-case level, e.g. "serializable", "read committed"
}

// Commit is COMMIT / END.
type Commit struct{}

// Rollback is ROLLBACK / ABORT.
type Rollback struct{}

// Savepoint is SAVEPOINT name, RELEASE [SAVEPOINT] name or ROLLBACK TO
// [SAVEPOINT] name.
type Savepoint struct {
	Op   string // "SAVEPOINT", "RELEASE" or "ROLLBACK TO"
	Name string
}

// SetVar is SET [SESSION|LOCAL] name = value / TO value / RESET name.
type SetVar struct {
	Name  string // lower-cased
	Value string // "" with Reset
	Local bool
	Reset bool
	All   bool // RESET ALL
	// Default is SET name TO DEFAULT (Reset is set too; the tag is SET).
	Default bool
}

// Show is SHOW name / SHOW ALL.
type Show struct{ Name string }

// ShowCreateTopic is SHOW CREATE TOPIC name: the DDL that recreates the
// topic with its options and consumers.
type ShowCreateTopic struct {
	Name string
	Pos  int // 1-based character position of the name
}

// Explain is EXPLAIN [ANALYZE] stmt or EXPLAIN (option [value], ...)
// stmt: Format is "text" or "json"; Timing (ANALYZE's default) reports
// each node's time.
type Explain struct {
	Stmt    Stmt
	Analyze bool
	Timing  bool
	Format  string
}

// Empty is an empty query string (only comments or whitespace).
type Empty struct{}

// Discard is DISCARD ALL and friends (a no-op for topicgate).
type Discard struct{ What string }

// Deallocate is DEALLOCATE [PREPARE] name|ALL.
type Deallocate struct {
	Name string
	All  bool
}

// Listen-style and other statements PostgreSQL has but topicgate does not
// are reported as 0A000 by the front end, naming the statement.

func (*Select) stmtNode()          {}
func (*Insert) stmtNode()          {}
func (*Update) stmtNode()          {}
func (*Delete) stmtNode()          {}
func (*CopyFrom) stmtNode()        {}
func (*CopyTo) stmtNode()          {}
func (*CreateTopic) stmtNode()     {}
func (*AlterTopic) stmtNode()      {}
func (*DropTopic) stmtNode()       {}
func (*Begin) stmtNode()           {}
func (*Commit) stmtNode()          {}
func (*Rollback) stmtNode()        {}
func (*Savepoint) stmtNode()       {}
func (*SetVar) stmtNode()          {}
func (*Show) stmtNode()            {}
func (*ShowCreateTopic) stmtNode() {}
func (*Explain) stmtNode()         {}
func (*Empty) stmtNode()           {}
func (*Discard) stmtNode()         {}
func (*Deallocate) stmtNode()      {}
