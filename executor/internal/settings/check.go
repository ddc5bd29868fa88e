package settings

import (
	"math"
	"strconv"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Validating and parsing parameter values (params.go's param.check):
// each value normalised, or refused with PostgreSQL's error.

// badValue is the error for a string parameter's bad value (named as
// PostgreSQL spells it); badEnum for an enum, integer or bool (named as
// the statement did).
func badValue(p *param, v string) *pgerror.Error {
	return pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", p.name, v)
}

func badEnum(p *param, v string) *pgerror.Error {
	return pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", p.givenName(), v)
}

func (p *param) givenName() string {
	if p.given != "" {
		return p.given
	}
	return p.name
}

func checkAppName(_ *param, v string) (string, error) {
	// PostgreSQL keeps printable ASCII only and at most NAMEDATALEN-1 bytes.
	b := []byte(v)
	for i, c := range b {
		if c < 32 || c > 126 {
			b[i] = '?'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return string(b), nil
}

// otherEncodings are PostgreSQL's client encodings besides UTF8.
var otherEncodings = map[string]bool{"LATIN1": true, "LATIN2": true, "LATIN3": true, "LATIN4": true,
	"LATIN5": true, "LATIN6": true, "LATIN7": true, "LATIN8": true, "LATIN9": true, "LATIN10": true, "WIN1250": true,
	"WIN1251": true, "WIN1252": true, "WIN1253": true, "WIN1254": true, "WIN1255": true, "WIN1256": true, "WIN1257": true,
	"WIN1258": true, "WIN866": true, "WIN874": true, "KOI8R": true, "KOI8U": true, "EUCJP": true, "EUCCN": true, "EUCKR": true,
	"EUCTW": true, "EUCJIS2004": true, "SJIS": true, "SHIFTJIS2004": true, "BIG5": true, "GBK": true, "GB18030": true,
	"UHC": true, "JOHAB": true, "MULEINTERNAL": true, "ISO88595": true, "ISO88596": true, "ISO88597": true, "ISO88598": true}

func checkEncoding(p *param, v string) (string, error) {
	// PostgreSQL compares encoding names without their punctuation
	// (clean_encoding_name): asyncpg sends 'utf-8', quotes included.
	n := strings.ToUpper(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, v))
	switch {
	case n == "UTF8" || n == "UNICODE":
		return "UTF8", nil
	case n == "SQLASCII":
		// No conversion, as PostgreSQL does for it: the client gets the
		// UTF8 bytes as they are (psql under LC_ALL=C asks for it).
		return "SQL_ASCII", nil
	case otherEncodings[n]:
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported, "client_encoding %s is not supported; topicgate speaks UTF8", v)
	}
	return "", badValue(p, v)
}

// checkDateStyle normalises DateStyle as PostgreSQL's check_datestyle
// does: a comma-separated list of an output style (ISO, SQL, Postgres,
// German) and an input order (MDY, DMY, YMD and their synonyms); a part
// not given keeps its current value, except that German alone also means
// DMY, and DEFAULT means ISO, MDY for the parts not given.
func checkDateStyle(p *param, v string) (string, error) {
	cur, ok := values.ParseDateStyle(p.current)
	if !ok {
		cur = values.DateStyle{}
	}
	style, order := cur.Output, cur.Order
	haveStyle, haveOrder := false, false
	for _, tok := range strings.Split(v, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" && strings.TrimSpace(v) == "" {
			continue
		}
		if tok == "" || strings.ContainsAny(tok, " \t") {
			return "", badValue(p, v).WithDetail("List syntax is invalid.")
		}
		var s values.DateOutput
		var o values.DateOrder
		isStyle, isOrder := false, false
		switch strings.ToUpper(tok) {
		case "ISO":
			s, isStyle = values.DateISO, true
		case "SQL":
			s, isStyle = values.DateSQL, true
		case "POSTGRES":
			s, isStyle = values.DatePostgres, true
		case "GERMAN":
			s, isStyle = values.DateGerman, true
			if !haveOrder {
				order = values.DMY
			}
		case "YMD":
			o, isOrder = values.YMD, true
		case "DMY", "EURO", "EUROPEAN":
			o, isOrder = values.DMY, true
		case "MDY", "US", "NONEURO", "NONEUROPEAN":
			o, isOrder = values.MDY, true
		case "DEFAULT":
			if !haveStyle {
				style = values.DateISO
			}
			if !haveOrder {
				order = values.MDY
			}
			continue
		default:
			return "", badValue(p, v).WithDetail("Unrecognized key word: \"" + tok + "\".")
		}
		if (isStyle && haveStyle && s != style) || (isOrder && haveOrder && o != order) {
			return "", badValue(p, v).WithDetail("Conflicting \"datestyle\" specifications.")
		}
		if isStyle {
			style, haveStyle = s, true
		}
		if isOrder {
			order, haveOrder = o, true
		}
	}
	return values.DateStyle{Output: style, Order: order}.String(), nil
}

func checkIntervalStyle(p *param, v string) (string, error) {
	switch n := strings.ToLower(strings.TrimSpace(v)); n {
	case "postgres":
		return n, nil
	case "postgres_verbose", "sql_standard", "iso_8601":
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported, "IntervalStyle %s is not supported: topicgate prints intervals in the postgres style", n)
	}
	return "", badEnum(p, v).WithHint("Available values: postgres, postgres_verbose, sql_standard, iso_8601.")
}

func checkTimeZone(_ *param, v string) (string, error) {
	if _, err := parseTimeZone(v); err != nil {
		return "", err
	}
	if strings.EqualFold(strings.TrimSpace(v), "default") || strings.EqualFold(strings.TrimSpace(v), "local") {
		return "UTC", nil
	}
	return strings.TrimSpace(v), nil
}

// parseBool accepts what PostgreSQL's parse_bool does.
func parseBool(v string) (bool, bool) {
	s := strings.ToLower(strings.TrimSpace(v))
	if s == "" {
		return false, false
	}
	for _, w := range []string{"true", "yes"} {
		if strings.HasPrefix(w, s) {
			return true, true
		}
	}
	for _, w := range []string{"false", "no"} {
		if strings.HasPrefix(w, s) {
			return false, true
		}
	}
	switch s {
	case "on", "1":
		return true, true
	case "off", "of", "0":
		return false, true
	}
	return false, false
}

func checkBool(p *param, v string) (bool, error) {
	b, ok := parseBool(v)
	if !ok {
		return false, pgerror.Newf(pgerror.CodeInvalidParameterValue, "parameter \"%s\" requires a Boolean value", p.givenName())
	}
	return b, nil
}

func checkOnlyOn(p *param, v string) (string, error) {
	b, err := checkBool(p, v)
	if err != nil {
		return "", err
	}
	if !b {
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported, "%s = off is not supported", p.name)
	}
	return "on", nil
}

func checkOnlyOff(p *param, v string) (string, error) {
	b, err := checkBool(p, v)
	if err != nil {
		return "", err
	}
	if b {
		return "", pgerror.Newf(pgerror.CodeFeatureNotSupported, "read-only transactions are not supported (%s = on)", p.name)
	}
	return "off", nil
}

func checkIsolation(p *param, v string) (string, error) {
	switch n := strings.Join(strings.Fields(strings.ToLower(v)), " "); n {
	case "serializable", "repeatable read", "read committed", "read uncommitted", "default":
		if n == "default" {
			n = "serializable"
		}
		return n, nil
	}
	return "", badEnum(p, v).WithHint("Available values: serializable, repeatable read, read committed, read uncommitted.")
}

// parseMillis parses a time value with an optional unit (default ms), as
// PostgreSQL's parse_int does for time parameters.
func parseMillis(v string) (int64, bool) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] == '-' || s[i] == '+' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') ||
		(i > 0 && (s[i] == 'e' || s[i] == 'E') && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+'))) {
		i++ // an exponent too, as PostgreSQL's parse_int takes it ('1e3ms')
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	mult := 1.0
	switch strings.TrimSpace(s[i:]) {
	case "", "ms":
	case "us":
		mult = 0.001
	case "s":
		mult = 1000
	case "min":
		mult = 60000
	case "h":
		mult = 3600000
	case "d":
		mult = 86400000
	default:
		return 0, false
	}
	ms := math.Round(f * mult)
	if ms > math.MaxInt32*2 || ms < -math.MaxInt32*2 {
		ms = math.Copysign(math.MaxInt32*2, ms) // out of range either way; keep the message readable
	}
	return int64(ms), true
}

func millis(v string) time.Duration {
	ms, _ := parseMillis(v)
	return time.Duration(ms) * time.Millisecond
}

func checkTimeout(p *param, v string) (string, error) {
	ms, ok := parseMillis(v)
	if !ok {
		return "", badEnum(p, v).WithHint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".")
	}
	if ms < 0 || ms > math.MaxInt32 {
		return "", pgerror.Newf(pgerror.CodeInvalidParameterValue, "%d ms is outside the valid range for parameter \"%s\" (0 .. 2147483647)", ms, p.givenName())
	}
	return formatMillis(ms), nil
}

// formatMillis prints ms in the largest unit that divides it, as SHOW does.
func formatMillis(ms int64) string {
	if ms == 0 {
		return "0"
	}
	for _, u := range []struct {
		n    int64
		unit string
	}{{86400000, "d"}, {3600000, "h"}, {60000, "min"}, {1000, "s"}} {
		if ms%u.n == 0 {
			return strconv.FormatInt(ms/u.n, 10) + u.unit
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

func checkFloatDigits(p *param, v string) (string, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return "", badEnum(p, v)
	}
	if n < -15 || n > 3 {
		return "", pgerror.Newf(pgerror.CodeInvalidParameterValue, "%d is outside the valid range for parameter \"%s\" (-15 .. 3)", n, p.givenName())
	}
	return strconv.Itoa(n), nil
}

func checkByteaOutput(p *param, v string) (string, error) {
	switch n := strings.ToLower(strings.TrimSpace(v)); n {
	case "hex":
		return n, nil
	case "escape":
		return "", pgerror.New(pgerror.CodeFeatureNotSupported, "bytea_output escape is not supported: topicgate prints bytea in hex")
	}
	return "", badEnum(p, v).WithHint("Available values: escape, hex.")
}

func checkMinMessages(p *param, v string) (string, error) {
	switch n := strings.ToLower(strings.TrimSpace(v)); n {
	case "debug5", "debug4", "debug3", "debug2", "debug1", "debug", "log", "notice", "warning", "error":
		if n == "debug" {
			n = "debug2"
		}
		return n, nil
	}
	return "", badEnum(p, v).WithHint("Available values: debug5, debug4, debug3, debug2, debug1, log, notice, warning, error.")
}
