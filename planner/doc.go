// Package planner turns a parsed statement (sql.Stmt) and the catalog into
// a typed plan the executor runs. It owns type checking (binding column
// names, inferring parameter types from context as PostgreSQL does, casts),
// the validation of topic, consumer and read options, the shapes of FROM
// (a topic, a sys or pg_catalog view, a subquery or WITH query, VALUES, a
// set operation, a join, a WITH RECURSIVE query and, in its recursive
// term, its work table: recursive.go), subquery expressions (planned on their own;
// uncorrelated ones are listed in SelectPlan.Subqueries and run once, a
// correlated one reads the row around it through OuterRefs and runs per
// row), and the rewrite rules
// that shape a plan:
//
//   - pushDown moves partition, offset and written_at predicates of a
//     topic scan's filter into the scan's ranges, so a small read of a huge
//     topic seeks instead of scanning (the filter is kept, bounds only
//     narrow);
//   - scanOrder drops an ORDER BY by partition and/or offset (either
//     direction) and hands the order to the scan, which reads partitions
//     newest first or merges them by offset, so LIMIT stops it early (the
//     tail of a topic reads a few messages per partition);
//   - fromJoin plans each join input on its own, pushes WHERE terms over
//     one side into that side (bounding its scan) and splits ON into hash
//     keys and a residual condition;
//   - rewriteAgg splits a grouped query into an aggregation and a
//     projection over its output;
//   - extractRefs turns the WHERE of a shared-consumer ack into explicit
//     (partition, offset) references, refusing any shape that could match
//     more than the client named.
//
// Invariants: the planner never touches storage (it only asks the Catalog
// for topic definitions); every user error it returns carries a SQLSTATE;
// plans are immutable once built, so a prepared statement's plan can be
// executed many times; the executor's builtin table and Builtins name the
// same functions (a test checks it).
package planner
