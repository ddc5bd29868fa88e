package values

import (
	"strconv"
	"strings"
	"time"

	"topicgate/sql/pgerror"
)

// DateStyle is PostgreSQL's DateStyle setting: how dates and timestamps
// print as text (Output) and how a date whose fields are ambiguous
// ('01/02/2024') reads (Order). The zero value is the default, "ISO, MDY",
// which the wire layer and FormatText print on their own fast paths.
type DateStyle struct {
	Output DateOutput
	Order  DateOrder
}

// DateOutput is DateStyle's output part.
type DateOutput uint8

// The output styles: 2024-01-02 13:04:05+00, 01/02/2024 13:04:05 UTC,
// Tue Jan 02 13:04:05 2024 UTC, 02.01.2024 13:04:05 UTC.
const (
	DateISO DateOutput = iota
	DateSQL
	DatePostgres
	DateGerman
)

// DateOrder is DateStyle's input order of day, month and year.
type DateOrder uint8

// The field orders.
const (
	MDY DateOrder = iota
	DMY
	YMD
)

var dateOutputNames = [...]string{DateISO: "ISO", DateSQL: "SQL", DatePostgres: "Postgres", DateGerman: "German"}
var dateOrderNames = [...]string{MDY: "MDY", DMY: "DMY", YMD: "YMD"}

// String is the setting as SHOW prints it: "ISO, MDY".
func (ds DateStyle) String() string {
	return dateOutputNames[ds.Output] + ", " + dateOrderNames[ds.Order]
}

// ParseDateStyle reads a DateStyle as String prints it; ok false for
// anything else.
func ParseDateStyle(s string) (ds DateStyle, ok bool) {
	out, order, found := strings.Cut(s, ", ")
	if !found {
		return ds, false
	}
	o, ok1 := indexOf(dateOutputNames[:], out)
	r, ok2 := indexOf(dateOrderNames[:], order)
	return DateStyle{Output: DateOutput(o), Order: DateOrder(r)}, ok1 && ok2
}

func indexOf(names []string, s string) (int, bool) {
	for i, n := range names {
		if n == s {
			return i, true
		}
	}
	return 0, false
}

// StyledTime is a date or timestamp value to print in a DateStyle other
// than the default: the executor wraps a result's values in it for a
// session that set one, and the wire layer prints it (binary formats
// ignore the style).
type StyledTime struct {
	T     time.Time // a timestamptz already in the session's zone, or a date
	Style DateStyle
}

var shortDays = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
var shortMonths = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// AppendDate appends the date of t (its wall clock's day) as PostgreSQL's
// date_out prints it in style ds.
func AppendDate(buf []byte, t time.Time, ds DateStyle) []byte {
	y, m, d := t.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	switch ds.Output {
	case DateISO:
		buf = appendYMD(buf, y, int(m), d, '-')
	case DateSQL, DatePostgres:
		sep := byte('/')
		if ds.Output == DatePostgres {
			sep = '-'
		}
		buf = appendDayMonth(buf, int(m), d, ds.Order == DMY, sep)
		buf = append(buf, sep)
		buf = appendZeroPad(buf, y, 4)
	case DateGerman:
		buf = appendDayMonth(buf, int(m), d, true, '.')
		buf = append(buf, '.')
		buf = appendZeroPad(buf, y, 4)
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// AppendTimestamp appends t's wall clock as PostgreSQL's timestamp_out
// (tz false) or timestamptz_out (tz true, t in the session's zone) prints
// it in style ds.
func AppendTimestamp(buf []byte, t time.Time, tz bool, ds DateStyle) []byte {
	t = t.Round(time.Microsecond)
	y, mo, d := t.Date()
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	switch ds.Output {
	case DateISO:
		buf = appendYMD(buf, y, int(mo), d, '-')
		buf = append(buf, ' ')
		buf = appendClock(buf, t)
		if tz {
			_, off := t.Zone()
			buf = appendOffset(buf, off)
		}
	case DateSQL, DateGerman:
		if ds.Output == DateSQL {
			buf = appendDayMonth(buf, int(mo), d, ds.Order == DMY, '/')
			buf = append(buf, '/')
		} else {
			buf = appendDayMonth(buf, int(mo), d, true, '.')
			buf = append(buf, '.')
		}
		buf = appendZeroPad(buf, y, 4)
		buf = append(buf, ' ')
		buf = appendClock(buf, t)
		if tz {
			buf = appendZoneName(buf, t)
		}
	case DatePostgres:
		buf = append(buf, shortDays[t.Weekday()]...)
		buf = append(buf, ' ')
		if ds.Order == DMY {
			buf = appendZeroPad(buf, d, 2)
			buf = append(buf, ' ')
			buf = append(buf, shortMonths[mo-1]...)
		} else {
			buf = append(buf, shortMonths[mo-1]...)
			buf = append(buf, ' ')
			buf = appendZeroPad(buf, d, 2)
		}
		buf = append(buf, ' ')
		buf = appendClock(buf, t)
		buf = append(buf, ' ')
		buf = appendZeroPad(buf, y, 4)
		if tz {
			buf = appendZoneName(buf, t)
		}
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

func appendYMD(buf []byte, y, m, d int, sep byte) []byte {
	buf = appendZeroPad(buf, y, 4)
	buf = append(buf, sep)
	buf = appendZeroPad(buf, m, 2)
	buf = append(buf, sep)
	return appendZeroPad(buf, d, 2)
}

// appendDayMonth appends "mm<sep>dd", or "dd<sep>mm" when dayFirst.
func appendDayMonth(buf []byte, m, d int, dayFirst bool, sep byte) []byte {
	if dayFirst {
		m, d = d, m
	}
	buf = appendZeroPad(buf, m, 2)
	buf = append(buf, sep)
	return appendZeroPad(buf, d, 2)
}

// appendClock appends hh:mm:ss and the microseconds without trailing
// zeros.
func appendClock(buf []byte, t time.Time) []byte {
	h, mi, s := t.Clock()
	buf = appendZeroPad(buf, h, 2)
	buf = append(buf, ':')
	buf = appendZeroPad(buf, mi, 2)
	buf = append(buf, ':')
	buf = appendZeroPad(buf, s, 2)
	if us := t.Nanosecond() / 1000; us != 0 {
		buf = append(buf, '.')
		start := len(buf)
		buf = appendZeroPad(buf, us, 6)
		for len(buf) > start && buf[len(buf)-1] == '0' {
			buf = buf[:len(buf)-1]
		}
	}
	return buf
}

// appendZoneName appends " " and t's zone abbreviation, as the SQL,
// Postgres and German styles print a timestamptz's zone; a POSIX zone
// without one ('-3:30') leaves the space alone, as in PostgreSQL.
func appendZoneName(buf []byte, t time.Time) []byte {
	name, _ := t.Zone()
	buf = append(buf, ' ')
	return append(buf, name...)
}

// appendOffset appends +hh, with :mm and :ss only when not zero.
func appendOffset(buf []byte, off int) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	buf = append(buf, sign)
	buf = appendZeroPad(buf, off/3600, 2)
	if m, s := off/60%60, off%60; m != 0 || s != 0 {
		buf = append(buf, ':')
		buf = appendZeroPad(buf, m, 2)
		if s != 0 {
			buf = append(buf, ':')
			buf = appendZeroPad(buf, s, 2)
		}
	}
	return buf
}

func appendZeroPad(buf []byte, n, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

// ConvertIn is Convert in a session whose DateStyle is ds: a date or a
// timestamptz cast to text prints in ds's output style, and text cast to
// a date or a timestamptz reads its day, month and year in ds's order.
// Every other cast is Convert's.
func ConvertIn(v any, from, to Type, ds DateStyle) (any, error) {
	switch x := v.(type) {
	case time.Time:
		if !to.IsText() || ds.Output == DateISO {
			break
		}
		switch from {
		case TDate:
			return string(AppendDate(nil, x, ds)), nil
		case TTimestamptz:
			return string(AppendTimestamp(nil, x.UTC(), true, ds)), nil
		}
	case string:
		if (to == TDate || to == TTimestamptz) && (from.IsText() || from == TJSON || from == TJSONB) {
			return ParseTextIn(x, to, ds.Order)
		}
	}
	return Convert(v, from, to)
}

// ParseTextIn is ParseText with dates of numeric fields read in order
// (ParseText reads them month first, DateStyle's default).
func ParseTextIn(s string, t Type, order DateOrder) (any, error) {
	switch t {
	case TTimestamptz:
		return parseTimestampIn(s, order)
	case TDate:
		v, err := parseTimestampIn(s, order)
		if err != nil {
			return nil, dateError(err, s)
		}
		return DateOf(v), nil
	}
	return ParseText(s, t)
}

// dateError is the error of a date's input: PostgreSQL names the type
// date in a syntax error, but keeps an out-of-range field's message.
func dateError(err error, s string) error {
	if pe, ok := err.(*pgerror.Error); ok && pe.Code == codeDatetimeFieldOverflow {
		return err
	}
	return pgerror.Newf(pgerror.CodeInvalidDatetimeFormat, "invalid input syntax for type date: %q", s)
}

// DateOrderMatters reports whether s reads as a different date in some
// DateStyle order: its date is three numeric fields ('01/02/2024',
// '1-2-24', '02.01.2024 10:00') whose first is not a year of three digits
// or more.
func DateOrderMatters(s string) bool {
	f, _, ok := numericDateFields(strings.TrimSpace(s))
	return ok && len(f[0]) <= 2
}

// numericDateFields splits the date at the start of s into its three
// numeric fields, separated by the same one of / - or ., and returns
// what follows it (a time, a zone); ok false if s starts otherwise.
func numericDateFields(s string) (f [3]string, rest string, ok bool) {
	end := strings.IndexAny(s, " T")
	if end < 0 {
		end = len(s)
	}
	date, rest := s[:end], s[end:]
	sep := strings.IndexAny(date, "/-.")
	if sep <= 0 {
		return f, "", false
	}
	parts := strings.Split(date, date[sep:sep+1])
	if len(parts) != 3 {
		return f, "", false
	}
	for i, p := range parts {
		if p == "" || len(p) > 8 || strings.Trim(p, "0123456789") != "" {
			return f, "", false
		}
		f[i] = p
	}
	return f, rest, true
}

// parseTimestampIn is ParseTimestamp, which reads ISO dates, and then a
// date of numeric fields in order, as PostgreSQL's DecodeNumber does: a
// first field of three digits or more is the year (year, month, day),
// else the fields are in DateStyle's order; a year of one or two digits
// is 1970 to 2069.
func parseTimestampIn(s string, order DateOrder) (time.Time, error) {
	t, err := ParseTimestamp(s)
	if err == nil {
		return t, nil
	}
	f, rest, ok := numericDateFields(strings.TrimSpace(s))
	if !ok {
		return t, err
	}
	ymd := [3]int{0, 1, 2} // the field of the year, the month and the day
	switch {
	case len(f[0]) >= 3 || order == YMD:
	case order == DMY:
		ymd = [3]int{2, 1, 0}
	default:
		ymd = [3]int{2, 0, 1}
	}
	y, _ := strconv.Atoi(f[ymd[0]])
	m, _ := strconv.Atoi(f[ymd[1]])
	d, _ := strconv.Atoi(f[ymd[2]])
	if len(f[ymd[0]]) <= 2 {
		y += 1900
		if y < 1970 {
			y += 100
		}
	}
	if y == 0 || m < 1 || m > 12 || d < 1 || d > time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return time.Time{}, pgerror.Newf(codeDatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s).
			WithHint("Perhaps you need a different \"datestyle\" setting.")
	}
	iso := string(appendYMD(nil, y, m, d, '-')) + rest
	if t, err2 := ParseTimestamp(iso); err2 == nil {
		return t, nil
	}
	return t, err
}

// codeDatetimeFieldOverflow is SQLSTATE 22008, datetime_field_overflow.
const codeDatetimeFieldOverflow = "22008"
