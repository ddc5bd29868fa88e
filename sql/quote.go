package sql

import "strings"

// Lexical facts shared by the parser (sql/parser) and Format: how a name
// is quoted, and which words start an expression.

// IsExprKeyword reports whether word (lower case) is a keyword after which
// an expression (so a column) starts: the parser's pre-pass reads an
// unquoted `offset` after one as a column, and Format quotes a name that
// is one so that its output reads back the same.
func IsExprKeyword(word string) bool { return exprKeywords[word] }

var exprKeywords = map[string]bool{
	"select": true, "distinct": true, "where": true, "and": true, "or": true, "not": true,
	"by": true, "set": true, "as": true, "on": true, "when": true, "then": true, "else": true,
	"case": true, "returning": true, "having": true, "between": true, "in": true, "is": true,
	"like": true, "ilike": true, "similar": true, "from": true, "into": true, "values": true,
	"any": true, "some": true, "limit": true, "using": true, "array": true, "escape": true,
	"exists": true, "with": true, "explain": true, "analyze": true, "verbose": true,
	"table": true, "only": true, "fetch": true, "over": true,
}

// QuoteIdent double-quotes s, doubling the quotes inside it.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// QuoteIdentIfNeeded writes s bare when it is a lower-case identifier
// (letters, digits after the first, underscores) that word does not
// claim, else double-quoted: PostgreSQL's quote_ident with word its
// reserved keywords, the topic DDL's renderer with its own words.
func QuoteIdentIfNeeded(s string, word func(string) bool) string {
	plain := s != "" && !word(s)
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return QuoteIdent(s)
}

// QuoteString single-quotes s as a string literal, doubling the quotes
// inside it.
func QuoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
