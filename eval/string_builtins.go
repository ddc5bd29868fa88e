package eval

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// maxBuiltLen bounds the strings repeat, lpad and rpad build, so that one
// statement cannot make the server allocate without limit (PostgreSQL's own
// bound is 1 GB).
const maxBuiltLen = 64 << 20

// stringBuiltins are the functions over text and bytea.
var stringBuiltins = map[string]Func{
	"length":       fnLength,
	"char_length":  fnLength,
	"octet_length": func(_ Context, a []any) (any, error) { return int64(len(AsBytes(a[0]))), nil },
	"convert_from": func(_ Context, a []any) (any, error) {
		b := a[0].([]byte)
		if enc := strings.ToUpper(a[1].(string)); enc != "UTF8" && enc != "UTF-8" && enc != "SQL_ASCII" && enc != "LATIN1" {
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid source encoding name \"%s\"", a[1])
		}
		if !utf8.Valid(b) {
			return nil, pgerror.New("22021", "invalid byte sequence for encoding \"UTF8\"")
		}
		return string(b), nil
	},
	"convert_to": func(_ Context, a []any) (any, error) { return []byte(a[0].(string)), nil },
	"encode":     fnEncode,
	"decode":     fnDecode,
	"lower":      func(_ Context, a []any) (any, error) { return strings.ToLower(a[0].(string)), nil },
	"upper":      func(_ Context, a []any) (any, error) { return strings.ToUpper(a[0].(string)), nil },
	"substr":     fnSubstr,
	"substring":  fnSubstr,
	"concat": func(_ Context, a []any) (any, error) {
		var b strings.Builder
		for _, v := range a {
			if v != nil {
				b.WriteString(values.FormatText(v))
			}
		}
		return b.String(), nil
	},
	"md5": func(_ Context, a []any) (any, error) {
		s := md5.Sum(AsBytes(a[0]))
		return hex.EncodeToString(s[:]), nil
	},
	"to_hex":        func(_ Context, a []any) (any, error) { return fmt.Sprintf("%x", a[0].(int64)), nil },
	"position":      fnPosition,
	"strpos":        fnStrpos,
	"replace":       fnReplace,
	"btrim":         trimmer(strings.Trim),
	"ltrim":         trimmer(strings.TrimLeft),
	"rtrim":         trimmer(strings.TrimRight),
	"split_part":    fnSplitPart,
	"left":          func(_ Context, a []any) (any, error) { return leftRight(a[0].(string), a[1].(int64), true), nil },
	"right":         func(_ Context, a []any) (any, error) { return leftRight(a[0].(string), a[1].(int64), false), nil },
	"lpad":          padder(true),
	"rpad":          padder(false),
	"repeat":        fnRepeat,
	"reverse":       fnReverse,
	"initcap":       fnInitcap,
	"like_escape":   fnLikeEscape,
	"quote_literal": func(_ Context, a []any) (any, error) { return quoteLiteral(a[0].(string)), nil },
	"quote_nullable": func(_ Context, a []any) (any, error) {
		if a[0] == nil {
			return "NULL", nil
		}
		return quoteLiteral(a[0].(string)), nil
	},
	"quote_ident": func(_ Context, a []any) (any, error) { return quoteIdent(a[0].(string)), nil },
	"starts_with": func(_ Context, a []any) (any, error) { return strings.HasPrefix(a[0].(string), a[1].(string)), nil },
	"chr":         fnChr,
	"ascii": func(_ Context, a []any) (any, error) {
		r, _ := utf8.DecodeRuneInString(a[0].(string))
		if r == utf8.RuneError {
			return int64(0), nil
		}
		return int64(r), nil
	},
	"format":          fnFormat,
	"gen_random_uuid": fnUUID,
}

// AsBytes is v as bytes: a bytea's own, a text's UTF-8, any other value's
// text form (octet_length, md5, string_agg).
func AsBytes(v any) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return []byte(values.FormatText(v))
}

func fnLength(_ Context, a []any) (any, error) {
	switch x := a[0].(type) {
	case []byte:
		return int64(len(x)), nil
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	}
	return int64(len(values.FormatText(a[0]))), nil
}

func fnEncode(_ Context, a []any) (any, error) {
	b := a[0].([]byte)
	switch strings.ToLower(a[1].(string)) {
	case "hex":
		return hex.EncodeToString(b), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(b), nil
	case "escape":
		var sb strings.Builder
		for _, c := range b {
			switch {
			case c == '\\':
				sb.WriteString(`\\`)
			case c < 32 || c > 126:
				fmt.Fprintf(&sb, `\%03o`, c)
			default:
				sb.WriteByte(c)
			}
		}
		return sb.String(), nil
	}
	return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized encoding: \"%s\"", a[1])
}

func fnDecode(_ Context, a []any) (any, error) {
	s := a[0].(string)
	var b []byte
	var err error
	switch strings.ToLower(a[1].(string)) {
	case "hex":
		b, err = hex.DecodeString(s)
	case "base64":
		b, err = base64.StdEncoding.DecodeString(s)
	case "escape":
		return values.ParseBytea(s)
	default:
		return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized encoding: \"%s\"", a[1])
	}
	if err != nil {
		return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid %s data: %v", a[1], err)
	}
	return b, nil
}

func fnSubstr(_ Context, a []any) (any, error) {
	start := a[1].(int64)
	n := int64(math.MaxInt64)
	if len(a) > 2 {
		n = a[2].(int64)
		if n < 0 {
			return nil, pgerror.New("22011", "negative substring length not allowed")
		}
	}
	// cut maps the 1-based [start, start+n) onto [0, l), without overflow
	// for any start and n (a start past the end gives an empty result).
	cut := func(l int64) (int64, int64) {
		from := int64(0)
		if start > 1 {
			from = min(start-1, l)
		}
		to := l
		if end := satAdd(start, n); end <= 1 {
			to = 0
		} else if end-1 < l {
			to = end - 1
		}
		return from, max(to, from)
	}
	switch x := a[0].(type) {
	case []byte:
		f, t := cut(int64(len(x)))
		return x[f:t], nil
	case string:
		r := []rune(x)
		f, t := cut(int64(len(r)))
		return string(r[f:t]), nil
	}
	return nil, pgerror.AssertionFailed("substr of %T", a[0])
}

// satAdd is a + b, saturating at the int64 bounds.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// fnStrpos returns the 1-based character position of sub in s, 0 if
// absent.
func fnStrpos(_ Context, a []any) (any, error) {
	s, sub := a[0].(string), a[1].(string)
	i := strings.Index(s, sub)
	if i < 0 {
		return int64(0), nil
	}
	return int64(utf8.RuneCountInString(s[:i]) + 1), nil
}

// fnPosition is position(sub IN s), arriving as (s, sub): on text the
// 1-based character position of sub in s, on bytea the 1-based byte
// position (a text argument beside a bytea one is read as bytea input,
// as PostgreSQL resolves an untyped literal); 0 if absent.
func fnPosition(c Context, a []any) (any, error) {
	s, sok := a[0].([]byte)
	sub, subok := a[1].([]byte)
	if !sok && !subok {
		return fnStrpos(c, []any{values.FormatText(a[0]), values.FormatText(a[1])})
	}
	var err error
	if !sok {
		s, err = values.ParseBytea(values.FormatText(a[0]))
	} else if !subok {
		sub, err = values.ParseBytea(values.FormatText(a[1]))
	}
	if err != nil {
		return nil, err
	}
	return int64(bytes.Index(s, sub) + 1), nil
}

func fnReplace(_ Context, a []any) (any, error) {
	s, from, to := a[0].(string), a[1].(string), a[2].(string)
	if from == "" {
		return s, nil
	}
	return strings.ReplaceAll(s, from, to), nil
}

func trimmer(trim func(string, string) string) Func {
	return func(_ Context, a []any) (any, error) {
		chars := " "
		if len(a) > 1 {
			chars = a[1].(string)
		}
		return trim(a[0].(string), chars), nil
	}
}

func fnSplitPart(_ Context, a []any) (any, error) {
	s, delim, n := a[0].(string), a[1].(string), a[2].(int64)
	if n == 0 {
		return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "field position must not be zero")
	}
	parts := []string{s}
	if delim != "" {
		parts = strings.Split(s, delim)
	}
	if n < 0 {
		n += int64(len(parts)) + 1
	}
	if n < 1 || n > int64(len(parts)) {
		return "", nil
	}
	return parts[n-1], nil
}

// leftRight returns the first (left) or last n characters of s; a
// negative n drops |n| characters from the other end.
func leftRight(s string, n int64, left bool) string {
	r := []rune(s)
	k := int64(len(r))
	if n < 0 {
		n = max(k+n, 0)
	}
	n = min(n, k)
	if left {
		return string(r[:n])
	}
	return string(r[k-n:])
}

func padder(left bool) Func {
	return func(_ Context, a []any) (any, error) {
		s, n := []rune(a[0].(string)), a[1].(int64)
		fill := []rune(" ")
		if len(a) > 2 {
			fill = []rune(a[2].(string))
		}
		if n <= 0 {
			return "", nil
		}
		if n > maxBuiltLen/4 {
			return nil, pgerror.New(pgerror.CodeProgramLimitExceeded, "requested length too large")
		}
		if int64(len(s)) >= n || len(fill) == 0 {
			return string(s[:min(int64(len(s)), n)]), nil
		}
		pad := make([]rune, 0, n-int64(len(s)))
		for i := 0; int64(len(pad)) < n-int64(len(s)); i++ {
			pad = append(pad, fill[i%len(fill)])
		}
		if left {
			return string(pad) + string(s), nil
		}
		return string(s) + string(pad), nil
	}
}

func fnRepeat(_ Context, a []any) (any, error) {
	s, n := a[0].(string), a[1].(int64)
	if n <= 0 || s == "" {
		return "", nil
	}
	if n > maxBuiltLen/int64(len(s)) {
		return nil, pgerror.New(pgerror.CodeProgramLimitExceeded, "requested length too large")
	}
	return strings.Repeat(s, int(n)), nil
}

func fnReverse(_ Context, a []any) (any, error) {
	r := []rune(a[0].(string))
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r), nil
}

// quoteLiteral is PostgreSQL's quote_literal: single quotes doubled, and
// with backslashes doubled behind E when there are any.
func quoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// quoteIdent is PostgreSQL's quote_ident: quoted unless s is a lower-case
// identifier that is not a reserved keyword.
func quoteIdent(s string) string { return sql.QuoteName(s) }

// fnInitcap upper-cases the first letter of each run of letters and
// digits and lower-cases the rest.
func fnInitcap(_ Context, a []any) (any, error) {
	var b strings.Builder
	inWord := false
	for _, c := range a[0].(string) {
		if inWord {
			b.WriteRune(unicode.ToLower(c))
		} else {
			b.WriteRune(unicode.ToUpper(c))
		}
		inWord = unicode.IsLetter(c) || unicode.IsDigit(c)
	}
	return b.String(), nil
}

func fnChr(_ Context, a []any) (any, error) {
	n := a[0].(int64)
	switch {
	case n == 0:
		return nil, pgerror.New(pgerror.CodeProgramLimitExceeded, "null character not permitted")
	case n < 0 || n > unicode.MaxRune || !utf8.ValidRune(rune(n)):
		return nil, pgerror.Newf(pgerror.CodeProgramLimitExceeded, "requested character not valid for encoding: %d", n)
	}
	return string(rune(n)), nil
}

// fnFormat is format(fmt, args...) with the specifiers %s, %I, %L and %%
// (psql's \dX: format('%s FROM %s', ...)); a NULL is ” for %s, NULL for
// %L, and an error for %I, as in PostgreSQL.
func fnFormat(_ Context, a []any) (any, error) {
	f, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	var b strings.Builder
	next := 1
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i == len(f) {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "unterminated format() type specifier")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if next >= len(a) {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "too few arguments for format()")
		}
		v := a[next]
		next++
		switch f[i] {
		case 's':
			if v != nil {
				b.WriteString(values.FormatText(v))
			}
		case 'I':
			if v == nil {
				return nil, pgerror.New(pgerror.CodeNullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			b.WriteString(quoteIdent(values.FormatText(v)))
		case 'L':
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(quoteLiteral(values.FormatText(v)))
			}
		default:
			return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized format() type specifier \"%c\"", f[i])
		}
	}
	return b.String(), nil
}

// fnUUID returns a random (version 4) UUID in its text form.
func fnUUID(Context, []any) (any, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return nil, pgerror.AssertionFailed("reading random bytes: %v", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:]), nil
}
