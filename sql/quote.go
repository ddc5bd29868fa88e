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

// IsReservedKeyword reports whether word (lower case) is one of
// PostgreSQL's reserved keywords or of those that cannot name a table
// (type_func_name_keyword): such a word must be quoted to be a name, and
// QuoteName quotes it.
func IsReservedKeyword(word string) bool { return reservedKeywords[word] }

var reservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization binary both
		case cast check collate collation column concurrently constraint create cross current_catalog current_date
		current_role current_schema current_time current_timestamp current_user default deferrable desc distinct do
		else end except false fetch for foreign freeze from full grant group having ilike in initially inner intersect
		into is isnull join lateral leading left like limit localtime localtimestamp natural not notnull null offset
		on only or order outer overlaps placing primary references returning right select session_user similar some
		symmetric system_user table tablesample then to trailing true union unique user using variadic verbose when
		where window with`) {
		m[w] = true
	}
	return m
}()

// QuoteName writes a name as PostgreSQL's quote_ident does: bare when it
// is a lower-case identifier and no reserved keyword, else double-quoted.
func QuoteName(s string) string { return QuoteIdentIfNeeded(s, IsReservedKeyword) }

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
