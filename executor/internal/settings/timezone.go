package settings

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zone names work on machines without /usr/share/zoneinfo

	"topicgate/sql/pgerror"
)

// parseTimeZone resolves a TimeZone setting: UTC/GMT, an IANA zone name,
// a number of hours east of UTC ("9", "-3.5"), or an offset with minutes
// ("-3:30", "+05:45"), as SET TIME ZONE takes it. As in PostgreSQL, only
// a plain number is hours east (SQL's sign); PostgreSQL reads anything
// else as a POSIX zone, whose offsets count hours west: '-3:30' is UTC+3:30
// and prints with no abbreviation. POSIX-style names with offsets
// ("UTC+3") and intervals are not supported.
func parseTimeZone(v string) (*time.Location, error) {
	name := strings.TrimSpace(v)
	switch strings.ToUpper(name) {
	case "UTC", "GMT", "Z", "ZULU", "UCT", "LOCAL", "DEFAULT", "ETC/UTC":
		return time.UTC, nil
	}
	if off, ok := parseHourOffset(name); ok {
		if strings.Contains(name, ":") {
			return time.FixedZone("", -off), nil
		}
		return time.FixedZone(offsetAbbrev(off), off), nil
	}
	if strings.ContainsAny(name, " ,") || name == "" {
		return nil, badTimeZone(v)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, badTimeZone(v)
	}
	return loc, nil
}

func badTimeZone(v string) error {
	return pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid value for parameter \"TimeZone\": \"%s\"", v)
}

// offsetAbbrev is the abbreviation PostgreSQL gives the zone of a plain
// number of hours: "+09", "-03:30".
func offsetAbbrev(off int) string {
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	s := fmt.Sprintf("%c%02d", sign, off/3600)
	if m, sec := off%3600/60, off%60; m != 0 || sec != 0 {
		s += fmt.Sprintf(":%02d", m)
		if sec != 0 {
			s += fmt.Sprintf(":%02d", sec)
		}
	}
	return s
}

// parseHourOffset parses [+-]H[H][:MM] or a decimal number of hours.
func parseHourOffset(s string) (int, bool) {
	if s == "" || !strings.ContainsAny(s[:1], "+-0123456789") {
		return 0, false
	}
	sign := 1
	body := s
	switch s[0] {
	case '-':
		sign, body = -1, s[1:]
	case '+':
		body = s[1:]
	}
	var secs int
	if h, m, ok := strings.Cut(body, ":"); ok {
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm >= 60 || len(m) != 2 {
			return 0, false
		}
		secs = hh*3600 + mm*60
	} else {
		f, err := strconv.ParseFloat(body, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, false
		}
		secs = int(f * 3600)
	}
	if secs > 15*3600 {
		return 0, false
	}
	return sign * secs, true
}
