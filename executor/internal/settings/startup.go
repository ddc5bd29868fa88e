package settings

import (
	"sort"
	"strings"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/wire"
)

// The startup packet's parameters (and its options parameter's -c
// settings), checked and applied in PostgreSQL's order.

// CheckStartup validates the startup packet's parameters as PostgreSQL
// does, which refuses the connection (FATAL) for a bad one.
func CheckStartup(info wire.SessionInfo) error {
	s := &Settings{vals: map[string]string{}, loc: time.UTC}
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
