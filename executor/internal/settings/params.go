package settings

import (
	"sort"
	"strings"

	"topicgate/sql/pgerror"
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
//
// This file holds the parameters' table; settings.go a session's values
// and their scopes, check.go the validation of values, startup.go the
// startup packet's parameters, report.go what is reported.

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
		{name: "role", def: "none", readOnly: true, desc: "Sets the current session's role."},
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

// Name is PostgreSQL's spelling of parameter name, by any spelling of
// it: how SHOW names its column (SHOW datestyle's is DateStyle).
func Name(name string) string {
	if p, err := lookupParam(name); err == nil {
		return p.name
	}
	return strings.ToLower(name)
}
