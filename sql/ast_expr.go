package sql

// The AST's scalar expressions (Expr).

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
