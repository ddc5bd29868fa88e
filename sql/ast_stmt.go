package sql

// The AST's statements (Stmt) and their clauses.

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
