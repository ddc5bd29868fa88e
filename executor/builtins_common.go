package executor

import (
	"crypto/rand"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// maxBuiltLen bounds the strings repeat, lpad and rpad build, so that one
// statement cannot make the server allocate without limit (PostgreSQL's own
// bound is 1 GB).
const maxBuiltLen = 64 << 20

// commonBuiltins implement planner's commonBuiltins (merged into builtins at init).
var commonBuiltins = map[string]builtin{
	"position":      fnStrpos,
	"strpos":        fnStrpos,
	"replace":       fnReplace,
	"btrim":         trimmer(strings.Trim),
	"ltrim":         trimmer(strings.TrimLeft),
	"rtrim":         trimmer(strings.TrimRight),
	"split_part":    fnSplitPart,
	"left":          func(_ *evalCtx, a []any) (any, error) { return leftRight(a[0].(string), a[1].(int64), true), nil },
	"right":         func(_ *evalCtx, a []any) (any, error) { return leftRight(a[0].(string), a[1].(int64), false), nil },
	"lpad":          padder(true),
	"rpad":          padder(false),
	"repeat":        fnRepeat,
	"reverse":       fnReverse,
	"initcap":       fnInitcap,
	"like_escape":   fnLikeEscape,
	"quote_literal": func(_ *evalCtx, a []any) (any, error) { return quoteLiteral(a[0].(string)), nil },
	"quote_nullable": func(_ *evalCtx, a []any) (any, error) {
		if a[0] == nil {
			return "NULL", nil
		}
		return quoteLiteral(a[0].(string)), nil
	},
	"quote_ident": func(_ *evalCtx, a []any) (any, error) { return quoteIdent(a[0].(string)), nil },
	"current_schemas": func(_ *evalCtx, a []any) (any, error) {
		// The search path as topicgate resolves names: pg_catalog first
		// (implicit), then public.
		if a[0] == true {
			return []string{"pg_catalog", "public"}, nil
		}
		return []string{"public"}, nil
	},
	"starts_with": func(_ *evalCtx, a []any) (any, error) { return strings.HasPrefix(a[0].(string), a[1].(string)), nil },
	"chr":         fnChr,
	"ascii": func(_ *evalCtx, a []any) (any, error) {
		r, _ := utf8.DecodeRuneInString(a[0].(string))
		if r == utf8.RuneError {
			return int64(0), nil
		}
		return int64(r), nil
	},
	"sqrt": func(_ *evalCtx, a []any) (any, error) {
		if x := a[0].(float64); x < 0 {
			return nil, pgerror.New(pgerror.CodeInvalidArgumentForPower, "cannot take square root of a negative number")
		}
		return math.Sqrt(a[0].(float64)), nil
	},
	"cbrt":  func(_ *evalCtx, a []any) (any, error) { return math.Cbrt(a[0].(float64)), nil },
	"power": fnPower,
	"pow":   fnPower,
	"exp":   func(_ *evalCtx, a []any) (any, error) { return math.Exp(a[0].(float64)), nil },
	"ln": func(_ *evalCtx, a []any) (any, error) {
		return logOf(a[0].(float64), math.Log)
	},
	"log": func(_ *evalCtx, a []any) (any, error) {
		if len(a) == 1 {
			return logOf(a[0].(float64), math.Log10)
		}
		b, err := logOf(a[0].(float64), math.Log)
		if err != nil {
			return nil, err
		}
		x, err := logOf(a[1].(float64), math.Log)
		if err != nil {
			return nil, err
		}
		if b.(float64) == 0 {
			return nil, pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
		}
		return x.(float64) / b.(float64), nil
	},
	"trunc":           func(_ *evalCtx, a []any) (any, error) { return numericRound(a, apd.RoundDown, math.Trunc) },
	"pi":              func(*evalCtx, []any) (any, error) { return math.Pi, nil },
	"mod":             fnMod,
	"sign":            fnSign,
	"date_trunc":      fnDateTrunc,
	"gen_random_uuid": fnUUID,
	"to_char":         fnToChar,
	"current_date":    func(ec *evalCtx, _ []any) (any, error) { return values.DateOf(ec.now), nil },
}

// fnStrpos returns the 1-based character position of sub in s, 0 if
// absent.
func fnStrpos(_ *evalCtx, a []any) (any, error) {
	s, sub := a[0].(string), a[1].(string)
	i := strings.Index(s, sub)
	if i < 0 {
		return int64(0), nil
	}
	return int64(utf8.RuneCountInString(s[:i]) + 1), nil
}

func fnReplace(_ *evalCtx, a []any) (any, error) {
	s, from, to := a[0].(string), a[1].(string), a[2].(string)
	if from == "" {
		return s, nil
	}
	return strings.ReplaceAll(s, from, to), nil
}

func trimmer(trim func(string, string) string) builtin {
	return func(_ *evalCtx, a []any) (any, error) {
		chars := " "
		if len(a) > 1 {
			chars = a[1].(string)
		}
		return trim(a[0].(string), chars), nil
	}
}

func fnSplitPart(_ *evalCtx, a []any) (any, error) {
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

func padder(left bool) builtin {
	return func(_ *evalCtx, a []any) (any, error) {
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

func fnRepeat(_ *evalCtx, a []any) (any, error) {
	s, n := a[0].(string), a[1].(int64)
	if n <= 0 || s == "" {
		return "", nil
	}
	if n > maxBuiltLen/int64(len(s)) {
		return nil, pgerror.New(pgerror.CodeProgramLimitExceeded, "requested length too large")
	}
	return strings.Repeat(s, int(n)), nil
}

func fnReverse(_ *evalCtx, a []any) (any, error) {
	r := []rune(a[0].(string))
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r), nil
}

// fnInitcap upper-cases the first letter of each run of letters and
// digits and lower-cases the rest.
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
func quoteIdent(s string) string {
	return sql.QuoteIdentIfNeeded(s, func(w string) bool { return reservedWords[w] })
}

// reservedWords are PostgreSQL 15's reserved keywords (and those that may
// not be column names), which quote_ident quotes.
var reservedWords = func() map[string]bool {
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

func fnInitcap(_ *evalCtx, a []any) (any, error) {
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

func fnChr(_ *evalCtx, a []any) (any, error) {
	n := a[0].(int64)
	switch {
	case n == 0:
		return nil, pgerror.New(pgerror.CodeProgramLimitExceeded, "null character not permitted")
	case n < 0 || n > unicode.MaxRune || !utf8.ValidRune(rune(n)):
		return nil, pgerror.Newf(pgerror.CodeProgramLimitExceeded, "requested character not valid for encoding: %d", n)
	}
	return string(rune(n)), nil
}

func fnPower(_ *evalCtx, a []any) (any, error) {
	x, y := a[0].(float64), a[1].(float64)
	if x == 0 && y < 0 {
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForPower, "zero raised to a negative power is undefined")
	}
	if x < 0 && y != math.Trunc(y) {
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	return math.Pow(x, y), nil
}

func logOf(x float64, f func(float64) float64) (any, error) {
	switch {
	case x == 0:
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForLog, "cannot take logarithm of zero")
	case x < 0:
		return nil, pgerror.New(pgerror.CodeInvalidArgumentForLog, "cannot take logarithm of a negative number")
	}
	return f(x), nil
}

func fnMod(_ *evalCtx, a []any) (any, error) {
	if x, ok := a[0].(int64); ok {
		if y, ok := a[1].(int64); ok {
			return values.IntArith("%", x, y)
		}
	}
	x, err := values.ToNumeric(a[0])
	if err != nil {
		return nil, err
	}
	y, err := values.ToNumeric(a[1])
	if err != nil {
		return nil, err
	}
	return values.NumericArith("%", x, y)
}

func fnSign(_ *evalCtx, a []any) (any, error) {
	switch x := a[0].(type) {
	case int64:
		switch {
		case x > 0:
			return int64(1), nil
		case x < 0:
			return int64(-1), nil
		}
		return int64(0), nil
	case float64:
		switch {
		case x > 0:
			return 1.0, nil
		case x < 0:
			return -1.0, nil
		}
		return 0.0, nil
	case *apd.Decimal:
		if x.Form == apd.NaN {
			return x, nil
		}
		return values.NumericFromInt(int64(x.Sign())), nil
	}
	return nil, pgerror.Newf(pgerror.CodeUndefinedFunction, "function sign(%T) does not exist", a[0])
}

// fnDateTrunc truncates in UTC, the zone zoneless literals are read in.
func fnDateTrunc(_ *evalCtx, a []any) (any, error) {
	unit, t := strings.ToLower(a[0].(string)), a[1].(time.Time).UTC()
	y, mo, d := t.Date()
	day := func(y int, mo time.Month, d int) time.Time { return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC) }
	switch unit {
	case "microseconds":
		return t.Truncate(time.Microsecond), nil
	case "milliseconds":
		return t.Truncate(time.Millisecond), nil
	case "second":
		return t.Truncate(time.Second), nil
	case "minute":
		return t.Truncate(time.Minute), nil
	case "hour":
		return t.Truncate(time.Hour), nil
	case "day":
		return day(y, mo, d), nil
	case "week": // ISO weeks start on Monday
		return day(y, mo, d-(int(t.Weekday())+6)%7), nil
	case "month":
		return day(y, mo, 1), nil
	case "quarter":
		return day(y, mo-(mo-1)%3, 1), nil
	case "year":
		return day(y, 1, 1), nil
	case "decade":
		return day(y-y%10, 1, 1), nil
	case "century":
		return day((y-1)/100*100+1, 1, 1), nil
	case "millennium":
		return day((y-1)/1000*1000+1, 1, 1), nil
	}
	return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unit \"%s\" not recognized for type timestamp with time zone", unit)
}

// fnUUID returns a random (version 4) UUID in its text form.
func fnUUID(*evalCtx, []any) (any, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return nil, pgerror.AssertionFailed("reading random bytes: %v", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:]), nil
}
