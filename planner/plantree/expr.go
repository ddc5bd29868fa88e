package plantree

import (
	"fmt"
	"strconv"
	"strings"
	"topicgate/planner/catalog"
	"topicgate/sql"
)

// Expr is a type-checked scalar expression. The executor evaluates it.
type Expr interface {
	Type() Type
	String() string
}

// ColExpr reads column Idx of the input row.
type ColExpr struct {
	Idx  int
	T    Type
	Name string
}

// ConstExpr is a constant value (see the executor's value representation).
type ConstExpr struct {
	V any
	T Type
}

// ParamExpr is bind parameter Idx (0-based, $1 is 0).
type ParamExpr struct {
	Idx   int
	T     Type
	types *[]Type // shared inference slot
}

// NewParam is parameter $idx+1, whose type is (*types)[idx]: the slots
// the statement's parameters share while it is bound, so a type inferred
// at one use types them all.
func NewParam(idx int, types *[]Type) *ParamExpr { return &ParamExpr{Idx: idx, types: types} }

// Infer sets the parameter's type in its shared slot (binding only: a
// plan once built is immutable).
func (e *ParamExpr) Infer(t Type) { (*e.types)[e.Idx] = t }

// CmpExpr compares L and R (= <> < <= > >= LIKE ILIKE ~ and negations).
type CmpExpr struct {
	Op   string
	L, R Expr
}

// LogicExpr is AND (And=true) or OR over Args.
type LogicExpr struct {
	And  bool
	Args []Expr
}

// NotExpr is NOT X.
type NotExpr struct{ X Expr }

// ArithExpr is L op R for + - * / % and ||.
type ArithExpr struct {
	Op   string
	L, R Expr
	T    Type
}

// NegExpr is -X.
type NegExpr struct{ X Expr }

// JSONGetExpr is X -> Key or X ->> Key (Text).
type JSONGetExpr struct {
	X, Key Expr
	Text   bool
}

// JSONTestExpr is a jsonb test: X ? key, X ?| keys, X ?& keys, X @> Y or
// X <@ Y.
type JSONTestExpr struct {
	Op   string
	X, Y Expr
}

// JSONPathExpr is X #> Path or X #>> Path (Text); Path is a text[].
type JSONPathExpr struct {
	X, Path Expr
	Text    bool
}

// FuncExpr calls the builtin Name.
type FuncExpr struct {
	Name string
	Args []Expr
	T    Type
	// Set marks a set-returning function of the select list (srf.go):
	// the executor's ProjectSet step supplies its current value.
	Set bool
	// Fn is the scalar builtin's declaration (nil when Set); the executor
	// runs the implementation registered for it.
	Fn *catalog.Builtin
}

// CastExpr converts X to T.
type CastExpr struct {
	X Expr
	T Type
}

// InExpr is X [NOT] IN (List).
type InExpr struct {
	X    Expr
	List []Expr
	Not  bool
}

// AnyExpr is X op ANY(Array) (or ALL).
type AnyExpr struct {
	Op    string
	X     Expr
	Array Expr
	All   bool
}

// IsNullExpr is X IS [NOT] NULL.
type IsNullExpr struct {
	X   Expr
	Not bool
}

// IsBoolExpr is X IS [NOT] TRUE/FALSE.
type IsBoolExpr struct {
	X     Expr
	Value bool
	Not   bool
}

// CaseExpr is a searched CASE (simple CASE is rewritten into it).
type CaseExpr struct {
	Whens []CaseWhen
	Else  Expr
	T     Type
}

// CaseWhen is one arm of a CaseExpr.
type CaseWhen struct{ Cond, Result Expr }

// CoalesceExpr is COALESCE(Args).
type CoalesceExpr struct {
	Args []Expr
	T    Type
}

// ArrayExpr is ARRAY[Elems].
type ArrayExpr struct {
	Elems []Expr
	T     Type
}

// SubscriptExpr is X[Index]: an array's element (1-based), NULL outside.
type SubscriptExpr struct {
	X, Index Expr
	T        Type
}

func (e *SubscriptExpr) Type() Type     { return e.T }
func (e *SubscriptExpr) String() string { return "(" + e.X.String() + ")[" + e.Index.String() + "]" }

// AggExpr is an aggregate call; it is evaluated by the aggregation operator
// and replaced by a ColExpr over the aggregate's output above it.
type AggExpr struct {
	Name     string // count, sum, min, max, avg, string_agg, bool_and, bool_or, array_agg
	Arg      Expr   // nil for count(*)
	Sep      Expr   // string_agg's delimiter
	Filter   Expr   // FILTER (WHERE ...): rows it is not true for are skipped
	Order    []Expr // ORDER BY inside the call (string_agg, array_agg)
	OrderBy  []SortKey
	Distinct bool
	T        Type
}

func (e *ColExpr) Type() Type   { return e.T }
func (e *ConstExpr) Type() Type { return e.T }
func (e *ParamExpr) Type() Type { return (*e.types)[e.Idx] }
func (e *CmpExpr) Type() Type   { return TBool }
func (e *LogicExpr) Type() Type { return TBool }
func (e *NotExpr) Type() Type   { return TBool }
func (e *ArithExpr) Type() Type { return e.T }
func (e *NegExpr) Type() Type   { return e.X.Type() }
func (e *JSONGetExpr) Type() Type {
	if e.Text {
		return TText
	}
	return TJSONB
}
func (e *JSONTestExpr) Type() Type { return TBool }
func (e *JSONPathExpr) Type() Type {
	if e.Text {
		return TText
	}
	return TJSONB
}
func (e *FuncExpr) Type() Type     { return e.T }
func (e *CastExpr) Type() Type     { return e.T }
func (e *InExpr) Type() Type       { return TBool }
func (e *AnyExpr) Type() Type      { return TBool }
func (e *IsNullExpr) Type() Type   { return TBool }
func (e *IsBoolExpr) Type() Type   { return TBool }
func (e *CaseExpr) Type() Type     { return e.T }
func (e *CoalesceExpr) Type() Type { return e.T }
func (e *ArrayExpr) Type() Type    { return e.T }
func (e *AggExpr) Type() Type      { return e.T }

func (e *ColExpr) String() string { return e.Name }
func (e *ConstExpr) String() string {
	switch v := e.V.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("'\\x%x'", v)
	}
	return fmt.Sprint(e.V)
}
func (e *ParamExpr) String() string { return fmt.Sprintf("$%d", e.Idx+1) }
func (e *CmpExpr) String() string   { return "(" + e.L.String() + " " + e.Op + " " + e.R.String() + ")" }
func (e *LogicExpr) String() string {
	op := " OR "
	if e.And {
		op = " AND "
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return "(" + strings.Join(parts, op) + ")"
}
func (e *NotExpr) String() string { return "NOT " + e.X.String() }
func (e *ArithExpr) String() string {
	return "(" + e.L.String() + " " + e.Op + " " + e.R.String() + ")"
}
func (e *NegExpr) String() string { return "-" + e.X.String() }
func (e *JSONGetExpr) String() string {
	op := "->"
	if e.Text {
		op = "->>"
	}
	return "(" + e.X.String() + op + e.Key.String() + ")"
}
func (e *JSONPathExpr) String() string {
	op := " #> "
	if e.Text {
		op = " #>> "
	}
	return "(" + e.X.String() + op + e.Path.String() + ")"
}
func (e *JSONTestExpr) String() string {
	return "(" + e.X.String() + " " + e.Op + " " + e.Y.String() + ")"
}
func (e *FuncExpr) String() string { return e.Name + "(" + joinExprs(e.Args) + ")" }
func (e *CastExpr) String() string { return e.X.String() + "::" + e.T.String() }
func (e *InExpr) String() string {
	not := ""
	if e.Not {
		not = "NOT "
	}
	return e.X.String() + " " + not + "IN (" + joinExprs(e.List) + ")"
}
func (e *AnyExpr) String() string {
	q := "ANY"
	if e.All {
		q = "ALL"
	}
	return e.X.String() + " " + e.Op + " " + q + "(" + e.Array.String() + ")"
}
func (e *IsNullExpr) String() string {
	if e.Not {
		return e.X.String() + " IS NOT NULL"
	}
	return e.X.String() + " IS NULL"
}
func (e *IsBoolExpr) String() string { return fmt.Sprintf("%s IS %v", e.X, e.Value) }
func (e *CaseExpr) String() string   { return "CASE ... END" }
func (e *CoalesceExpr) String() string {
	return "coalesce(" + joinExprs(e.Args) + ")"
}
func (e *ArrayExpr) String() string { return "ARRAY[" + joinExprs(e.Elems) + "]" }
func (e *AggExpr) String() string {
	s := e.Name + "(*)"
	if e.Arg != nil {
		args := []Expr{e.Arg}
		if e.Sep != nil {
			args = append(args, e.Sep)
		}
		s = e.Name + "(" + joinExprs(args) + ")"
	}
	if len(e.Order) > 0 {
		s = s[:len(s)-1] + " ORDER BY " + joinExprs(e.Order) + ")"
	}
	if e.Filter != nil {
		s += " FILTER (WHERE " + e.Filter.String() + ")"
	}
	return s
}

func joinExprs(es []Expr) string {
	parts := make([]string, len(es))
	for i, a := range es {
		parts[i] = a.String()
	}
	return strings.Join(parts, ", ")
}

// SubqueryExpr is a subquery in an expression: a scalar subquery (the
// single value of its single column, NULL without rows), EXISTS, or X IN
// (subquery). An uncorrelated one runs once per execution of the
// statement, before the statement reads anything (SelectPlan.Subqueries
// lists them), and its result is kept. A correlated one (Correlated: Plan
// reads columns of the query around it, as OuterRefs) runs for each row it
// is evaluated on.
type SubqueryExpr struct {
	Kind       sql.SubKind
	X          Expr // SubIn: the value tested
	Plan       *SelectPlan
	T          Type
	Correlated bool
	// OuterCols are the outer row's columns a correlated subquery reads;
	// Volatile says it calls a volatile function (clock_timestamp(),
	// gen_random_uuid()), so equal values of them may give another result.
	// Reusable, set by the cacheCorrelatedSubqueries rule, lets the
	// executor keep a correlated subquery's results by those values.
	OuterCols []int
	Volatile  bool
	Reusable  bool
	id        int
}

// NewSubquery is e numbered id, which its String names (unique within
// the statement).
func NewSubquery(id int, e SubqueryExpr) *SubqueryExpr {
	e.id = id
	return &e
}

// OuterRef is a correlated subquery's reference to column Idx of the row of
// the query directly around it.
type OuterRef struct {
	Idx  int
	T    Type
	Name string
}

func (e *OuterRef) Type() Type { return e.T }

func (e *OuterRef) String() string { return "(outer " + e.Name + ")" }

func (e *SubqueryExpr) Type() Type { return e.T }

// String names the subquery uniquely within its statement: two subqueries
// never match each other (as ORDER BY matches select-list expressions).
func (e *SubqueryExpr) String() string {
	switch e.Kind {
	case sql.SubExists:
		return "EXISTS (subquery " + strconv.Itoa(e.id) + ")"
	case sql.SubIn:
		return "(" + e.X.String() + " IN (subquery " + strconv.Itoa(e.id) + "))"
	case sql.SubArray:
		return "ARRAY(subquery " + strconv.Itoa(e.id) + ")"
	}
	return "(subquery " + strconv.Itoa(e.id) + ")"
}

// SetOpPlan is Left UNION/INTERSECT/EXCEPT [ALL] Right; both sides have
// the same number of columns, cast to common types.
type SetOpPlan struct {
	Op          string
	All         bool
	Left, Right *SelectPlan
}

// WindowExpr is a window function call, f(...) OVER (PARTITION BY ...
// ORDER BY ... [frame]). Without a frame clause the frame is PostgreSQL's
// default: with an ORDER BY, the rows from the partition's start to the
// current row and its peers; without one, the whole partition. The executor computes every window of a plan
// (SelectPlan.Windows) over the filtered input rows and appends the results
// to each row; the expression then reads its column, Slot.
type WindowExpr struct {
	Name        string // row_number, rank, dense_rank, lag, lead, first_value, last_value, nth_value, or an aggregate
	Args        []Expr
	Agg         *AggExpr // for an aggregate (count, sum, avg, min, max, ...)
	PartitionBy []Expr
	Order       []Expr
	OrderBy     []SortKey    // Idx into Order
	Frame       *WindowFrame // nil: the default frame
	T           Type
	Slot        int
}

// WindowFrame is a window's frame clause. Offsets are expressions without
// column references (constants, parameters, uncorrelated subqueries) that
// the executor evaluates once per statement: bigints for ROWS and GROUPS,
// for RANGE a value of the ORDER BY column's type (an interval for a
// timestamptz).
type WindowFrame struct {
	Mode       sql.FrameMode
	Start, End FrameBound
	Exclude    sql.FrameExclude
}

// FrameBound is one end of a WindowFrame.
type FrameBound struct {
	Kind   sql.BoundKind
	Offset Expr // BoundPreceding, BoundFollowing
}

func (e *WindowExpr) Type() Type { return e.T }

// String names the window by its slot: two windows never match each other
// (as ORDER BY matches select-list expressions).
func (e *WindowExpr) String() string {
	var b strings.Builder
	if e.Agg != nil {
		b.WriteString(e.Agg.String())
	} else {
		b.WriteString(e.Name + "(")
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.String())
		}
		b.WriteString(")")
	}
	b.WriteString(" OVER (#" + strconv.Itoa(e.Slot) + ")")
	return b.String()
}
