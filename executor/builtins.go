package executor

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"topicgate/planner"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

type builtin func(ec *evalCtx, args []any) (any, error)

// builtins are the implementations of planner.Builtins, by name; init
// registers each at its declaration's ID in impls. Arguments arrive
// already converted to the planner's declared types; a NULL argument makes
// the result NULL unless the declaration is NullAware.
var builtins map[string]builtin

// impls[b.ID] implements planner.BuiltinList[b.ID]; registerBuiltins
// fills every slot or panics, so an executor whose implementations and the
// planner's declarations differ never starts.
var impls []builtin

func init() {
	builtins = map[string]builtin{
		"length":       fnLength,
		"char_length":  fnLength,
		"octet_length": func(_ *evalCtx, a []any) (any, error) { return int64(len(asBytes(a[0]))), nil },
		"convert_from": func(_ *evalCtx, a []any) (any, error) {
			b := a[0].([]byte)
			if enc := strings.ToUpper(a[1].(string)); enc != "UTF8" && enc != "UTF-8" && enc != "SQL_ASCII" && enc != "LATIN1" {
				return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid source encoding name \"%s\"", a[1])
			}
			if !utf8.Valid(b) {
				return nil, pgerror.New("22021", "invalid byte sequence for encoding \"UTF8\"")
			}
			return string(b), nil
		},
		"convert_to": func(_ *evalCtx, a []any) (any, error) { return []byte(a[0].(string)), nil },
		"encode":     fnEncode,
		"decode":     fnDecode,
		"lower":      func(_ *evalCtx, a []any) (any, error) { return strings.ToLower(a[0].(string)), nil },
		"upper":      func(_ *evalCtx, a []any) (any, error) { return strings.ToUpper(a[0].(string)), nil },
		"substr":     fnSubstr,
		"substring":  fnSubstr,
		"concat": func(_ *evalCtx, a []any) (any, error) {
			var b strings.Builder
			for _, v := range a {
				if v != nil {
					b.WriteString(values.FormatText(v))
				}
			}
			return b.String(), nil
		},
		"md5": func(_ *evalCtx, a []any) (any, error) {
			s := md5.Sum(asBytes(a[0]))
			return hex.EncodeToString(s[:]), nil
		},
		"now":                   fnNow,
		"current_timestamp":     fnNow,
		"statement_timestamp":   fnNow,
		"transaction_timestamp": fnNow,
		"clock_timestamp":       func(*evalCtx, []any) (any, error) { return time.Now().UTC(), nil },
		"to_timestamp": func(_ *evalCtx, a []any) (any, error) {
			f := a[0].(float64)
			return time.Unix(0, int64(f*1e9)).UTC(), nil
		},
		"date_part": fnDatePart,
		"extract":   fnDatePart,
		"abs": func(_ *evalCtx, a []any) (any, error) {
			switch v := a[0].(type) {
			case int64:
				if v == math.MinInt64 {
					return nil, pgerror.New(pgerror.CodeNumericValueOutOfRange, "bigint out of range")
				}
				if v < 0 {
					return -v, nil
				}
				return v, nil
			case float64:
				return math.Abs(v), nil
			case *apd.Decimal:
				return new(apd.Decimal).Abs(v), nil
			}
			return a[0], nil
		},
		"round": func(_ *evalCtx, a []any) (any, error) {
			return numericRound(a, apd.RoundHalfUp, math.RoundToEven) // float8 rounds half to even, as PostgreSQL's rint
		},
		"floor":          func(_ *evalCtx, a []any) (any, error) { return numericFloorCeil(a, false, math.Floor) },
		"ceil":           func(_ *evalCtx, a []any) (any, error) { return numericFloorCeil(a, true, math.Ceil) },
		"to_hex":         func(_ *evalCtx, a []any) (any, error) { return fmt.Sprintf("%x", a[0].(int64)), nil },
		"pg_size_pretty": fnSizePretty,
		"version": func(*evalCtx, []any) (any, error) {
			return "PostgreSQL 15.0 (topicgate " + Version + ") on x86_64-pc-linux-gnu", nil
		},
		"current_database": func(ec *evalCtx, _ []any) (any, error) { return ec.sess.info.Database, nil },
		"current_schema":   func(*evalCtx, []any) (any, error) { return "public", nil },
		"current_user":     func(ec *evalCtx, _ []any) (any, error) { return ec.sess.info.User, nil },
		"session_user":     func(ec *evalCtx, _ []any) (any, error) { return ec.sess.info.User, nil },
		"current_setting": func(ec *evalCtx, a []any) (any, error) {
			if a[0] == nil {
				return nil, nil
			}
			v, ok := ec.sess.settings.get(a[0].(string))
			if !ok {
				if len(a) > 1 && a[1] == true {
					return nil, nil
				}
				return nil, pgerror.Newf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter \"%s\"", a[0])
			}
			return v, nil
		},
		"set_config": func(ec *evalCtx, a []any) (any, error) {
			name, _ := a[0].(string)
			val, _ := a[1].(string)
			local := len(a) > 2 && a[2] == true
			if err := ec.sess.settings.set(name, val, local); err != nil {
				return nil, err
			}
			v, _ := ec.sess.settings.get(paramName(name))
			return v, nil
		},
		"pg_backend_pid": func(ec *evalCtx, _ []any) (any, error) { return int64(ec.sess.info.ProcessID), nil },
		"jsonb_typeof": func(_ *evalCtx, a []any) (any, error) {
			s := strings.TrimSpace(a[0].(string))
			switch {
			case strings.HasPrefix(s, "{"):
				return "object", nil
			case strings.HasPrefix(s, "["):
				return "array", nil
			case strings.HasPrefix(s, "\""):
				return "string", nil
			case s == "true" || s == "false":
				return "boolean", nil
			case s == "null":
				return "null", nil
			}
			return "number", nil
		},
		"jsonb_pretty": func(_ *evalCtx, a []any) (any, error) {
			var v any
			if err := json.Unmarshal([]byte(a[0].(string)), &v); err != nil {
				return nil, err
			}
			b, _ := json.MarshalIndent(v, "", "    ")
			return string(b), nil
		},
		"to_jsonb": func(_ *evalCtx, a []any) (any, error) {
			var v any = a[0]
			if b, ok := v.([]byte); ok {
				v = values.FormatText(b)
			}
			b, _ := json.Marshal(v)
			return string(b), nil
		},
		"array_length": func(_ *evalCtx, a []any) (any, error) { return arrayLen(a[0]), nil },
		"cardinality": func(_ *evalCtx, a []any) (any, error) { // 0 for an empty array
			if n := arrayLen(a[0]); n != nil {
				return n, nil
			}
			return int64(0), nil
		},
		"greatest": func(_ *evalCtx, a []any) (any, error) { return extreme(a, 1) },
		"least":    func(_ *evalCtx, a []any) (any, error) { return extreme(a, -1) },
	}
	for _, m := range []map[string]builtin{commonBuiltins, pgCatalogFns, pgDescribeFns} {
		for name, fn := range m {
			if _, dup := builtins[name]; dup {
				panic("builtin " + name + " is implemented twice")
			}
			builtins[name] = fn
		}
	}
	impls = registerBuiltins(builtins)
}

// registerBuiltins keys each implementation by the planner's declaration
// of the same name: one without a declaration, or a declaration without an
// implementation, is a programming error caught before anything runs.
func registerBuiltins(fns map[string]builtin) []builtin {
	out := make([]builtin, len(planner.BuiltinList))
	for name, fn := range fns {
		b, ok := planner.Builtins[name]
		if !ok {
			panic("builtin " + name + " is implemented but not declared in planner.Builtins")
		}
		out[b.ID] = fn
	}
	for _, b := range planner.BuiltinList {
		if out[b.ID] == nil {
			panic("builtin " + b.Name + " is declared in planner.Builtins but not implemented")
		}
	}
	return out
}

func asBytes(v any) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return []byte(values.FormatText(v))
}

func fnLength(_ *evalCtx, a []any) (any, error) {
	switch x := a[0].(type) {
	case []byte:
		return int64(len(x)), nil
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	}
	return int64(len(values.FormatText(a[0]))), nil
}

func fnEncode(_ *evalCtx, a []any) (any, error) {
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

func fnDecode(_ *evalCtx, a []any) (any, error) {
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

func fnSubstr(_ *evalCtx, a []any) (any, error) {
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

func fnNow(ec *evalCtx, _ []any) (any, error) { return ec.now, nil }

func fnDatePart(_ *evalCtx, a []any) (any, error) {
	field := strings.ToLower(a[0].(string))
	switch v := a[1].(type) {
	case time.Time:
		v = v.UTC()
		switch field {
		case "epoch":
			return float64(v.UnixMicro()) / 1e6, nil
		case "year":
			return float64(v.Year()), nil
		case "month":
			return float64(v.Month()), nil
		case "day":
			return float64(v.Day()), nil
		case "hour":
			return float64(v.Hour()), nil
		case "minute":
			return float64(v.Minute()), nil
		case "second":
			return float64(v.Second()) + float64(v.Nanosecond())/1e9, nil
		case "dow":
			return float64(v.Weekday()), nil
		case "doy":
			return float64(v.YearDay()), nil
		}
	case time.Duration:
		// An interval's fields, as PostgreSQL splits '1 day 02:03:04.5'
		// (intervals are held as days and a time of day here).
		day := 24 * time.Hour
		sign := time.Duration(1)
		if v < 0 {
			sign, v = -1, -v
		}
		rest := v % day
		switch field {
		case "epoch":
			return (sign * v).Seconds(), nil
		case "day", "days":
			return float64(sign * v / day), nil
		case "hour", "hours":
			return float64(sign * rest / time.Hour), nil
		case "minute", "minutes":
			return float64(sign * (rest % time.Hour) / time.Minute), nil
		case "second", "seconds":
			return float64(sign*(rest%time.Minute)) / float64(time.Second), nil
		case "milliseconds":
			return float64(sign*(rest%time.Minute)) / float64(time.Millisecond), nil
		case "microseconds":
			return float64(sign * (rest % time.Minute) / time.Microsecond), nil
		}
	case string:
		t, err := values.ParseTimestamp(v)
		if err != nil {
			return nil, err
		}
		return fnDatePart(nil, []any{a[0], t})
	}
	return nil, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unit \"%s\" not supported", field)
}

func fnSizePretty(_ *evalCtx, a []any) (any, error) {
	n := a[0].(int64)
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	v := n
	i := 0
	for i < len(units)-1 && (v >= 10240 || v <= -10240) {
		v = (v + 512) / 1024
		i++
	}
	return fmt.Sprintf("%d %s", v, units[i]), nil
}

// arrayLen is an array's length; an empty array has no dimension, so
// its length is NULL, as in PostgreSQL.
func arrayLen(v any) any {
	n := -1
	switch x := v.(type) {
	case []int64:
		n = len(x)
	case []string:
		n = len(x)
	case []bool:
		n = len(x)
	}
	if n <= 0 {
		return nil
	}
	return int64(n)
}

func extreme(a []any, sign int) (any, error) {
	var best any
	for _, v := range a {
		if v == nil {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		c, err := values.Compare(v, best)
		if err != nil {
			return nil, err
		}
		if c*sign > 0 {
			best = v
		}
	}
	return best, nil
}

func (ec *evalCtx) evalFunc(x *planner.FuncExpr, r row) (any, error) {
	if x.Fn == nil {
		return nil, pgerror.AssertionFailed("builtin %s was planned without its declaration", x.Name)
	}
	fn := impls[x.Fn.ID]
	var buf [4]any
	args := buf[:0]
	for _, a := range x.Args {
		v, err := ec.eval(a, r)
		if err != nil {
			return nil, err
		}
		if v == nil && !x.Fn.NullAware {
			return nil, nil
		}
		args = append(args, v)
	}
	if x.Name == "to_char" && x.Args[0].Type() == values.TDate {
		if t, ok := args[0].(time.Time); ok {
			args[0] = civilDate(t)
		}
	}
	return fn(ec, args)
}
