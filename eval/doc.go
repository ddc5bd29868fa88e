// Package eval evaluates the planner's expressions (plantree.Expr) over a
// row, with sql/values' value logic, and implements the builtin functions
// package planner/catalog declares (catalog.Builtins), by family, and the
// operators over text and jsonb.
//
// Files:
//   - expr.go: Expr, the evaluator: one switch over the expression kinds,
//     three-valued logic, casts (in the session's DateStyle), builtin
//     calls. What it needs of the running statement is Env (parameters,
//     the outer row of a correlated subquery, subqueries' results, the
//     current values of set-returning calls), which rowexec implements
//     (rowexec.EvalCtx): subqueries and set-returning functions run
//     plans, so they stay there. jsonops.go: jsonb's -> ->> #> #>> ? ?| ?& @> <@; a
//     topic message's attributes are read straight from the message
//     (AttrsRow).
//   - builtins.go: the registry. init merges the families' maps and keys
//     each implementation by its declaration's ID; it panics if the
//     implemented names and catalog.Builtins differ, so a binary whose
//     two sets diverge never starts; call runs one planned call.
//   - context.go: Context, what a builtin reads of the statement running
//     it (its timestamp, the session's TimeZone, settings, user and
//     database, the catalog's relations); rowexec.EvalCtx implements it,
//     with what the executor's session tells it.
//   - string_builtins.go, math_builtins.go, datetime_builtins.go (and
//     tochar.go, to_char's templates), json_builtins.go,
//     array_builtins.go, system_builtins.go (session information and
//     settings), catalog_builtins.go (what psql's describe commands call),
//     generator_builtins.go (the set-returning functions, as Generators
//     rowexec steps).
//   - compare.go, like.go: the comparison operators, LIKE/ILIKE as
//     PostgreSQL's like_match.c matches and the regular expression
//     matches.
//
// Invariants: a builtin never panics on any argument of its declared
// types (client input reaches them directly; TestBuiltinsNeverPanic); every
// user error carries a SQLSTATE (pgerror); a builtin reaches the session
// only through Context, an expression only through Env. The package
// imports planner/plantree, planner/catalog, sql and topicstore's types,
// never the executor or rowexec.
package eval
