package executor

import (
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/sql/values"
	"topicgate/wire"
)

// Run-time parameters (SET, SHOW, RESET, current_setting, set_config) as
// PostgreSQL 15 has them, for the parameters drivers read or set. Each one
// is validated and normalised as PostgreSQL does (42704 for an unknown
// name, 22023 for a bad value, 55P02 for a read-only one); those PostgreSQL
// reports (GUC_REPORT) are sent again with ParameterStatus whenever their
// value changes, before the next ReadyForQuery; a SET inside a transaction
// block is undone by ROLLBACK, and SET LOCAL lasts until the block ends.
// Values topicgate cannot honour (an IntervalStyle other than postgres,
// ...) are refused with 0A000 rather than accepted and ignored.

// param describes one parameter.
type param struct {
	name     string // PostgreSQL's spelling, as SHOW's column and ParameterStatus name it
	def      string // built-in default (before the startup packet)
	reported bool   // GUC_REPORT: ParameterStatus at startup and on change
	readOnly bool   // SET fails with 55P02
	// check validates and normalises a value; nil accepts any string.
	check func(p *param, v string) (string, error)
	// given is the name as the statement spelled it (lower-cased), which
	// PostgreSQL's messages for bool, integer and enum values quote.
	given string
	// current is the parameter's value before the one being checked
	// (DateStyle's parts not given keep theirs).
	current string
	desc    string // SHOW ALL's description
}

var params = map[string]*param{}

func init() {
	for _, p := range []*param{
		{name: "application_name", reported: true, check: checkAppName, desc: "Sets the application name to be reported in statistics and logs."},
		{name: "client_encoding", def: "UTF8", reported: true, check: checkEncoding, desc: "Sets the client's character set encoding."},
		{name: "DateStyle", def: "ISO, MDY", reported: true, check: checkDateStyle, desc: "Sets the display format for date and time values."},
		{name: "IntervalStyle", def: "postgres", reported: true, check: checkIntervalStyle, desc: "Sets the display format for interval values."},
		{name: "TimeZone", def: "UTC", reported: true, check: checkTimeZone, desc: "Sets the time zone for displaying and interpreting time stamps."},
		{name: "integer_datetimes", def: "on", reported: true, readOnly: true, desc: "Shows whether datetimes are integer based."},
		{name: "standard_conforming_strings", def: "on", reported: true, check: checkOnlyOn, desc: "Causes '...' strings to treat backslashes literally."},
		{name: "is_superuser", def: "on", reported: true, readOnly: true, desc: "Shows whether the current user is a superuser."},
		{name: "session_authorization", reported: true, readOnly: true, desc: "Sets the session user name."},
		{name: "server_version", def: "15.0", reported: true, readOnly: true, desc: "Shows the server version."},
		{name: "server_version_num", def: "150000", readOnly: true, desc: "Shows the server version as an integer."},
		{name: "server_encoding", def: "UTF8", reported: true, readOnly: true, desc: "Shows the server (database) character set encoding."},
		{name: "default_transaction_read_only", def: "off", reported: true, check: checkOnlyOff, desc: "Sets the default read-only status of new transactions."},
		{name: "transaction_read_only", def: "off", check: checkOnlyOff, desc: "Sets the current transaction's read-only status."},
		{name: "in_hot_standby", def: "off", reported: true, readOnly: true, desc: "Shows whether hot standby is currently active."},
		{name: "default_transaction_isolation", def: "serializable", check: checkIsolation, desc: "Sets the transaction isolation level of each new transaction."},
		{name: "transaction_isolation", def: "serializable", check: checkIsolation, desc: "Sets the current transaction's isolation level."},
		{name: "search_path", def: `"$user", public`, desc: "Sets the schema search order for names that are not schema-qualified."},
		{name: "statement_timeout", def: "0", check: checkTimeout, desc: "Sets the maximum allowed duration of any statement."},
		{name: "lock_timeout", def: "0", check: checkTimeout, desc: "Sets the maximum allowed duration of any wait for a lock."},
		{name: "idle_in_transaction_session_timeout", def: "0", check: checkTimeout, desc: "Sets the maximum allowed idle time between queries, when in a transaction."},
		{name: "idle_session_timeout", def: "0", check: checkTimeout, desc: "Sets the maximum allowed idle time between queries, when not in a transaction."},
		{name: "extra_float_digits", def: "1", check: checkFloatDigits, desc: "Sets the number of digits displayed for floating-point values."},
		{name: "bytea_output", def: "hex", check: checkByteaOutput, desc: "Sets the output format for bytea."},
		{name: "client_min_messages", def: "notice", check: checkMinMessages, desc: "Sets the message levels that are sent to the client."},
		{name: "max_identifier_length", def: "63", readOnly: true, desc: "Shows the maximum identifier length."},
		{name: "lc_messages", def: "C", desc: "Sets the language in which messages are displayed."},
		{name: "lc_monetary", def: "C", desc: "Sets the locale for formatting monetary amounts."},
		{name: "lc_numeric", def: "C", desc: "Sets the locale for formatting numbers."},
		{name: "lc_time", def: "C", desc: "Sets the locale for formatting date and time values."},
		{name: "lc_collate", def: "C", readOnly: true, desc: "Shows the collation order locale."},
		{name: "lc_ctype", def: "C", readOnly: true, desc: "Shows the character classification and case conversion locale."},
	} {
		params[strings.ToLower(p.name)] = p
		if p.reported {
			reportedParams = append(reportedParams, strings.ToLower(p.name))
		}
	}
	sort.Strings(reportedParams)
}

// reportedParams are the GUC_REPORT parameters in ParameterStatus order
// (filled by init, after params).
var reportedParams []string

// lookupParam finds a parameter by any spelling; custom names with a dot
// (myapp.flag) are placeholders, as in PostgreSQL.
func lookupParam(name string) (*param, error) {
	k := strings.ToLower(name)
	if p, ok := params[k]; ok {
		return p, nil
	}
	if strings.Contains(k, ".") && !strings.HasPrefix(k, ".") && !strings.HasSuffix(k, ".") {
		return &param{name: k}, nil
	}
	return nil, pgerror.Newf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter \"%s\"", name)
}

// ParamName is how SHOW names its column for parameter name.
func paramName(name string) string {
	if p, err := lookupParam(name); err == nil {
		return p.name
	}
	return strings.ToLower(name)
}

// settings are a session's run-time parameters.
type settings struct {
	vals  map[string]string // current value by lower-cased name
	reset map[string]string // what RESET restores: the startup packet's, else the default
	// sent is the last value of each reported parameter the client got;
	// dirty says a value may have changed since (changes has work to do).
	sent  map[string]string
	dirty bool
	// Inside a transaction block: the values before it (for ROLLBACK and
	// SET LOCAL) and the session-level values set in it (kept at COMMIT).
	inTxn      bool
	txnBefore  map[string]string
	txnSession map[string]string

	loc *time.Location // TimeZone, for printing timestamptz
	// dateStyle is DateStyle: its zero value, ISO, MDY, prints and reads
	// dates on the fast paths.
	dateStyle   values.DateStyle
	stmtTimeout time.Duration // statement_timeout; 0 = none
	// idleTimeout and idleInTxnTimeout are idle_session_timeout and
	// idle_in_transaction_session_timeout; 0 = none.
	idleTimeout, idleInTxnTimeout time.Duration
	// quiet drops notices (client_min_messages warning or error) and, with
	// quieter, warnings too (error).
	quiet, quieter bool
}

func newSettings(info wire.SessionInfo) *settings {
	s := &settings{vals: map[string]string{}, reset: map[string]string{}, sent: map[string]string{}, loc: time.UTC}
	for k, p := range params {
		s.vals[k] = p.def
	}
	s.vals["session_authorization"] = info.User
	for _, kv := range startupParams(info) {
		k, v := kv[0], kv[1]
		switch k {
		case "user", "database", "replication":
			continue
		}
		if err := s.apply(k, v); err != nil && k == "timezone" {
			// A zone name a driver took from its platform that we do not
			// know: the session runs in UTC rather than refusing the login.
			continue
		}
	}
	for k, v := range s.vals {
		s.reset[k] = v
	}
	return s
}

// startupError validates the startup packet's parameters as PostgreSQL
// does, which refuses the connection (FATAL) for a bad one.
func startupError(info wire.SessionInfo) error {
	s := &settings{vals: map[string]string{}, loc: time.UTC}
	if o, ok := info.Params["options"]; ok {
		if _, err := splitOptions(o); err != nil {
			return err
		}
	}
	for _, kv := range startupParams(info) {
		k, v := kv[0], kv[1]
		switch k {
		case "user", "database", "replication", "timezone":
			continue
		}
		if p, err := lookupParam(k); err == nil && p.readOnly {
			return pgerror.Newf(pgerror.CodeCantChangeRuntimeParam, "parameter \"%s\" cannot be changed", strings.ToLower(k))
		}
		if err := s.apply(k, v); err != nil {
			return err
		}
	}
	return nil
}

// startupParams lists the run-time parameters of the startup packet in
// the order PostgreSQL applies them: first the settings of its options
// parameter (`-c name=value` or `--name=value`, what psql's and libpq's
// PGOPTIONS and options= send), then the packet's own parameters, which
// win. Names are lower case.
func startupParams(info wire.SessionInfo) [][2]string {
	var out [][2]string
	if o, ok := info.Params["options"]; ok {
		kvs, _ := splitOptions(o) // startupError refused a bad one
		out = append(out, kvs...)
	}
	keys := make([]string, 0, len(info.Params))
	for k := range info.Params {
		if k != "options" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, [2]string{strings.ToLower(k), info.Params[k]})
	}
	return out
}

// splitOptions parses the startup options parameter as PostgreSQL's
// pg_split_opts and process_postgres_switches do: arguments separated by
// white space, a backslash escaping the next character; `-c name=value`,
// `-cname=value` and `--name=value` set a parameter (a dash in the name
// is an underscore). Other server switches are refused.
func splitOptions(o string) ([][2]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(o); i++ {
		c := o[i]
		switch {
		case c == '\\' && i+1 < len(o):
			i++
			cur.WriteByte(o[i])
			inArg = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	var out [][2]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		var kv string
		switch {
		case a == "-c" && i+1 < len(args):
			i++
			kv = args[i]
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			kv = a[2:]
		case strings.HasPrefix(a, "--") && len(a) > 2:
			kv = a[2:]
		default:
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "invalid command-line argument for server process: %s", a).
				WithHint("Try \"postgres --help\" for more information.")
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			if strings.HasPrefix(a, "--") {
				return nil, pgerror.Newf(pgerror.CodeSyntaxError, "--%s requires a value", kv)
			}
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "-c %s requires a value", kv)
		}
		out = append(out, [2]string{strings.ToLower(strings.ReplaceAll(k, "-", "_")), v})
	}
	return out, nil
}

func (s *settings) get(name string) (string, bool) {
	v, ok := s.vals[strings.ToLower(name)]
	return v, ok
}

// apply validates and sets a value without transaction bookkeeping.
func (s *settings) apply(name, value string) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if p.check != nil {
		given := *p
		given.given = strings.ToLower(name)
		given.current = s.vals[strings.ToLower(p.name)]
		p = &given
		if value, err = p.check(p, value); err != nil {
			return err
		}
	}
	k := strings.ToLower(p.name)
	s.vals[k] = value
	s.dirty = true
	switch k {
	case "timezone":
		s.loc, _ = parseTimeZone(value)
	case "datestyle":
		s.dateStyle, _ = values.ParseDateStyle(value)
	case "statement_timeout":
		s.stmtTimeout = millis(value)
	case "idle_session_timeout":
		s.idleTimeout = millis(value)
	case "idle_in_transaction_session_timeout":
		s.idleInTxnTimeout = millis(value)
	case "client_min_messages":
		s.quiet, s.quieter = value == "warning" || value == "error", value == "error"
	}
	return nil
}

// set is SET [LOCAL] name = value. A SET LOCAL outside a transaction block
// does nothing (the caller warns).
func (s *settings) set(name, value string, local bool) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if p.readOnly {
		return pgerror.Newf(pgerror.CodeCantChangeRuntimeParam, "parameter \"%s\" cannot be changed", strings.ToLower(name))
	}
	if local && !s.inTxn {
		if p.check != nil {
			_, err = p.check(p, value)
		}
		return err
	}
	k := strings.ToLower(p.name)
	before, had := s.vals[k]
	if err := s.apply(name, value); err != nil {
		return err
	}
	if s.inTxn {
		if s.txnBefore == nil {
			s.txnBefore = map[string]string{}
		}
		if s.txnSession == nil {
			s.txnSession = map[string]string{}
		}
		if _, ok := s.txnBefore[k]; !ok {
			if !had {
				before = "\x00" // did not exist before the block
			}
			s.txnBefore[k] = before
		}
		if !local {
			s.txnSession[k] = s.vals[k]
		}
	}
	return nil
}

// resetTo is RESET name: back to the session's startup value.
func (s *settings) resetTo(name string, local bool) error {
	p, err := lookupParam(name)
	if err != nil {
		return err
	}
	if p.readOnly {
		return pgerror.Newf(pgerror.CodeCantChangeRuntimeParam, "parameter \"%s\" cannot be changed", p.name)
	}
	k := strings.ToLower(p.name)
	v, ok := s.reset[k]
	if !ok {
		v = p.def
	}
	return s.set(k, v, local)
}

// resetAll is RESET ALL.
func (s *settings) resetAll() {
	for k := range s.vals {
		if p, err := lookupParam(k); err == nil && !p.readOnly {
			_ = s.resetTo(k, false)
		}
	}
}

// settingsSnapshot is what ROLLBACK TO SAVEPOINT restores: the values and
// the block's session-level SETs as they were.
type settingsSnapshot struct{ vals, session map[string]string }

func (s *settings) snapshot() settingsSnapshot {
	return settingsSnapshot{maps.Clone(s.vals), maps.Clone(s.txnSession)}
}

func (s *settings) restore(snap settingsSnapshot) {
	s.txnSession = maps.Clone(snap.session)
	for k := range s.vals {
		if _, ok := snap.vals[k]; !ok {
			delete(s.vals, k)
		}
	}
	for k, v := range snap.vals {
		if s.vals[k] != v {
			_ = s.apply(k, v)
		}
	}
}

// begin, commit and rollback follow the transaction block.
func (s *settings) begin() {
	s.inTxn, s.txnBefore, s.txnSession = true, nil, nil // made by the block's first SET
}

func (s *settings) commit() { s.endTxn(true) }

func (s *settings) rollback() { s.endTxn(false) }

func (s *settings) endTxn(commit bool) {
	if !s.inTxn {
		return
	}
	s.inTxn = false
	for k, before := range s.txnBefore {
		v := before
		if sv, ok := s.txnSession[k]; ok && commit {
			v = sv
		}
		if v == "\x00" {
			delete(s.vals, k)
			continue
		}
		_ = s.apply(k, v)
	}
	s.txnBefore, s.txnSession = nil, nil
}

// startup returns the ParameterStatus values sent after authentication.
func (s *settings) startup() map[string]string {
	out := map[string]string{}
	for _, k := range reportedParams {
		out[params[k].name] = s.vals[k]
		s.sent[k] = s.vals[k]
	}
	return out
}

// changes returns the reported parameters whose value differs from what
// the client was last sent, and marks them sent.
func (s *settings) changes() []wire.ParamStatus {
	if !s.dirty {
		return nil
	}
	s.dirty = false
	var out []wire.ParamStatus
	for _, k := range reportedParams {
		if v := s.vals[k]; v != s.sent[k] {
			s.sent[k] = v
			out = append(out, wire.ParamStatus{Name: params[k].name, Value: v})
		}
	}
	return out
}

// catalogRows are pg_settings' rows, by column name: a time parameter's
// setting in milliseconds with its unit, as PostgreSQL shows it there.
func (s *settings) catalogRows() []map[string]any {
	var out []map[string]any
	for k, v := range s.vals {
		p, err := lookupParam(k)
		if err != nil {
			continue
		}
		row := map[string]any{"name": p.name, "setting": v, "short_desc": p.desc, "context": "user",
			"vartype": "string", "boot_val": p.def, "reset_val": s.reset[k], "pending_restart": false}
		if p.readOnly {
			row["context"] = "internal"
		}
		switch {
		case p.readOnly: // fixed for the session (session_authorization is its user)
			row["source"], row["boot_val"] = "default", v
		case s.reset[k] != p.def && v == s.reset[k]:
			row["source"] = "client"
		case v != s.reset[k]:
			row["source"] = "session"
		default:
			row["source"] = "default"
		}
		if isTimeParam(k) {
			ms, _ := parseMillis(v)
			row["setting"], row["unit"], row["vartype"] = strconv.FormatInt(ms, 10), "ms", "integer"
			row["min_val"], row["max_val"] = "0", "2147483647"
			for _, c := range []string{"boot_val", "reset_val"} {
				b, _ := parseMillis(row[c].(string))
				row[c] = strconv.FormatInt(b, 10)
			}
		} else if _, isBool := parseBool(v); isBool && (v == "on" || v == "off") {
			row["vartype"] = "bool"
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.ToLower(out[i]["name"].(string)) < strings.ToLower(out[j]["name"].(string))
	})
	return out
}

func isTimeParam(k string) bool {
	switch k {
	case "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "idle_session_timeout":
		return true
	}
	return false
}

// all lists every parameter for SHOW ALL: name, setting, description.
func (s *settings) all() [][]any {
	var rows [][]any
	for k, v := range s.vals {
		p, err := lookupParam(k)
		if err != nil {
			continue
		}
		rows = append(rows, []any{p.name, v, p.desc})
	}
	sort.Slice(rows, func(i, j int) bool {
		return strings.ToLower(rows[i][0].(string)) < strings.ToLower(rows[j][0].(string))
	})
	return rows
}

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

// normalizeParam is values.NormalizeParam for a bound parameter of type
// t; a date or timestamptz in text reads in the session's DateStyle order.
func (s *settings) normalizeParam(v any, t values.Type) (any, error) {
	if s.dateStyle.Order != values.MDY && (t == values.TDate || t == values.TTimestamptz) {
		switch x := v.(type) {
		case string:
			return values.ParseTextIn(x, t, s.dateStyle.Order)
		case []byte:
			return values.ParseTextIn(string(x), t, s.dateStyle.Order)
		}
	}
	return values.NormalizeParam(v, t)
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
