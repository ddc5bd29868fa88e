package eval

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"topicgate/sql/pgerror"
)

// LIKE, NOT LIKE, ILIKE and NOT ILIKE, over text and (LIKE and NOT LIKE
// only) bytea, as PostgreSQL's like_match.c matches: % is any run, _ one
// character (one byte for bytea), a backslash makes the next pattern
// character literal; LIKE ... ESCAPE e arrives as like_escape(pattern, e),
// which rewrites e to a backslash. ILIKE lowercases both sides first.
func like(op string, l, r any) (any, error) {
	var m int
	var err error
	bad := func() error { // what the planner's type check lets through (ANY over an array)
		name := func(v any) string {
			switch v.(type) {
			case []byte:
				return "bytea"
			case string:
				return "text"
			}
			return fmt.Sprintf("%T", v)
		}
		return pgerror.Newf(pgerror.CodeUndefinedFunction, "operator does not exist: %s %s %s", name(l), op, name(r))
	}
	switch x := l.(type) {
	case []byte:
		p, ok := r.([]byte)
		if !ok || op != "~~" && op != "!~~" {
			return nil, bad()
		}
		m, err = matchLike(x, p, true)
	case string:
		p, ok := r.(string)
		if !ok {
			return nil, bad()
		}
		if op == "~~*" || op == "!~~*" {
			x, p = strings.ToLower(x), strings.ToLower(p)
		}
		m, err = matchLike(x, p, false)
	default:
		return nil, bad()
	}
	if err != nil {
		return nil, err
	}
	return (m == likeTrue) != (op[0] == '!'), nil
}

// matchLike's results: a match, none, or none that a later start in the
// text could give either (PostgreSQL's LIKE_ABORT, which keeps % from
// backtracking without end).
const (
	likeFalse = iota
	likeTrue
	likeAbort
)

var errLikeEscape = pgerror.New(pgerror.CodeInvalidEscapeSequence, "LIKE pattern must not end with escape character")

// matchLike matches text t against LIKE pattern p, as PostgreSQL's
// MatchText: bytewise for bytea, else _ takes one UTF-8 character.
func matchLike[T string | []byte](t, p T, bytewise bool) (int, error) {
	next := func(i int) int { // the index after t's character at i
		i++
		for !bytewise && i < len(t) && t[i]&0xC0 == 0x80 {
			i++
		}
		return i
	}
	if len(p) == 1 && p[0] == '%' {
		return likeTrue, nil
	}
	ti, pi := 0, 0
	for ti < len(t) && pi < len(p) {
		switch p[pi] {
		case '\\':
			if pi++; pi >= len(p) {
				return 0, errLikeEscape
			}
			if p[pi] != t[ti] {
				return likeFalse, nil
			}
		case '%':
			// Skip the wildcards that follow (each _ takes a character),
			// then try each place in t where the next literal matches.
			for pi++; pi < len(p) && (p[pi] == '%' || p[pi] == '_'); pi++ {
				if p[pi] == '_' {
					if ti >= len(t) {
						return likeAbort, nil
					}
					ti = next(ti)
				}
			}
			if pi >= len(p) {
				return likeTrue, nil
			}
			first := p[pi]
			if first == '\\' {
				if pi+1 >= len(p) {
					return 0, errLikeEscape
				}
				first = p[pi+1]
			}
			for ; ti < len(t); ti = next(ti) {
				if t[ti] == first {
					if m, err := matchLike(t[ti:], p[pi:], bytewise); err != nil || m != likeFalse {
						return m, err
					}
				}
			}
			return likeAbort, nil
		case '_':
			ti, pi = next(ti), pi+1
			continue
		default:
			if p[pi] != t[ti] {
				return likeFalse, nil
			}
		}
		ti, pi = ti+1, pi+1
	}
	if ti < len(t) {
		return likeFalse, nil
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	if pi >= len(p) {
		return likeTrue, nil
	}
	return likeAbort, nil
}

// fnLikeEscape is like_escape(pattern, escape), what LIKE ... ESCAPE
// calls: the pattern with escape in place of backslash (an empty escape:
// none, every backslash literal), as PostgreSQL's do_like_escape, for text
// (by character) and bytea (by byte).
func fnLikeEscape(_ Context, a []any) (any, error) {
	switch p := a[0].(type) {
	case string:
		if e, ok := a[1].(string); ok {
			if utf8.RuneCountInString(e) > 1 {
				return nil, errEscapeString
			}
			return string(likeEscape([]rune(p), []rune(e))), nil
		}
	case []byte:
		e, ok := a[1].([]byte)
		if s, isText := a[1].(string); isText {
			e, ok = []byte(s), true
		}
		if ok {
			if len(e) > 1 {
				return nil, errEscapeString
			}
			return likeEscape(p, e), nil
		}
	}
	return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function like_escape(%T, %T) does not exist", a[0], a[1])
}

var errEscapeString = pgerror.New(pgerror.CodeInvalidEscapeSequence, "invalid escape string").
	WithHint("Escape string must be empty or one character.")

// likeEscape rewrites pattern p from escape character e (none if empty)
// to backslash escapes.
func likeEscape[C rune | byte](p, e []C) []C {
	const bs = '\\'
	out := make([]C, 0, len(p)+2)
	switch {
	case len(e) == 0: // no escape: double the backslashes
		for _, c := range p {
			if c == bs {
				out = append(out, bs)
			}
			out = append(out, c)
		}
	case e[0] == bs:
		return p
	default:
		after := false // just after an escape
		for _, c := range p {
			switch {
			case c == e[0] && !after:
				out = append(out, bs)
				after = true
				continue
			case c == bs && !after:
				out = append(out, bs, bs)
			default:
				out = append(out, c)
			}
			after = false
		}
	}
	return out
}
