package executor

import (
	"strings"
	"time"

	"topicgate/wire"
)

// settings are a session's run-time parameters (SET / SHOW).
type settings struct {
	vals map[string]string
	loc  *time.Location // TimeZone: how timestamptz values are printed
}

var defaultSettings = map[string]string{
	"server_version":                      "15.0",
	"server_version_num":                  "150000",
	"server_encoding":                     "UTF8",
	"client_encoding":                     "UTF8",
	"datestyle":                           "ISO, MDY",
	"intervalstyle":                       "postgres",
	"timezone":                            "UTC",
	"integer_datetimes":                   "on",
	"standard_conforming_strings":         "on",
	"is_superuser":                        "on",
	"application_name":                    "",
	"default_transaction_read_only":       "off",
	"default_transaction_isolation":       "serializable",
	"transaction_isolation":               "serializable",
	"in_hot_standby":                      "off",
	"search_path":                         "\"$user\", public",
	"statement_timeout":                   "0",
	"lock_timeout":                        "0",
	"idle_in_transaction_session_timeout": "0",
	"extra_float_digits":                  "1",
	"max_identifier_length":               "63",
	"transaction_read_only":               "off",
	"bytea_output":                        "hex",
	"client_min_messages":                 "notice",
	"lc_messages":                         "C",
	"lc_monetary":                         "C",
	"lc_numeric":                          "C",
	"lc_time":                             "C",
}

// displayNames are the ParameterStatus spellings.
var displayNames = map[string]string{
	"datestyle": "DateStyle", "intervalstyle": "IntervalStyle", "timezone": "TimeZone",
}

var reportedAtStartup = []string{"server_version", "server_encoding", "client_encoding", "datestyle",
	"intervalstyle", "timezone", "integer_datetimes", "standard_conforming_strings", "is_superuser",
	"session_authorization", "application_name", "default_transaction_read_only", "in_hot_standby"}

func newSettings(info wire.SessionInfo) *settings {
	s := &settings{vals: map[string]string{}}
	for k, v := range defaultSettings {
		s.vals[k] = v
	}
	s.vals["session_authorization"] = info.User
	for k, v := range info.Params {
		k = strings.ToLower(k)
		switch k {
		case "user", "database", "options", "replication":
			continue
		}
		s.vals[k] = v
	}
	// topicgate speaks UTF8 only.
	s.vals["client_encoding"] = "UTF8"
	s.loc = time.UTC
	if loc, err := parseTimeZone(s.vals["timezone"]); err == nil {
		s.loc = loc
	} else {
		s.vals["timezone"] = defaultSettings["timezone"] // an unknown zone from a driver falls back to UTC
	}
	return s
}

func (s *settings) get(name string) (string, bool) {
	v, ok := s.vals[strings.ToLower(name)]
	return v, ok
}

// set changes a parameter; TimeZone is checked (22023 if unknown).
func (s *settings) set(name, value string) error {
	name = strings.ToLower(name)
	if name == "timezone" {
		loc, err := parseTimeZone(value)
		if err != nil {
			return err
		}
		s.loc = loc
	}
	s.vals[name] = value
	return nil
}

func (s *settings) reset(name string) {
	name = strings.ToLower(name)
	if v, ok := defaultSettings[name]; ok {
		s.vals[name] = v
	}
	if name == "timezone" {
		s.loc = time.UTC
	}
}

func (s *settings) startup() map[string]string {
	out := map[string]string{}
	for _, k := range reportedAtStartup {
		name := k
		if d, ok := displayNames[k]; ok {
			name = d
		}
		out[name] = s.vals[k]
	}
	return out
}
