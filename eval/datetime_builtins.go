package eval

import (
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// datetimeBuiltins are the functions over dates, timestamps and intervals
// (to_char's templates are in tochar.go).
var datetimeBuiltins = map[string]Func{
	"now":                   fnNow,
	"current_timestamp":     fnNow,
	"statement_timestamp":   fnNow,
	"transaction_timestamp": fnNow,
	"clock_timestamp":       func(Context, []any) (any, error) { return time.Now().UTC(), nil },
	"current_date":          func(ctx Context, _ []any) (any, error) { return values.DateOf(ctx.Now()), nil },
	"to_timestamp": func(_ Context, a []any) (any, error) {
		f := a[0].(float64)
		return time.Unix(0, int64(f*1e9)).UTC(), nil
	},
	"date_part":  fnDatePart,
	"extract":    fnDatePart,
	"date_trunc": fnDateTrunc,
	"to_char":    fnToChar,
}

func fnNow(ctx Context, _ []any) (any, error) { return ctx.Now(), nil }

func fnDatePart(_ Context, a []any) (any, error) {
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

// fnDateTrunc truncates in UTC, the zone zoneless literals are read in.
func fnDateTrunc(_ Context, a []any) (any, error) {
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
