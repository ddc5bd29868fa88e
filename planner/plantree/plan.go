package plantree

import (
	"topicgate/sql"
	"topicgate/topicstore"
)

// Column is a result column.
type Column struct {
	Name string
	T    Type
	// OID, when not 0, is the type OID clients are told instead of T's:
	// varchar and bpchar, which run as text here but which PostgreSQL
	// reports under their own OIDs (pgjdbc's getColumnTypeName, say).
	OID uint32
	// Param, when not 0, says the column is parameter $Param itself: its
	// declared type (pgjdbc's varchar) is the column's, as in PostgreSQL.
	Param int
}

// TypeOID is the type OID clients are told for c (see OID).
func (c Column) TypeOID() uint32 {
	if c.OID != 0 {
		return c.OID
	}
	return c.T.OID()
}

// Plan is a planned statement. Params holds the inferred parameter types
// (one per $n, exactly as many as the statement uses).
type Plan interface {
	Columns() []Column
}

// Bound is one side of an offset range pushed into a scan.
type Bound struct {
	X         Expr
	Inclusive bool
}

// MsgScan reads a topic's messages, partition by partition in offset order.
// The bounds are evaluated once per execution (they may hold parameters);
// the Filter above the scan is still applied, so bounds only narrow.
type MsgScan struct {
	Topic        string
	Partitions   []Expr // partition = / IN values; nil = all partitions
	PartArray    Expr   // partition = ANY($n)
	Lo, Hi       []Bound
	MinWrittenAt []Bound
	// NeedData is set when the data column is used (bodies are decoded only
	// then).
	NeedData bool
	// Order is the order the scan produces its rows in, when an ORDER BY
	// asked for one a scan can produce without sorting (rule scanOrder).
	Order ScanOrder
	// Used are the message columns the statement names (bit i: MsgCol
	// i), what a role with only column privileges needs SELECT on.
	Used uint64
}

// ScanOrder is an order of a topic scan's rows. The zero value is the
// natural one: partitions ascending, each in ascending offsets.
type ScanOrder struct {
	PartDesc   bool // partitions in descending IDs
	OffsetDesc bool // each partition newest first
	// Merge interleaves the partitions by offset (ORDER BY offset alone)
	// instead of reading them one after another.
	Merge bool
}

// String describes the order for EXPLAIN.
func (o ScanOrder) String() string {
	dir := func(desc bool) string {
		if desc {
			return "DESC"
		}
		return "ASC"
	}
	if o.Merge {
		return "offset " + dir(o.OffsetDesc) + ", partitions merged"
	}
	return "partition " + dir(o.PartDesc) + ", offset " + dir(o.OffsetDesc)
}

// SysScan produces the rows of a system view (sys.topics, ...).
type SysScan struct {
	View  string
	Names []string
	Types []Type
}

// SortKey orders by output column Idx (visible or hidden).
type SortKey struct {
	Idx        int
	Desc       bool
	NullsFirst bool
}

// AggSpec groups the filtered input rows. The aggregated row layout is
// GroupBy values followed by one value per Aggs element.
type AggSpec struct {
	GroupBy []Expr
	Aggs    []*AggExpr
}

// SelectPlan is a query: source -> filter -> [aggregate -> having] ->
// project -> sort -> offset/limit. Project has len(Cols) visible
// expressions followed by hidden sort-only expressions.
type SelectPlan struct {
	Scan    *MsgScan // nil unless reading a topic
	Sys     *SysScan // nil unless reading a system view
	Filter  Expr
	Agg     *AggSpec
	Having  Expr
	Project []Expr
	Cols    []Column
	Sort    []SortKey
	// DistinctOn lists the output columns (visible or hidden) of DISTINCT
	// ON: one row per distinct combination, the first in Sort's order.
	DistinctOn []int
	Limit      Expr
	Offset     Expr
	// Hints are the WITH (...) options of the FROM item.
	Hints []sql.Option
	// Consumer is set for a read as a named consumer.
	Consumer *ConsumerRead
	// Sub is a derived table the plan reads (a subquery in FROM or a WITH
	// query), Values a VALUES list; their rows are the input, as a topic's
	// messages are for Scan.
	Sub    *SelectPlan
	Values [][]Expr
	SetOp  *SetOpPlan
	Join   *JoinPlan
	Func   *FuncScan // a set-returning function in FROM
	// Recursive is a WITH RECURSIVE query the plan reads; Work, inside
	// its recursive term, the previous iteration's rows.
	Recursive *RecursivePlan
	Work      *WorkTable
	// Windows are the window functions of the select list and ORDER BY,
	// computed over the filtered input rows into columns Slot (after the
	// input's own columns).
	Windows []*WindowExpr
	// SRFs are the set-returning calls of Project (FuncExpr.Set), run in
	// lockstep per input row before sorting (srf.go).
	SRFs []*FuncExpr
	// Subqueries are the subqueries of the plan's expressions, run before
	// the plan reads anything.
	Subqueries []*SubqueryExpr
	// Tree is the block's plan tree (tree.go), built once the whole
	// statement is planned; the executor runs it and EXPLAIN prints it.
	Tree Node
}

// Columns implements Plan.
func (p *SelectPlan) Columns() []Column { return p.Cols }

// InsertPlan writes messages to a topic. Rows (VALUES) or Select (INSERT
// ... SELECT) provide one value per element of Cols.
type InsertPlan struct {
	Topic  string
	Cols   []MsgCol
	Rows   [][]Expr
	Select *SelectPlan
}

// Columns implements Plan.
func (p *InsertPlan) Columns() []Column { return nil }

// CopyPlan is COPY topic (cols) FROM STDIN.
type CopyPlan struct {
	Topic string
	Cols  []MsgCol
	Opts  sql.CopyFrom
}

// Columns implements Plan.
func (p *CopyPlan) Columns() []Column { return nil }

// CopyOutPlan is COPY ... TO STDOUT: the rows of Select in a COPY format.
// Opts.Query is not used (Select is its plan).
type CopyOutPlan struct {
	Select *SelectPlan
	Opts   sql.CopyTo
}

// Columns implements Plan: COPY returns no row description.
func (p *CopyOutPlan) Columns() []Column { return nil }

// CreateTopicPlan creates a topic.
type CreateTopicPlan struct {
	Config      topicstore.TopicConfig
	IfNotExists bool
}

// AlterTopicPlan alters a topic: Apply edits a copy of its config.
type AlterTopicPlan struct {
	Name     string
	IfExists bool
	Apply    func(*topicstore.TopicConfig) error
	// Split, when >= 0, is the partition SPLIT PARTITION splits (the only
	// action of its statement; Apply is nil then).
	Split int32
}

// DropTopicPlan drops topics.
type DropTopicPlan struct {
	Names    []string
	IfExists bool
}

// UtilityPlan is a statement the session handles itself (transaction
// control, SET, SHOW, DISCARD, empty query).
type UtilityPlan struct {
	Stmt sql.Stmt
	Cols []Column
}

// ExplainPlan describes Inner: its plan tree, as text or JSON; with
// Analyze the executor runs Inner and reports each node's rows (and,
// with Timing, its time).
type ExplainPlan struct {
	Inner   Plan
	Analyze bool
	Timing  bool
	JSON    bool
}

func (p *CreateTopicPlan) Columns() []Column { return nil }
func (p *AlterTopicPlan) Columns() []Column  { return nil }
func (p *DropTopicPlan) Columns() []Column   { return nil }
func (p *UtilityPlan) Columns() []Column     { return p.Cols }
func (p *ExplainPlan) Columns() []Column     { return []Column{{Name: "QUERY PLAN", T: TText}} }

// JoinPlan joins two inputs. Each input is a plan of its own (SELECT *
// over a topic, a view, a subquery, a VALUES list or another join), so a
// chain of joins is a left-deep tree. Rows are the left input's columns
// followed by the right input's.
//
// Conds are the join's conditions over the joined row: ON (and USING)
// and, for an inner or cross join, the WHERE terms that read both sides
// (still applied above the join too). The rules extractJoinKeys and
// chooseHashJoin (rule_extract_join_keys.go, rule_choose_hash_join.go)
// split them into hash keys and a residual.
type JoinPlan struct {
	Kind                  string // INNER, LEFT or CROSS
	Left, Right           *SelectPlan
	LeftWidth, RightWidth int
	Conds                 []Expr
	// Lateral: Right reads the left row (lateral.go), so it runs again for
	// each left row and nothing is held; every condition is a residual.
	Lateral bool
}

// FuncScan is a function in FROM. Call is a set-returning call (a
// FuncExpr with Set, bound as in the select list: its rows) or a scalar
// expression (one row, as PostgreSQL gives for upper('x') in FROM). Cols
// are the function's columns (one, or jsonb_each's key and value) and,
// WITH ORDINALITY, a last bigint column numbering the rows from 1.
//
// The arguments may read the FROM items to the function's left (a
// lateral reference, see JoinPlan.Lateral) and the query around a
// subquery, both through OuterRefs.
type FuncScan struct {
	Call       Expr
	Cols       []Column
	Ordinality bool
}

// Name is the function's name.
func (fs *FuncScan) Name() string {
	if f, ok := fs.Call.(*FuncExpr); ok {
		return f.Name
	}
	return fs.Call.String()
}

func (fs *FuncScan) String() string {
	s := fs.Call.String()
	if fs.Ordinality {
		s += " WITH ORDINALITY"
	}
	return s
}

// RecursivePlan is a WITH RECURSIVE query, NonRec UNION [ALL] Rec: the
// executor runs NonRec, then Rec over the rows of the previous iteration
// (Work) until an iteration yields no row; without All, a row equal to any
// row already produced is discarded. Both terms have the columns of Work.
type RecursivePlan struct {
	NonRec, Rec *SelectPlan
	All         bool
	Work        *WorkTable
}

// WorkTable is the relation a recursive term reads its query through: the
// rows of the previous iteration. Each planned RecursivePlan has its own,
// so an execution keys the running iteration's rows by it.
type WorkTable struct {
	Name string
	Cols []Column
}

// ConsumerRead is a read as a named consumer: SELECT ... FROM t WITH
// (CONSUMER = c, ...). Option values are expressions (constants or
// parameters) evaluated once per execution; nil means not given.
type ConsumerRead struct {
	Topic    string
	Consumer string
	Shared   bool
	// Wait long-polls up to this interval for at least one message.
	Wait Expr
	// MaxBytes caps the bytes of data returned (at least one message is
	// always returned).
	MaxBytes Expr
	// ReadFrom skips messages written before this time.
	ReadFrom Expr
	// MaxLag skips messages written more than this interval ago.
	MaxLag Expr
	// Partitions restricts the read to these partitions (text '0,2').
	Partitions Expr
	// MaxInFlight is partition_max_in_flight_bytes.
	MaxInFlight Expr
	// ProcessingTimeout is the lock duration for shared consumers.
	ProcessingTimeout Expr
}

// DeclareCursorPlan is DECLARE name CURSOR [WITH HOLD] FOR query: a
// stateless read (a topic, a system view, VALUES, ...) whose rows FETCH
// hands out. A read as a consumer moves positions and holds partitions,
// which a cursor left open across statements must not do: 0A000.
type DeclareCursorPlan struct {
	Name  string
	Hold  bool
	Query *SelectPlan
}

// FetchPlan is FETCH or MOVE on a cursor of the session. Its columns are
// the cursor's, which only the session knows (Cols is nil here).
type FetchPlan struct {
	Fetch sql.Fetch
	Cols  []Column
}

// CloseCursorPlan is CLOSE name or CLOSE ALL.
type CloseCursorPlan struct{ Close sql.CloseCursor }

func (p *DeclareCursorPlan) Columns() []Column { return nil }

func (p *FetchPlan) Columns() []Column { return p.Cols }

func (p *CloseCursorPlan) Columns() []Column { return nil }

// SetPositionPlan is UPDATE sys.consumers SET committed_offset = v WHERE
// ...: it moves the committed offset of every (topic, consumer, partition)
// row the filter selects.
type SetPositionPlan struct {
	Filter Expr // over sys.consumers columns; nil = every row
	Offset Expr // may use the row's columns, e.g. end_offset
}

// Columns implements Plan.
func (p *SetPositionPlan) Columns() []Column { return nil }

// RefGroup selects messages of one partition: Partition = value and offset
// in Offsets (each a scalar) or in the array OffsetArray.
type RefGroup struct {
	Partition   Expr
	Offsets     []Expr
	OffsetArray Expr
}

// SharedActionPlan acknowledges, releases, rejects or extends messages a
// session holds from a shared consumer:
//
//	DELETE FROM t WITH (CONSUMER = w) WHERE partition = $1 AND offset = ANY($2)   -- ack
//	UPDATE t WITH (CONSUMER = w) SET locked_until = NULL WHERE ...                -- release
//	UPDATE t WITH (CONSUMER = w) SET state = 'released' WHERE ...                 -- release
//	UPDATE t WITH (CONSUMER = w) SET state = 'rejected' WHERE ...                 -- reject
//	UPDATE t WITH (CONSUMER = w) SET locked_until = now() + Interval('PT60S') WHERE ...  -- extend
type SharedActionPlan struct {
	Topic, Consumer string
	Action          topicstore.SharedAction
	Until           Expr // extend
	Refs            []RefGroup
}

// Columns implements Plan.
func (p *SharedActionPlan) Columns() []Column { return nil }
