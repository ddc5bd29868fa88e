// Package pgcatalog makes the rows of the emulated PostgreSQL catalog:
// the pg_catalog tables psql's describe commands and drivers read
// (pg_class, pg_attribute, pg_type, pg_namespace, pg_proc, pg_settings,
// pg_cursors, ...), and the relation an OID names for eval's catalog
// functions (Relation). Topics are tables (relkind 'r') of the public
// schema, the sys views are views of a sys schema that is not on the
// search path, and every column of a topic is a message column.
//
// It is its own package, not sysview's, because its job is another: it
// mimics PostgreSQL 15's catalog for clients that know PostgreSQL, where
// sysview shows topicgate's own state. Package planner/catalog declares
// both kinds of view (their columns, the OIDs); this package and sysview
// produce their rows, which the executor hands to rowexec as a view
// scan's.
//
// Files:
//   - tables.go: Rows, one case per table, from a Source (the session's
//     database, user, settings and cursors, and the store's topics,
//     passed in by the executor); catalogRow lays out a row in its
//     table's column order, with PostgreSQL's zero values for the columns
//     topicgate has nothing for.
//   - relations.go: the relations of pg_class (topics, then the built-in
//     views by OID) and Relation.
//   - types.go: pg_type's rows, the types topic and view columns have and
//     the ones psql's queries cast to, with their input functions.
//
// Invariants: a row has its table's columns (catalog.PgCatalogViews), in
// order; OIDs are planner/catalog's (a topic's is OIDFirstTopic plus its
// store ID, a sys view's never changes); the package only reads what it
// is given and never imports the executor.
package pgcatalog
