package parser

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseInterval parses a duration written as an ISO 8601 duration
// (PT30S, P2D, PT1H30M, P1DT12H, -PT5M; W = 7 days, M = 30 days, Y = 365
// days in the date part), as a PostgreSQL interval ('30 seconds',
// '1 hour 30 minutes', '2 days 01:00:00', '00:05:00', '-1 day') or as a Go
// duration ('5s', '1h30m'). The planner uses it for string option values
// too (WAIT = '5s').
func ParseInterval(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	bad := fmt.Errorf("invalid input syntax for type interval: %q", s)
	if in == "" {
		return 0, bad
	}
	body := strings.TrimPrefix(strings.TrimPrefix(in, "-"), "+")
	if len(body) > 0 && (body[0] == 'P' || body[0] == 'p') {
		d, ok := parseISODuration(body[1:])
		if !ok {
			return 0, bad
		}
		if in[0] == '-' {
			d = -d
		}
		return d, nil
	}
	if d, err := time.ParseDuration(in); err == nil {
		return d, nil
	}
	d, ok := parsePGInterval(in)
	if !ok {
		return 0, bad
	}
	return d, nil
}

var isoUnits = map[byte]float64{
	'Y': 365 * 24 * float64(time.Hour), 'W': 7 * 24 * float64(time.Hour),
	'D': 24 * float64(time.Hour), 'H': float64(time.Hour), 'S': float64(time.Second),
}

func parseISODuration(s string) (time.Duration, bool) {
	var total float64
	inTime, any := false, false
	for len(s) > 0 {
		c := s[0]
		if c == 'T' || c == 't' {
			if inTime || len(s) == 1 {
				return 0, false
			}
			inTime = true
			s = s[1:]
			continue
		}
		j := 0
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == ',') {
			j++
		}
		if j == 0 || j == len(s) {
			return 0, false
		}
		n, err := strconv.ParseFloat(strings.Replace(s[:j], ",", ".", 1), 64)
		if err != nil {
			return 0, false
		}
		u := s[j] &^ 0x20 // upper-case
		var mult float64
		switch {
		case u == 'M' && inTime:
			mult = float64(time.Minute)
		case u == 'M':
			mult = 30 * 24 * float64(time.Hour)
		case (u == 'H' || u == 'S') && !inTime, (u == 'Y' || u == 'W' || u == 'D') && inTime:
			return 0, false
		default:
			var ok bool
			if mult, ok = isoUnits[u]; !ok {
				return 0, false
			}
		}
		total += n * mult
		any = true
		s = s[j+1:]
	}
	if !any || math.Abs(total) > math.MaxInt64 {
		return 0, false
	}
	return time.Duration(total), true
}

var pgUnits = map[string]time.Duration{
	"microsecond": time.Microsecond, "us": time.Microsecond, "usec": time.Microsecond,
	"millisecond": time.Millisecond, "ms": time.Millisecond, "msec": time.Millisecond,
	"second": time.Second, "s": time.Second, "sec": time.Second,
	"minute": time.Minute, "m": time.Minute, "min": time.Minute,
	"hour": time.Hour, "h": time.Hour, "hr": time.Hour,
	"day": 24 * time.Hour, "d": 24 * time.Hour,
	"week": 7 * 24 * time.Hour, "w": 7 * 24 * time.Hour,
	"month": 30 * 24 * time.Hour, "mon": 30 * 24 * time.Hour,
	"year": 365 * 24 * time.Hour, "y": 365 * 24 * time.Hour, "yr": 365 * 24 * time.Hour,
}

func parsePGInterval(s string) (time.Duration, bool) {
	f := strings.Fields(strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "@")))
	ago := false
	if len(f) > 0 && f[len(f)-1] == "ago" {
		ago, f = true, f[:len(f)-1]
	}
	if len(f) == 0 {
		return 0, false
	}
	var total float64
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			d, ok := parseClock(f[i])
			if !ok {
				return 0, false
			}
			total += float64(d)
			continue
		}
		num, unit := f[i], ""
		if k := strings.IndexFunc(num, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' }); k > 0 {
			num, unit = f[i][:k], f[i][k:]
		} else if i+1 < len(f) {
			i++
			unit = f[i]
		} else {
			unit = "second" // PostgreSQL reads a bare number as seconds
		}
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, false
		}
		u, ok := pgUnits[unit]
		if !ok && len(unit) > 1 && unit[len(unit)-1] == 's' {
			u, ok = pgUnits[unit[:len(unit)-1]]
		}
		if !ok {
			return 0, false
		}
		total += n * float64(u)
	}
	if ago {
		total = -total
	}
	if math.Abs(total) > math.MaxInt64 {
		return 0, false
	}
	return time.Duration(total), true
}

// parseClock parses [-]hh:mm[:ss[.frac]].
func parseClock(s string) (time.Duration, bool) {
	neg := strings.HasPrefix(s, "-")
	parts := strings.Split(strings.TrimLeft(s, "+-"), ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	var d float64
	mult := []float64{float64(time.Hour), float64(time.Minute), float64(time.Second)}
	for i, p := range parts {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil || n < 0 || p == "" {
			return 0, false
		}
		d += n * mult[i]
	}
	if neg {
		d = -d
	}
	return time.Duration(d), true
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// ParseTime parses a Datetime('...') / Timestamp('...') / TIMESTAMPTZ '...'
// value: RFC 3339, with a space instead of T, or a date; no zone means UTC.
func ParseTime(s string) (time.Time, error) {
	in := strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, in); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid input syntax for type timestamp: %q", s)
}
