// Package planner turns a parsed statement (sql.Stmt) and the catalog into
// a typed plan the executor runs. It owns type checking (binding column
// names, inferring parameter types from context as PostgreSQL does, casts),
// the validation of read options (a topic's and its consumers' options
// are package topicopts', which topic DDL calls), the shapes of FROM
// (a topic, a sys or pg_catalog view, a subquery or WITH query, VALUES, a
// set operation, a join, a WITH RECURSIVE query and, in its recursive
// term, its work table: recursive.go), subquery expressions (planned on their own;
// uncorrelated ones are listed in SelectPlan.Subqueries and run once, a
// correlated one reads the row around it through OuterRefs and runs per
// row), and the plan tree the executor runs.
//
// A SelectPlan is the bound query block. Once the whole statement is
// planned, tree.go builds each block's tree of nodes (nodes.go; the
// block's Tree): logical lays the block out without shortcuts (source,
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
//     inner or cross join, the WHERE terms over both sides: fromJoin
//     collects them, so FROM a, b, c WHERE a.k = b.k AND b.k = c.k has
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
// Before the tree, fromJoin plans each join input on its own and pushes
// WHERE terms over one side into that side (bounding its scan);
// rewriteAgg splits a grouped query into an aggregation and a projection
// over its output; extractRefs turns the WHERE of a shared-consumer ack
// into explicit (partition, offset) references, refusing any shape that
// could match more than the client named. EXPLAIN's options are checked
// here (ExplainPlan) and its output describes the nodes (Node.Describe).
//
// Values (types, parsing, formatting, casts, numeric arithmetic) are
// sql/values'; the planner uses them to type expressions and fold
// constants, and aliases Type and its constants (valuetypes.go) because
// its plan structs name them everywhere. It does not convert values at
// run time: the executor does, with the same package.
//
// Invariants: the planner never touches storage (it only asks the Catalog
// for topic definitions); every user error it returns carries a SQLSTATE;
// plans and their trees are immutable once built, so a prepared
// statement's plan can be executed many times and EXPLAIN prints the tree
// that runs; each scalar builtin is declared once, in catalog.Builtins
// (signature, NULL handling, ID; package planner/catalog also declares the
// system views, the OIDs and pg_proc), and a bound call carries its declaration
// (FuncExpr.Fn), whose ID keys eval's implementation (eval panics at init
// unless every declaration has exactly one implementation and every
// implementation a declaration).
package planner
