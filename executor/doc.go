// Package executor runs plans. It implements wire.Handler (Engine) and
// wire.Session (Session): the wire layer hands it query text and bind
// values, it parses (sql), plans (planner) and runs the plan against the
// store (topicstore) as row iterators (rowexec). Every transaction belongs to txn:
// a Session holds a txn.Conn and asks it to begin, end, guard and commit;
// the executor never commits to the store itself and never maps a store
// error to a SQLSTATE itself (txn.StoreError).
//
// Layers inside the package:
//   - engine.go, session.go, portal.go: the wire.Handler/Session/Statement/
//     Portal implementations; the statement lifecycle (inStatement: every
//     statement's, a pipeline's deferred INSERT's too, with
//     withStatementTimeout the one place statement_timeout is set up).
//     The session is its transactions' txn.Listener (txnListener): txn
//     asks it before each commit (consume.Reader.CheckHeld) and tells it
//     when each transaction ended, and what the session kept of the
//     transaction (handoff holds, the block's cursors) follows then. block.go: when a
//     block begins and ends (explicit, the implicit one of a
//     multi-statement query, ended at Sync) and what the session keeps of
//     it besides txn's state: SET LOCAL scope, cursors, the savepoints'
//     settings and cursors. pipeline.go: the extended protocol's
//     statements up to Sync as one implicit transaction, opened lazily (a
//     lone Bind/Execute/Sync still commits as autocommit). cursor.go:
//     DECLARE/FETCH/MOVE/CLOSE, and cursors and protocol portals as one
//     namespace. present.go: presentRow, which readies a result's values
//     for the wire in the session's TimeZone and DateStyle.
//   - Run-time parameters are package settings' (internal/settings):
//     their table, values and scopes (SET LOCAL, a block's SETs, a
//     savepoint's), as PostgreSQL 15 has them, the startup packet's, and
//     what is reported (ParameterStatus, pg_settings, SHOW ALL). The
//     session holds one settings.Settings, which engine.go makes from
//     the startup packet (CheckStartup, New); portal.go runs SET, RESET
//     and SHOW through it and brackets an autocommit statement with it,
//     block.go takes it through the block (Begin, Commit, Rollback, a
//     savepoint's Snapshot). roles.go is its glue to the session's
//     identity: setIdentity runs SET ROLE and SET SESSION AUTHORIZATION
//     once authz allowed them (SetTrusted), identityApplied is the hook
//     through which the settings move the identity when role or
//     session_authorization takes a value, and noteSuperuser keeps
//     is_superuser (SetInternal).
//   - host.go: sessionHost, the session as rowexec.Host. Package rowexec
//     runs the plan's rows: it opens each plan node as one row iterator,
//     evaluates expressions with an execution's rowexec.EvalCtx (which
//     every statement here is run with) and charges what it materializes
//     to the statement's memory budget. It asks the session through Host
//     for the store, the memory limit, the read counters, the settings
//     and catalog eval reads, and to open the two node kinds only the
//     session can: a read as a consumer (the session's consume.Reader) and a
//     system or pg_catalog view (views.go), which takes the statement's
//     read point first (rowexec.EvalCtx.TakeReadPoint).
//   - Value logic (comparing, arithmetic, numeric's decimals, parsing,
//     formatting and casts, COPY's binary fields) is sql/values';
//     evaluating an expression, the builtins and the text and jsonb
//     operators are package eval's.
//   - insert.go, copy.go: the one write route of every INSERT and COPY
//     (alone, in a block, pipelined, or reading a consumer): messages
//     built, staged in the statement's transaction (inWriteTxn, stage),
//     which in autocommit is the statement's own, committed at its end
//     (a pipelined INSERT stages or commits at the client's next
//     message). throttle.go:
//     after a commit the session waits the write-speed delay the store
//     decided (CommitResult.Throttle) on a timer and the statement's
//     context; a wait cut short still succeeds, with a WARNING. copy.go:
//     COPY FROM's rows, which package copyio decodes (in the session's
//     DateStyle order), take that route; COPY ... TO STDOUT runs its
//     query and sends its rows as copyio encodes them.
//   - Topic consumption is package consume: the session owns a
//     consume.Reader (session.rd) and the engine the registry of consumer
//     groups (consume.Groups, Options.ReadSessionIdle and
//     Options.HandoffGrace). host.go hands it the plan's consumer read;
//     portal.go gives each row-returning statement a consume.Delivery,
//     settled (Finish) once its rows reached the client or abandoned,
//     sends the rows a read encoded straight from the store in one write
//     (consume.Encoded), and runs shared-consumer actions and UPDATE
//     sys.consumers through it; the session's WaitDurable is the
//     Reader's, and Close leaves its read sessions.
//   - ddl.go: topic DDL (with a NOTICE for a dead_letter_queue that does
//     not exist). explain.go: EXPLAIN prints the
//     tree that runs, as text or JSON, with what it asks the session
//     about a consumer read (the partitions it would hold, from where:
//     consume.Reader.ExplainProps, moving nothing); EXPLAIN ANALYZE runs
//     the query through the same rowexec.Run with each node's rows, loops
//     and time counted (rowexec.NodeStats), a
//     consumer read reading without joining, committing or locking.
//   - views.go: the session's side of the system views and /metrics.
//     Package sysview makes the sys views' rows, package pgcatalog the
//     pg_catalog tables' (from the session's database, user, settings and
//     cursors, handed in as a pgcatalog.Source), package metrics keeps
//     the engine's counters (a few atomic adds per statement) and writes
//     them when /metrics is scraped (WriteMetrics). The executor hands
//     them what only it knows: its sessions' published state and the
//     partitions its read groups hold (viewsLocal, the engine as
//     sysview.Local).
//   - audit.go: the audit log's records (Options.Auditor; nil, off, at
//     the cost of one nil check per statement). A portal's first Execute
//     takes who runs it, its class (pgaudit's) and objects
//     (plantree.Accesses, DDL's topics, GRANT's objects); the Execute that
//     ends it (or DeferredTag, for a pipelined INSERT) adds the command,
//     the outcome and the text, formatted from the syntax tree with
//     passwords redacted, and writes it before the client is answered.
//
// Invariants: every user error carries a SQLSTATE (pgerror); a panic while
// executing a statement becomes an internal error for that statement only;
// a statement either publishes all its messages or none; no consumer
// position moves past rows that did not reach the client; a statement's
// first topic or view scan waits at the store's read point when it has
// one (topicstore.ReadBarrier, rowexec.EvalCtx.TakeReadPoint), so it
// sees every commit acknowledged before it through any gateway; the
// package never touches Pebble keys.
package executor
