// Package scalar binds scalar expressions: it turns an expression of the
// sql syntax tree into plantree's bound and typed expression, as
// PostgreSQL's parse analysis does for the expressions of a statement. It
// owns type checking and type inference: an untyped literal or parameter
// takes its type from the context, and operators (comparison, arithmetic,
// concatenation, jsonb's), casts (regtype, regclass and regproc names
// included), the common type of CASE, COALESCE, NULLIF and VALUES, IN,
// BETWEEN, ANY and ALL, LIKE and the regular expression matches, arrays
// and subscripts resolve as PostgreSQL resolves them. It resolves a
// function call against catalog.Builtins, and binds the calls only some
// clauses may hold: aggregates, window functions with their frames, and
// set-returning functions, which a Binder allows clause by clause
// (AllowAgg, AllowWindow, AllowSRF) and collects (Aggs, Windows) for the
// statement planner. A subquery of an expression is typed here (EXISTS,
// a scalar, IN, ARRAY) and planned by the statement planner.
//
// What only the statement planner knows, the Binder asks through Env,
// which this package declares and package planner implements: the binding
// of a column name (the scope of FROM, the row around a correlated
// subquery or a lateral item), the plan of a subquery, the record that an
// expression calls a volatile function, and the topics 'name'::regclass
// may name. Scopes, the shapes of FROM, the grouping's rewrite, the
// placing of windows and the listing of set-returning calls are package
// planner's.
//
// Invariants: this package imports plantree, catalog, sql, sql/pgerror
// and sql/values, never package planner (Env is its only way back), and
// it neither plans statements nor touches storage. Every user error it
// returns carries a SQLSTATE, and Bind gives it the position of the
// expression it concerns unless a deeper one set its own. When the
// context wants a type, an untyped literal or parameter leaves Bind with
// that type. A parameter's type is inferred into the params slice the
// Binder shares with the statement and the subqueries in it, once: the
// first use that gives it a type decides, and a later use does not change
// it. A call of a scalar builtin carries its declaration
// (plantree.FuncExpr.Fn), the one of catalog.Builtins.
package scalar
