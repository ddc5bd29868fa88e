package parser

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v5"
	pgparser "github.com/pganalyze/pg_query_go/v5/parser"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Parse parses a query string of one or more semicolon-separated
// statements. Topic DDL goes to our own parser, everything else (after the
// token pre-pass) to pg_query. A string holding only whitespace and comments
// yields one *Empty. Errors are *pgerror.Error; their Position is a 1-based
// character position in query.
//
// Parse is safe for concurrent use, and never mutates a returned AST.
func Parse(query string) (stmts []sql.Stmt, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, pgerror.AssertionFailed("parser panic: %v", r)
		}
	}()
	toks, err := lex(query)
	if err != nil {
		return nil, finishErr(query, err)
	}
	start := 0
	for i, t := range toks {
		if t.Kind != tSemicolon && t.Kind != tEOF {
			continue
		}
		if i > start {
			s, err := parseOne(query, toks[start:i+1])
			if err != nil {
				return nil, finishErr(query, err)
			}
			stmts = append(stmts, s)
		}
		start = i + 1
	}
	if len(stmts) == 0 {
		stmts = []sql.Stmt{&sql.Empty{}}
	}
	return stmts, nil
}

// parseOne parses one statement; toks ends with its terminator (';' or EOF).
func parseOne(query string, toks []token) (sql.Stmt, error) {
	if len(toks) >= 3 && toks[1].is("TOPIC") &&
		(toks[0].is("CREATE") || toks[0].is("ALTER") || toks[0].is("DROP")) {
		p := &ddlParser{src: query, toks: toks}
		return p.parseTopicStmt()
	}
	if len(toks) >= 4 && toks[0].is("SHOW") && toks[1].is("CREATE") && toks[2].is("TOPIC") {
		p := &ddlParser{src: query, toks: toks, i: 3}
		name, pos, err := p.name()
		if err != nil {
			return nil, err
		}
		if !p.atEnd() {
			return nil, p.syntaxErr(p.peek())
		}
		return &sql.ShowCreateTopic{Name: name, Pos: pos}, nil
	}
	pp, err := prepass(query, toks)
	if err != nil {
		return nil, err
	}
	res, err := pg.Parse(pp.text)
	if err != nil {
		return nil, pgQueryErr(pp, err)
	}
	if len(res.Stmts) == 0 {
		return &sql.Empty{}, nil
	}
	if len(res.Stmts) > 1 { // cannot happen: the text holds no top-level ';'
		return nil, pgerror.AssertionFailed("pg_query returned %d statements", len(res.Stmts))
	}
	c := &converter{pp: pp}
	s, err := c.stmt(res.Stmts[0].Stmt)
	if err != nil {
		return nil, err
	}
	if c.hintsUsed != len(pp.hints) {
		for pos, h := range pp.hints {
			if !h.used {
				return nil, errAt(pgerror.CodeSyntaxError, pp.orig(pos),
					"WITH (...) hints are only allowed after a table name in FROM, INSERT INTO, UPDATE, DELETE FROM or COPY")
			}
		}
	}
	return s, nil
}

// pgQueryErr converts a pg_query error to a 42601 (or 0A000) error with the
// position mapped back into the original query.
func pgQueryErr(pp *prepassResult, err error) error {
	var pe *pgparser.Error
	if !errors.As(err, &pe) {
		return pgerror.Newf(pgerror.CodeSyntaxError, "%v", err)
	}
	code := pgerror.CodeSyntaxError
	if pe.Funcname != "scanner_yyerror" && pe.Funcname != "base_yyerror" {
		code = pgQueryErrCode(pe.Message)
	}
	e := pgerror.New(code, pe.Message)
	if strings.HasPrefix(pe.Message, "UNENCRYPTED PASSWORD") {
		e.Hint = "Remove UNENCRYPTED to store the password in encrypted form instead."
	}
	if pe.Cursorpos > 0 {
		// Cursorpos is a 1-based character position in pp.text.
		b := charToByte(pp.text, pe.Cursorpos-1)
		e.Position = pp.orig(b) + 1
	}
	return e
}

func pgQueryErrCode(msg string) string {
	switch {
	case strings.Contains(msg, "not supported"), strings.Contains(msg, "not implemented"),
		strings.Contains(msg, "no longer supported"):
		return pgerror.CodeFeatureNotSupported
	case strings.HasSuffix(msg, "is reserved"), strings.HasSuffix(msg, "cannot be used as a role name here"):
		return pgerror.CodeReservedName // the grammar's checks of role names
	case strings.Contains(msg, "invalid input syntax"):
		return pgerror.CodeInvalidTextRepresentation
	case strings.Contains(msg, "out of range"):
		return pgerror.CodeNumericValueOutOfRange
	case strings.HasPrefix(msg, "frame start"), strings.HasPrefix(msg, "frame end"):
		return pgerror.CodeWindowingError // the grammar's checks of a window frame's bounds
	}
	return pgerror.CodeSyntaxError
}

// errAt builds an error whose Position is byte offset off + 1 in the query;
// finishErr converts it to characters.
func errAt(code string, off int, format string, args ...any) *pgerror.Error {
	e := pgerror.New(code, fmt.Sprintf(format, args...))
	if off >= 0 {
		e.Position = off + 1
	}
	return e
}

// finishErr converts a byte-based Position to PostgreSQL's 1-based character
// position and makes sure every error is a *pgerror.Error.
func finishErr(query string, err error) error {
	var e *pgerror.Error
	if !errors.As(err, &e) {
		return pgerror.Newf(pgerror.CodeSyntaxError, "%v", err)
	}
	if e.Position > 0 {
		b := e.Position - 1
		if b > len(query) {
			b = len(query)
		}
		e.Position = utf8.RuneCountInString(query[:b]) + 1
	}
	return e
}

// charPos converts byte offset off in query to a 1-based character position.
func charPos(query string, off int) int {
	if off > len(query) {
		off = len(query)
	}
	return utf8.RuneCountInString(query[:off]) + 1
}

// charToByte returns the byte offset of the n-th (0-based) character of s.
func charToByte(s string, n int) int {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}
