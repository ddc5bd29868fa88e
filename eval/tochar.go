package eval

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"topicgate/sql/pgerror"
)

// fnToChar formats a timestamptz (in the session's TimeZone) or a date with
// PostgreSQL's template patterns: HH HH12 HH24 MI SS MS US AM PM YYYY YYY
// YY Y MONTH Month month MON Mon mon MM DAY Day day DY Dy dy DDD DD D ID
// W WW Q CC TZ tz OF, the FM prefix (no padding), "quoted text" and \
// escapes; other characters are copied. Numbers are not supported.
func fnToChar(ctx Context, a []any) (any, error) {
	switch t := a[0].(type) {
	case civilDate: // a date is a calendar day: no zone to convert to
		return formatTemplate(time.Time(t), a[1].(string)), nil
	case time.Time:
		if loc := ctx.Location(); loc != nil {
			t = t.In(loc)
		}
		return formatTemplate(t, a[1].(string)), nil
	}
	return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "to_char is supported for timestamps and dates only")
}

// civilDate marks a date argument (call wraps it), which to_char must
// not move into the session's time zone.
type civilDate time.Time

// toCharPatterns are tried longest first at each position.
var toCharPatterns = []string{
	"MONTH", "Month", "month", "HH24", "HH12", "YYYY", "DAY", "Day", "day",
	"MON", "Mon", "mon", "YYY", "DDD", "HH", "MI", "SS", "MS", "US", "AM", "am",
	"PM", "pm", "YY", "MM", "DY", "Dy", "dy", "DD", "ID", "WW", "CC", "TZ", "tz",
	"OF", "Y", "D", "W", "Q",
}

func formatTemplate(t time.Time, tmpl string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); {
		fm := false
		if strings.HasPrefix(tmpl[i:], "FM") || strings.HasPrefix(tmpl[i:], "fm") {
			fm, i = true, i+2
		}
		switch c := tmpl[i:]; {
		case c == "":
			continue
		case c[0] == '"':
			end := strings.IndexByte(c[1:], '"')
			if end < 0 {
				b.WriteString(c[1:])
				i = len(tmpl)
			} else {
				b.WriteString(c[1 : 1+end])
				i += end + 2
			}
			continue
		case c[0] == '\\' && len(c) > 1:
			b.WriteByte(c[1])
			i += 2
			continue
		}
		p := matchPattern(tmpl[i:])
		if p == "" {
			b.WriteByte(tmpl[i])
			i++
			continue
		}
		b.WriteString(formatField(t, p, fm))
		i += len(p)
	}
	return b.String()
}

func matchPattern(s string) string {
	for _, p := range toCharPatterns {
		if strings.HasPrefix(s, p) {
			return p
		}
		// Numeric fields also match in lower case (yyyy-mm-dd).
		if lp := strings.ToLower(p); lp != p && isNumericField(p) && strings.HasPrefix(s, lp) {
			return p
		}
	}
	return ""
}

func isNumericField(p string) bool {
	switch p {
	case "HH24", "HH12", "YYYY", "YYY", "DDD", "HH", "MI", "SS", "MS", "US", "YY", "MM", "DD", "ID", "WW", "CC", "Y", "D", "W", "Q":
		return true
	}
	return false
}

func formatField(t time.Time, p string, fm bool) string {
	num := func(v, width int) string {
		if fm {
			return strconv.Itoa(v)
		}
		return fmt.Sprintf("%0*d", width, v)
	}
	word := func(s string) string {
		if fm || len(s) >= 9 {
			return s
		}
		return s + strings.Repeat(" ", 9-len(s))
	}
	h12 := t.Hour() % 12
	if h12 == 0 {
		h12 = 12
	}
	switch p {
	case "HH", "HH12":
		return num(h12, 2)
	case "HH24":
		return num(t.Hour(), 2)
	case "MI":
		return num(t.Minute(), 2)
	case "SS":
		return num(t.Second(), 2)
	case "MS":
		return num(t.Nanosecond()/1e6, 3)
	case "US":
		return num(t.Nanosecond()/1e3, 6)
	case "AM", "PM":
		return map[bool]string{true: "PM", false: "AM"}[t.Hour() >= 12]
	case "am", "pm":
		return map[bool]string{true: "pm", false: "am"}[t.Hour() >= 12]
	case "YYYY":
		return num(t.Year(), 4)
	case "YYY":
		return num(t.Year()%1000, 3)
	case "YY":
		return num(t.Year()%100, 2)
	case "Y":
		return strconv.Itoa(t.Year() % 10)
	case "MONTH", "Month", "month":
		return word(cased(t.Month().String(), p))
	case "MON", "Mon", "mon":
		return cased(t.Month().String()[:3], p)
	case "MM":
		return num(int(t.Month()), 2)
	case "DAY", "Day", "day":
		return word(cased(t.Weekday().String(), p))
	case "DY", "Dy", "dy":
		return cased(t.Weekday().String()[:3], p)
	case "DDD":
		return num(t.YearDay(), 3)
	case "DD":
		return num(t.Day(), 2)
	case "D":
		return strconv.Itoa(int(t.Weekday()) + 1)
	case "ID":
		return strconv.Itoa((int(t.Weekday())+6)%7 + 1)
	case "W":
		return strconv.Itoa((t.Day()-1)/7 + 1)
	case "WW":
		return num((t.YearDay()-1)/7+1, 2)
	case "Q":
		return strconv.Itoa((int(t.Month())-1)/3 + 1)
	case "CC":
		return num((t.Year()+99)/100, 2)
	case "TZ", "tz":
		name, _ := t.Zone()
		if p == "tz" {
			return strings.ToLower(name)
		}
		return name
	case "OF":
		_, off := t.Zone()
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		if off%3600 != 0 {
			return fmt.Sprintf("%s%02d:%02d", sign, off/3600, off%3600/60)
		}
		return fmt.Sprintf("%s%02d", sign, off/3600)
	}
	return p
}

// cased writes a name (January, Monday) in the case of its pattern:
// MONTH is upper, month lower, Month as the name is.
func cased(name, pattern string) string {
	switch pattern {
	case strings.ToUpper(pattern):
		return strings.ToUpper(name)
	case strings.ToLower(pattern):
		return strings.ToLower(name)
	}
	return name
}
