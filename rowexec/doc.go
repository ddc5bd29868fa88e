// Package rowexec runs a query's rows: it opens each node of a plan tree
// (plantree.Tree) as exactly one row iterator (Iter) and steps them. The
// executor calls Run for every query block of a statement (a SELECT, an
// INSERT ... SELECT, COPY (query) TO, a cursor, EXPLAIN ANALYZE) with the
// statement's EvalCtx, and reaches nothing else of it but the rows
// (Rows, MsgRow, EvalCtx.Eval).
//
// Files:
//   - run.go: Run, and open, the one switch from plan node to iterator;
//     the strategy is the node, nothing is decided here. The two node
//     kinds only the session can open, a read as a consumer and a system
//     or pg_catalog view, it hands to Host.Open. host.go: Host, what the
//     package asks of the session running the statement (the executor
//     implements it): the store, the memory limit, the read counters, the
//     settings and catalog eval reads, and that Open.
//   - eval.go: EvalCtx, one execution of a statement: what its
//     expressions read besides the row (eval.Expr) and what its blocks
//     share; evalctx.go: EvalCtx implements eval.Env (parameters, the
//     statement's time, the session's settings and catalog through Host,
//     subqueries' results, set-returning calls' values).
//   - select.go, msgrow.go: a topic scan node streams partition by
//     partition in offset order, with the pushed-down bounds as scan
//     ranges and the filter, projection and LIMIT the planner fused into
//     it applied while scanning, each message a MsgRow whose columns are
//     computed when read, so reading a few rows from a huge topic touches
//     few messages. ordered.go reads partitions newest first or merged by
//     offset for the orders the planner hands to the scan. headers.go:
//     the headers column's jsonb form of a Kafka record's headers
//     (HeadersJSON) and its parser for INSERT and COPY (ParseHeaders).
//   - agg.go (aggregation), window.go (windows), topn.go (sorts, top-N,
//     DISTINCT ON), join.go (hash and nested-loop joins), subquery.go
//     (subquery expressions, an init plan running the uncorrelated ones
//     before its input starts; VALUES and set operations), lateral.go (a
//     LATERAL right side, run per left row), recursive.go (WITH RECURSIVE,
//     iteration by iteration over a work table, its rows streamed),
//     srf.go, funcscan.go (set-returning calls, eval's Generators, stepped
//     in a select list and in FROM).
//   - querymem.go: the statement's memory budget; stats.go: EXPLAIN
//     ANALYZE's per-node rows, loops and time (NodeStats), counted by
//     open when an EvalCtx carries them (WithStats).
//
// Invariants: every materialization (a sort, a hash join's right side, a
// group, a window's partition, a set operation's or DISTINCT's keys, a
// recursive union's rows, a subquery's result) is charged to the
// statement's one memory budget, shared by all its blocks, and fails
// with 54000 past --max-query-mib; a correlated subquery's run and a
// lateral right side charge a sub-budget they give back when they end; a
// top-N sort keeps only LIMIT (+ OFFSET) rows. A statement's first topic
// or view scan waits at the store's read point when it has one
// (topicstore.ReadBarrier: TakeReadPoint), once. A MsgRow's values
// outlive the store's Scan callback. Every user error carries a SQLSTATE
// (pgerror; store errors through txn.StoreError). The package imports
// planner/plantree, eval, sql, topicstore, txn (its errors) and wire (the
// row encoder a consumer read may write into), never the executor.
package rowexec
