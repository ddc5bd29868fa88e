// Package catalog declares the built-in objects a query names besides
// topics: the system views (the sys schema's views and the pg_catalog
// tables psql and drivers read: their columns and types, views.go), the
// OIDs of the emulated catalog (schemas, sys views, topics, pg_catalog
// tables: oids.go), pg_proc's rows (pgproc.go), the names 'x'::regclass,
// 'x'::regproc and 'x'::regtype resolve, and the scalar builtin
// functions (Builtins: signature, NULL handling, ID; builtins.go and
// builtins_common.go). The planner binds names and calls against these
// declarations; packages sysview and pgcatalog produce the views' rows
// and package eval implements each builtin by its declaration's ID.
//
// Invariants: it is a leaf (it imports sql/values, pgerror and
// topicstore's types, never the planner, the executor or eval, and never
// touches storage); every error it returns carries a SQLSTATE; each
// scalar builtin is declared exactly once (declareBuiltins panics at init
// on a name declared twice), and its ID is its index in BuiltinList, the
// names in order; a sys view's OID never changes when a view is added
// (SysViewNames numbers added views after the first set).
package catalog
