// Package planner turns a parsed statement (sql.Stmt) and the catalog into
// a typed plan the executor runs. It owns type checking (binding column
// names, inferring parameter types from context as PostgreSQL does, casts),
// the validation of topic, consumer and read options, and the rewrite
// rules that shape a plan:
//
//   - pushDown moves partition, offset and written_at predicates of a
//     topic scan's filter into the scan's ranges, so a small read of a huge
//     topic seeks instead of scanning (the filter is kept, bounds only
//     narrow);
//   - naturalOrder drops an ORDER BY that asks for (partition, offset), the
//     order a scan produces anyway, so LIMIT can stop the scan early;
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
