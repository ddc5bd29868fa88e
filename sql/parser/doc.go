// Package parser turns query text into the sql package's typed AST
// (sql.Stmt, sql.Expr). It owns parsing only: it executes nothing, knows
// no catalog and validates no option names or values (the planner does);
// errors are *pgerror.Error with PostgreSQL's SQLSTATE codes (42601
// syntax, 0A000 unsupported, ...) and a 1-based character Position where
// known.
//
// Two front ends produce the same AST:
//
//   - pg_query (github.com/pganalyze/pg_query_go, PostgreSQL's own grammar)
//     parses every PostgreSQL statement (SELECT, INSERT, UPDATE, DELETE,
//     COPY, BEGIN/COMMIT/ROLLBACK, SET/SHOW, EXPLAIN, ...), so clients get
//     PostgreSQL's exact syntax and error messages; convert*.go map its
//     protobuf tree onto the AST and reject what topicgate does not support
//     (NATURAL, RIGHT and FULL joins, data-modifying WITH, ROWS FROM, ...)
//     with 0A000 naming the feature. LATERAL is supported: a LATERAL
//     subquery in FROM is marked TableRef.Lateral, and a function in FROM
//     is lateral whether written so or not (the planner resolves the
//     columns they name to their left).
//     A WITH query is inlined where it is named; a WITH RECURSIVE query
//     that names itself becomes a RecursiveCTE shared by its references,
//     its shape checked as PostgreSQL's checkWellFormedRecursion does
//     (convert_cte.go, 42P19).
//     The statements about roles and privileges (CREATE/ALTER/DROP ROLE,
//     GRANT, REVOKE, ALTER DEFAULT PRIVILEGES, ALTER TABLE ... OWNER TO,
//     REASSIGN/DROP OWNED) become the trees of sql/ast_auth.go
//     (convert_auth.go, convert_grant.go). What PostgreSQL checks only
//     when it runs them but needs no catalog is checked here, with its
//     messages: conflicting options, reserved role names, PUBLIC where a
//     role must be named, privilege types per kind of object. Objects
//     topicgate lacks (functions, databases, sequences, ...) are 0A000.
//   - a small hand-written lexer (lexer.go) and recursive-descent parser
//     (ddl.go) handle the topic DDL PostgreSQL's grammar lacks: CREATE TOPIC,
//     ALTER TOPIC (and ALTER TOPIC t OWNER TO role), DROP TOPIC, with YQL-style WITH (name = value) options and
//     YQL literals Interval('PT30S'), Datetime('...'), Timestamp('...')
//     (literal.go).
//
// Parse first lexes the whole string (quotes, dollar quotes and comments
// respected) and splits it at top-level semicolons; each statement goes to
// the front end its leading keywords select.
//
// Topic extensions inside otherwise-PostgreSQL statements are handled by a
// token pre-pass (prepass.go) before pg_query: WITH (...) read hints after a
// table name are cut out and attached to the TableRef, unquoted `offset`
// used as a column is quoted, `backquoted/names` become "quoted" ones, and
// YQL literals become constants. In GRANT, REVOKE and ALTER DEFAULT
// PRIVILEGES (prepass_auth.go) topicgate's object names become
// PostgreSQL's (TOPIC → TABLE, ALL TOPICS → ALL TABLES, TOPICS → TABLES,
// CONSUMER(S) → SEQUENCE(S), remembered so that the converter maps them
// back to consumers and refuses a SEQUENCE the user wrote) and YDB's
// SELECT ROW / UPDATE ROW become SELECT / INSERT. Edits are recorded so
// error positions still point into the original text.
//
// The cases of testdata/*.txt print each statement with sql.Format (go
// test ./sql/parser -rewrite regenerates them).
//
// Parse is safe for concurrent use; callers may cache its results, which
// must then be treated as immutable.
package parser
