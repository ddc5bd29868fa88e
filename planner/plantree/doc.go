// Package plantree holds what the planner builds and the executor runs:
// the plan structs of each kind of statement (plan.go: SelectPlan, the
// bound query block, and its joins, set operations, recursive queries,
// function scans, consumer reads; InsertPlan, CopyPlan, the DDL, cursor,
// shared-consumer and utility plans), the bound expressions (expr.go: Expr
// and its kinds, subqueries, window calls), a topic's message columns
// (columns.go), the plan tree's nodes (nodes.go, with what EXPLAIN says of
// each: explain.go), and the rules that rewrite the tree.
//
// A SelectPlan is the bound query block. Once the whole statement is
// planned, Finish (tree.go) builds each block's tree of nodes (nodes.go;
// the block's Tree): logical lays the block out without shortcuts (source,
// filter, aggregate with HAVING, windows, project or project-set,
// DISTINCT ON, sort, limit, with an init plan for the subqueries that run
// first), then the named rules of rules.go rewrite it, in the order its
// list gives (Rules reports it; tree_test.go pins it). Each rule is a file
// of its own, rule_<name>.go (the helpers only it uses with it), and has
// its cases in testdata/rules/<name>: queries in, their trees out with
// and without the rule, each case saying whether the rule fires
// (rules_test.go). Each chain rule runs over the whole chain, innermost
// node first, before the next rule starts:
//
//  1. pushdownBounds moves partition, offset and written_at predicates of
//     the filter right above a topic scan into the scan's ranges
//     (pushDown), so a small read of a huge topic seeks instead of
//     scanning (the filter is kept, bounds only narrow);
//  2. scanOrder drops a sort by partition and/or offset (either
//     direction) of the projection over a scan and hands the order to the
//     scan, which reads partitions newest first or merges them by offset,
//     so LIMIT stops it early (the tail of a topic reads a few messages
//     per partition);
//  3. extractJoinKeys splits a join's conditions (ON, USING and, for an
//     inner or cross join, the WHERE terms over both sides: the
//     planner's fromJoin collects them, so FROM a, b, c WHERE a.k = b.k AND b.k = c.k has
//     keys) into equality keys and a residual, and makes a join with keys
//     a hash join (the rest stay nested loops; a LATERAL join is its own
//     node, which no rule rewrites);
//  4. chooseHashJoin names a cross join that found keys (from WHERE) an
//     INNER hash join;
//  5. pushdownFilter moves the filter right above a topic scan into the
//     scan, which evaluates it on each message as it reads it;
//  6. streamScan makes the projection right above a topic scan the scan's
//     own output, so the scan streams the query's rows;
//  7. topN turns LIMIT over a sort into a top-N sort that keeps only
//     LIMIT (+ OFFSET) rows;
//  8. pushdownLimit moves LIMIT/OFFSET right above a streaming scan into
//     the scan, which stops reading once it has them (it runs after topN,
//     so it only sees a LIMIT with no sort left between it and the scan:
//     none was asked for, or scanOrder removed it);
//  9. cacheCorrelatedSubqueries, a rule over the whole block that runs
//     after the chain rules, lets the executor keep each correlated
//     subquery's results by the outer values it reads, unless it calls a
//     volatile function.
//
// The executor runs a block's Tree through package rowexec, which opens
// each node (a type switch in rowexec/run.go) and evaluates expressions
// with package eval.
//
// Invariants: the package is below the planner (it imports sql, values,
// pgerror, topicstore's types and planner/catalog, never the planner, so
// the builder and the rules cannot call each other back); the builder sets
// what is unexported only through constructors (NewParam, NewSubquery) and
// ParamExpr.Infer while it binds; plans and their trees are immutable once
// Finish has built them, so a prepared statement runs the same tree every
// time and EXPLAIN prints the tree that runs; each rule is a file of its
// own with its cases in testdata/rules/<name> (rules_test.go checks there
// is one file per rule, and that each has a case where it fires and one
// where it does not).
package plantree
