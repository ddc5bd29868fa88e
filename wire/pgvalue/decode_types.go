package pgvalue

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"topicgate/sql/values"
)

var timestampRE = regexp.MustCompile(`^(\d{4,})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?(?::?\d{2})?)?$`)

// parseTimestamp parses ISO-style timestamps as PostgreSQL prints and
// accepts them. A timestamptz without a zone is taken as UTC; a timestamp
// ignores any zone. The result is in UTC.
func parseTimestamp(s string, tz bool) (any, error) {
	m := timestampRE.FindStringSubmatch(strings.TrimSpace(s))
	bad := newError("22007", fmt.Sprintf("invalid input syntax for type %s: %q", typeName(map[bool]uint32{true: values.OIDTimestamptz, false: values.OIDTimestamp}[tz]), s))
	if m == nil {
		return nil, bad
	}
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	y, mo, d := atoi(m[1]), atoi(m[2]), atoi(m[3])
	h, mi, sec := atoi(m[4]), atoi(m[5]), atoi(m[6])
	ns := 0
	if m[7] != "" {
		ns = atoi((m[7] + "000000000")[:9])
	}
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 24 || mi > 59 || sec > 60 {
		return nil, newError("22008", fmt.Sprintf("date/time field value out of range: %q", s))
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if t.Day() != d && h != 24 {
		return nil, newError("22008", fmt.Sprintf("date/time field value out of range: %q", s))
	}
	if z := m[8]; tz && z != "" && z != "Z" && z != "z" && z != "UTC" && z != "GMT" {
		sign := 1
		if z[0] == '-' {
			sign = -1
		}
		digits := strings.ReplaceAll(z[1:], ":", "")
		var off int
		switch len(digits) {
		case 1, 2:
			off = atoi(digits) * 3600
		case 3, 4:
			off = atoi(digits[:len(digits)-2])*3600 + atoi(digits[len(digits)-2:])*60
		default:
			off = atoi(digits[:len(digits)-4])*3600 + atoi(digits[len(digits)-4:len(digits)-2])*60 + atoi(digits[len(digits)-2:])
		}
		t = t.Add(-time.Duration(sign*off) * time.Second)
	}
	return t.Round(time.Microsecond), nil
}

var intervalUnits = map[string]string{
	"microsecond": "us", "microseconds": "us", "us": "us", "usec": "us", "usecs": "us",
	"millisecond": "ms", "milliseconds": "ms", "ms": "ms", "msec": "ms", "msecs": "ms",
	"second": "s", "seconds": "s", "s": "s", "sec": "s", "secs": "s",
	"minute": "min", "minutes": "min", "m": "min", "min": "min", "mins": "min",
	"hour": "h", "hours": "h", "h": "h", "hr": "h", "hrs": "h",
	"day": "d", "days": "d", "d": "d",
	"week": "w", "weeks": "w", "w": "w",
	"month": "mon", "months": "mon", "mon": "mon", "mons": "mon",
	"year": "y", "years": "y", "y": "y", "yr": "y", "yrs": "y",
	"decade": "dec", "decades": "dec", "century": "c", "centuries": "c",
	"millennium": "mil", "millennia": "mil",
}

// parseInterval accepts PostgreSQL's postgres-style input ("1 day 02:00:00",
// "30 seconds", "@ 1 hour ago", "-00:00:30", a bare number of seconds) and
// ISO 8601 durations ("PT30S", "P1DT2H").
func parseInterval(s string) (any, error) {
	bad := newError("22007", fmt.Sprintf("invalid input syntax for type interval: %q", s))
	t := strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(t, "p") {
		return parseISOInterval(t, bad)
	}
	t = strings.TrimPrefix(t, "@")
	fields := strings.Fields(t)
	if len(fields) == 0 {
		return nil, bad
	}
	var iv Interval
	var fracUS float64
	ago := false
	if fields[len(fields)-1] == "ago" {
		ago = true
		fields = fields[:len(fields)-1]
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			us, err := parseClock(f)
			if err != nil {
				return nil, bad
			}
			iv.Microseconds += us
			continue
		}
		// Number with the unit attached ("30s") or in the next field.
		j := 0
		for j < len(f) && (f[j] == '-' || f[j] == '+' || f[j] == '.' || (f[j] >= '0' && f[j] <= '9')) {
			j++
		}
		num, unit := f[:j], f[j:]
		if unit == "" && i+1 < len(fields) {
			if _, ok := intervalUnits[fields[i+1]]; ok {
				unit = fields[i+1]
				i++
			}
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsInf(v, 0) || math.Abs(v) > 1e15 {
			return nil, bad
		}
		if unit == "" {
			unit = "s"
		}
		u, ok := intervalUnits[unit]
		if !ok {
			return nil, bad
		}
		addIntervalUnit(&iv, &fracUS, v, u)
	}
	iv.Microseconds += int64(math.Round(fracUS))
	if ago {
		iv = Interval{Months: -iv.Months, Days: -iv.Days, Microseconds: -iv.Microseconds}
	}
	return iv, nil
}

func addIntervalUnit(iv *Interval, fracUS *float64, v float64, u string) {
	const usPerDay = 86400e6
	switch u {
	case "us":
		*fracUS += v
	case "ms":
		*fracUS += v * 1e3
	case "s":
		*fracUS += v * 1e6
	case "min":
		*fracUS += v * 60e6
	case "h":
		*fracUS += v * 3600e6
	case "d", "w":
		if u == "w" {
			v *= 7
		}
		whole := math.Trunc(v)
		iv.Days += int32(whole)
		*fracUS += (v - whole) * usPerDay
	case "mon", "y", "dec", "c", "mil":
		months := v * map[string]float64{"mon": 1, "y": 12, "dec": 120, "c": 1200, "mil": 12000}[u]
		whole := math.Trunc(months)
		iv.Months += int32(whole)
		days := (months - whole) * 30
		wd := math.Trunc(days)
		iv.Days += int32(wd)
		*fracUS += (days - wd) * usPerDay
	}
}

// parseClock parses [-]h:mm[:ss[.ffffff]] into microseconds.
func parseClock(f string) (int64, error) {
	neg := strings.HasPrefix(f, "-")
	f = strings.TrimLeft(f, "+-")
	parts := strings.Split(f, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("bad time")
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || h < 0 || h > 2562047788 || m < 0 || m > 59 {
		return 0, fmt.Errorf("bad time")
	}
	us := (h*3600 + m*60) * 1e6
	if len(parts) == 3 {
		sec, err := strconv.ParseFloat(parts[2], 64)
		if err != nil || sec < 0 || sec >= 60 {
			return 0, fmt.Errorf("bad time")
		}
		us += int64(math.Round(sec * 1e6))
	}
	if neg {
		us = -us
	}
	return us, nil
}

func parseISOInterval(t string, bad error) (any, error) {
	var iv Interval
	var fracUS float64
	inTime := false
	rest := t[1:]
	if rest == "" {
		return nil, bad
	}
	for rest != "" {
		if rest[0] == 't' {
			inTime = true
			rest = rest[1:]
			continue
		}
		j := 0
		for j < len(rest) && (rest[j] == '-' || rest[j] == '+' || rest[j] == '.' || (rest[j] >= '0' && rest[j] <= '9')) {
			j++
		}
		if j == 0 || j == len(rest) {
			return nil, bad
		}
		v, err := strconv.ParseFloat(rest[:j], 64)
		if err != nil || math.Abs(v) > 1e15 {
			return nil, bad
		}
		var u string
		switch c := rest[j]; {
		case c == 'y' && !inTime:
			u = "y"
		case c == 'm' && !inTime:
			u = "mon"
		case c == 'w' && !inTime:
			u = "w"
		case c == 'd' && !inTime:
			u = "d"
		case c == 'h' && inTime:
			u = "h"
		case c == 'm' && inTime:
			u = "min"
		case c == 's' && inTime:
			u = "s"
		default:
			return nil, bad
		}
		addIntervalUnit(&iv, &fracUS, v, u)
		rest = rest[j+1:]
	}
	iv.Microseconds += int64(math.Round(fracUS))
	return iv, nil
}
