package settings

import (
	"sort"
	"strconv"
	"strings"

	"topicgate/wire"
)

// Reporting parameters: ParameterStatus at startup and after changes,
// pg_settings' rows and SHOW ALL.

// Startup returns the ParameterStatus values sent after authentication.
func (s *Settings) Startup() map[string]string {
	out := map[string]string{}
	for _, k := range reportedParams {
		out[params[k].name] = s.vals[k]
		s.sent[k] = s.vals[k]
	}
	return out
}

// Changes returns the reported parameters whose value differs from what
// the client was last sent, and marks them sent.
func (s *Settings) Changes() []wire.ParamStatus {
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

// CatalogRows are pg_settings' rows, by column name: a time parameter's
// setting in milliseconds with its unit, as PostgreSQL shows it there.
func (s *Settings) CatalogRows() []map[string]any {
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

// All lists every parameter for SHOW ALL: name, setting, description.
func (s *Settings) All() [][]any {
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
