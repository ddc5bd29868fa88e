// Package planner turns a parsed statement (sql.Stmt) and the catalog into
// a typed plan the executor runs: it is the builder of the plans whose
// types, trees and rules are package plantree's. It owns name resolution
// (the scope a query block binds column names in, and the scopes around
// it that a correlated subquery or a lateral item reaches: scope.go,
// lateral.go), the validation of read options (a topic's and its
// consumers' options are package topicopts', which topic DDL calls), the
// shapes of FROM (a topic, a sys or pg_catalog view, a subquery or WITH
// query, VALUES, a set operation, a join, a function, a WITH RECURSIVE
// query and, in its recursive term, its work table: recursive.go), and
// subquery expressions (planned on their own; uncorrelated ones are
// listed in SelectPlan.Subqueries and run once, a correlated one reads
// the row around it through OuterRefs and runs per row). The built-in
// objects a query names besides topics (system views, OIDs, pg_proc, the
// scalar builtins' declarations) are package catalog's.
//
// Typing the expressions of each clause is package scalar's: its Binder
// infers parameter types from context as PostgreSQL does, resolves
// operators, casts and function calls, and binds aggregates, window
// functions and set-returning calls where the clause allows them (the
// planner says which, clause by clause, and places what was bound). The
// Binder asks the planner for a column name's binding and a subquery's
// plan through scalar.Env, which scopeEnv implements over a Scope
// (binder.go).
//
// Build binds the statement into plantree's plan structs, then
// plantree.Finish builds each query block's tree of nodes and applies the
// rules (see package plantree).
//
// Before the tree, fromJoin plans each join input on its own and pushes
// WHERE terms over one side into that side (bounding its scan);
// rewriteAgg splits a grouped query into an aggregation and a projection
// over its output; placeWindows and collectSRFs place the window calls
// and list the set-returning calls scalar bound; extractRefs turns the
// WHERE of a shared-consumer ack into explicit (partition, offset)
// references, refusing any shape that could match more than the client
// named. EXPLAIN's options are checked here (ExplainPlan); its output
// describes plantree's nodes.
//
// Values (types, parsing, formatting, casts, numeric arithmetic) are
// sql/values'; scalar uses them to type expressions and fold constants,
// and the planner aliases Type and its constants (valuetypes.go, as
// plantree does; scalar names values.T... itself) because its code names them everywhere. It
// does not convert values at run time: the executor does, with the same
// package.
//
// Invariants: the planner never touches storage (it only asks the Catalog
// for topic definitions); every user error it returns carries a SQLSTATE;
// it imports its subpackages (plantree, catalog, scalar, topicopts),
// never the reverse; plans and their trees are immutable once Build
// returns, so a prepared statement's plan can be executed many times and
// EXPLAIN prints the tree that runs; each scalar builtin is declared
// once, in catalog.Builtins (signature, NULL handling, ID; package
// planner/catalog also declares the system views, the OIDs and pg_proc),
// and a bound call carries its declaration (plantree.FuncExpr.Fn), whose
// ID keys eval's implementation (eval panics at init unless every
// declaration has exactly one implementation and every implementation a
// declaration).
package planner
