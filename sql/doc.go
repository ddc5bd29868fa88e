// Package sql is topicgate's typed SQL syntax tree: the Stmt and Expr
// interfaces, literals, options and FROM items (ast.go), the expressions
// (ast_expr.go), the statements (ast_stmt.go, cursor.go), those about
// roles and privileges (ast_auth.go). The parser
// (sql/parser) builds it from query text; the planner reads it.
//
// Besides the node types it owns what is done with a tree without a
// catalog:
//
//   - walk.go: WalkStmt and WalkExpr visit every expression and FROM item
//     of a statement; ParamsUsed and NumParams find its $n parameters.
//   - format*.go: Format prints a statement as deterministic, SQL-like text
//     (fully parenthesized operators, typed literals, names quoted where
//     needed), for tests and EXPLAIN. The authorization statements
//     (format_auth.go) print as text that parses back to the same tree,
//     passwords included; RedactPasswords returns a copy without them for
//     logs.
//   - quote.go: the lexical facts the parser and Format share: quoting
//     identifiers and strings, PostgreSQL's reserved keywords
//     (QuoteName), and the keywords after which an expression starts.
//
// # Invariants
//
//   - The package imports no parser and no catalog: a tree is plain data.
//   - A tree the parser returned may be cached and shared between
//     sessions, so nothing here mutates one; Format and the walkers only
//     read.
//   - Format is deterministic: a tree prints the same text every time
//     (the parser's testdata and EXPLAIN's output depend on it).
package sql
