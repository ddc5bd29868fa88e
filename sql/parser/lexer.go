package parser

import (
	"strings"

	"topicgate/sql/pgerror"
)

// tokKind classifies a token of the small lexer shared by the statement
// splitter, the topic DDL parser and the pre-pass.
type tokKind int

const (
	tEOF       tokKind = iota
	tIdent             // unquoted identifier or keyword; Val is the text as written
	tQIdent            // "quoted identifier"; Val is the unescaped name
	tBQIdent           // `backquoted name`; Val is the unescaped name
	tString            // 'string', E'string'; Val is the unescaped value
	tDollar            // $tag$ string $tag$; Val is the body
	tNumber            // 12, 1.5, 1e3; Val is the text
	tParam             // $n; Val is the digits
	tOp                // operator: = < <= <> + - * / :: || -> ->> ...
	tPunct             // ( ) [ ] , ; . :
	tSemicolon         // ;
)

// token is one lexical token. Pos and End are byte offsets into the lexed
// text (End exclusive).
type token struct {
	Kind     tokKind
	Val      string
	Pos, End int
}

// is reports whether t is the unquoted keyword kw (kw upper-case).
func (t token) is(kw string) bool {
	return t.Kind == tIdent && len(t.Val) == len(kw) && strings.EqualFold(t.Val, kw)
}

// isP reports whether t is the punctuation or operator p.
func (t token) isP(p string) bool {
	return (t.Kind == tPunct || t.Kind == tOp || t.Kind == tSemicolon) && t.Val == p
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c == '$' || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

const opChars = "+-*/<>=~!@#%^&|`?"

func isOpChar(c byte) bool { return c != '`' && strings.IndexByte(opChars, c) >= 0 }

// lex splits s into tokens, skipping whitespace and comments. The final
// token is tEOF at len(s). Errors are 42601 with the position set.
func lex(s string) ([]token, error) {
	toks := make([]token, 0, len(s)/4+2)
	i := 0
	for {
		// skip whitespace and comments
		for i < len(s) {
			c := s[i]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
				i++
			} else if c == '-' && i+1 < len(s) && s[i+1] == '-' {
				for i < len(s) && s[i] != '\n' {
					i++
				}
			} else if c == '/' && i+1 < len(s) && s[i+1] == '*' {
				start, depth := i, 0
				for i < len(s) {
					if s[i] == '/' && i+1 < len(s) && s[i+1] == '*' {
						depth++
						i += 2
					} else if s[i] == '*' && i+1 < len(s) && s[i+1] == '/' {
						depth--
						i += 2
						if depth == 0 {
							break
						}
					} else {
						i++
					}
				}
				if depth != 0 {
					return nil, lexErr(s, start, "unterminated /* comment")
				}
			} else {
				break
			}
		}
		if i >= len(s) {
			toks = append(toks, token{Kind: tEOF, Pos: len(s), End: len(s)})
			return toks, nil
		}
		t, err := lexOne(s, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i = t.End
	}
}

func lexErr(s string, pos int, what string) error {
	near := s[pos:]
	e := pgerror.Newf(pgerror.CodeSyntaxError, "%s at or near \"%s\"", what, near)
	e.Position = pos + 1 // byte offset + 1; converted to characters by Parse
	return e
}

// lexOne lexes the token starting at s[i] (not whitespace).
func lexOne(s string, i int) (token, error) {
	c := s[i]
	switch {
	case (c == 'e' || c == 'E') && i+1 < len(s) && s[i+1] == '\'':
		return lexString(s, i, i+1, true)
	case (c == 'b' || c == 'B' || c == 'x' || c == 'X' || c == 'n' || c == 'N') && i+1 < len(s) && s[i+1] == '\'':
		return lexString(s, i, i+1, false)
	case isIdentStart(c):
		j := i + 1
		for j < len(s) && isIdentChar(s[j]) {
			j++
		}
		return token{Kind: tIdent, Val: s[i:j], Pos: i, End: j}, nil
	case c == '\'':
		return lexString(s, i, i, false)
	case c == '"' || c == '`':
		kind, what := tQIdent, "unterminated quoted identifier"
		if c == '`' {
			kind, what = tBQIdent, "unterminated quoted identifier"
		}
		var b strings.Builder
		j := i + 1
		for {
			k := strings.IndexByte(s[j:], c)
			if k < 0 {
				return token{}, lexErr(s, i, what)
			}
			b.WriteString(s[j : j+k])
			j += k + 1
			if j < len(s) && s[j] == c {
				b.WriteByte(c)
				j++
				continue
			}
			break
		}
		if b.Len() == 0 {
			e := pgerror.New(pgerror.CodeSyntaxError, "zero-length delimited identifier at or near \"\"\"\"")
			e.Position = i + 1
			return token{}, e
		}
		return token{Kind: kind, Val: b.String(), Pos: i, End: j}, nil
	case c == '$':
		j := i + 1
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			return token{Kind: tParam, Val: s[i+1 : j], Pos: i, End: j}, nil
		}
		for j < len(s) && isIdentChar(s[j]) && s[j] != '$' {
			j++
		}
		if j < len(s) && s[j] == '$' {
			tag := s[i : j+1]
			k := strings.Index(s[j+1:], tag)
			if k < 0 {
				return token{}, lexErr(s, i, "unterminated dollar-quoted string")
			}
			return token{Kind: tDollar, Val: s[j+1 : j+1+k], Pos: i, End: j + 1 + k + len(tag)}, nil
		}
		return token{Kind: tOp, Val: "$", Pos: i, End: i + 1}, nil
	case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
		j := i
		for j < len(s) && (isDigit(s[j]) || s[j] == '_') {
			j++
		}
		if j < len(s) && s[j] == '.' && !(j+1 < len(s) && s[j+1] == '.') {
			j++
			for j < len(s) && (isDigit(s[j]) || s[j] == '_') {
				j++
			}
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && isDigit(s[k]) {
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				j = k
			}
		}
		return token{Kind: tNumber, Val: s[i:j], Pos: i, End: j}, nil
	case c == ';':
		return token{Kind: tSemicolon, Val: ";", Pos: i, End: i + 1}, nil
	case c == ':' && i+1 < len(s) && s[i+1] == ':':
		return token{Kind: tOp, Val: "::", Pos: i, End: i + 2}, nil
	case strings.IndexByte("()[],.:", c) >= 0:
		return token{Kind: tPunct, Val: s[i : i+1], Pos: i, End: i + 1}, nil
	case isOpChar(c):
		j := i
		for j < len(s) && isOpChar(s[j]) {
			// a comment start ends the operator
			if j > i && (s[j] == '-' && j+1 < len(s) && s[j+1] == '-' || s[j] == '/' && j+1 < len(s) && s[j+1] == '*') {
				break
			}
			j++
		}
		// PostgreSQL: a multi-character operator cannot end in + or -
		// unless it contains one of ~ ! @ # % ^ & | ` ?
		if j-i > 1 && !strings.ContainsAny(s[i:j], "~!@#%^&|`?") {
			for j-i > 1 && (s[j-1] == '+' || s[j-1] == '-') {
				j--
			}
		}
		return token{Kind: tOp, Val: s[i:j], Pos: i, End: j}, nil
	}
	return token{Kind: tOp, Val: s[i : i+1], Pos: i, End: i + 1}, nil
}

// lexString lexes a quoted string whose opening quote is at q (start is the
// token start, before any E/B/X/N prefix).
func lexString(s string, start, q int, escapes bool) (token, error) {
	var b strings.Builder
	j := q + 1
	for j < len(s) {
		c := s[j]
		if c == '\'' {
			if j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j += 2
				continue
			}
			return token{Kind: tString, Val: b.String(), Pos: start, End: j + 1}, nil
		}
		if escapes && c == '\\' && j+1 < len(s) {
			j++
			switch s[j] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(s[j])
			}
			j++
			continue
		}
		b.WriteByte(c)
		j++
	}
	return token{}, lexErr(s, start, "unterminated quoted string")
}
