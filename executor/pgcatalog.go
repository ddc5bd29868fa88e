package executor

import (
	"sort"
	"strings"

	"topicgate/planner"
)

// The pg_catalog tables psql's \d, \dt, \dn and \l read (planner's
// PgCatalogViews): topics are tables (relkind 'r') of the public schema,
// the sys views are views of a sys schema, which is not on the search path
// (pg_table_is_visible is false for them, as for any schema not on it).
const (
	oidPgCatalogNS = 11
	oidPublicNS    = 2200
	oidSysNS       = 16300
	oidSysViews    = 16310 // + the view's rank by name
	oidFirstTopic  = 16384 // + the topic's store ID
	oidBootstrap   = 10    // the owner of everything
	oidHeapAM      = 2
	oidDatabase    = 5
	encodingUTF8   = 6
)

func (s *Session) pgCatalogRows(table string) [][]any {
	var rows [][]any
	switch table {
	case "pg_namespace":
		rows = [][]any{
			{int64(oidPgCatalogNS), "pg_catalog", int64(oidBootstrap)},
			{int64(oidPublicNS), "public", int64(oidBootstrap)},
			{int64(oidSysNS), "sys", int64(oidBootstrap)},
		}
	case "pg_am":
		rows = [][]any{{int64(oidHeapAM), "heap"}}
	case "pg_database":
		rows = [][]any{{int64(oidDatabase), s.info.Database, int64(oidBootstrap), int64(encodingUTF8), "C", "C", nil, "c", nil}}
	case "pg_class":
		for _, t := range s.eng.store.Topics() {
			var msgs int64
			for _, p := range t.Partitions {
				msgs += p.Messages
			}
			rows = append(rows, []any{int64(oidFirstTopic) + int64(t.ID), t.Config.Name, int64(oidPublicNS), "r",
				int64(oidBootstrap), int64(oidHeapAM), float64(msgs), "p"})
		}
		views := make([]string, 0, len(planner.SysViews))
		for name := range planner.SysViews {
			views = append(views, name)
		}
		sort.Strings(views)
		for i, name := range views {
			rows = append(rows, []any{int64(oidSysViews + i), name, int64(oidSysNS), "v", int64(oidBootstrap), int64(0), float64(-1), "p"})
		}
	}
	return rows
}

// pgCatalogFns are the catalog functions those psql queries call.
var pgCatalogFns = map[string]builtin{
	"pg_get_userbyid": func(ec *evalCtx, _ []any) (any, error) { return ec.sess.info.User, nil },
	"pg_table_is_visible": func(_ *evalCtx, a []any) (any, error) {
		oid, _ := a[0].(int64)
		return oid >= oidFirstTopic, nil // topics: public is on the search path, sys is not
	},
	"pg_encoding_to_char": func(_ *evalCtx, a []any) (any, error) {
		if n, _ := a[0].(int64); n == encodingUTF8 {
			return "UTF8", nil
		}
		return "", nil
	},
	"array_to_string": func(_ *evalCtx, a []any) (any, error) {
		parts, _ := a[0].([]string)
		sep, _ := a[1].(string)
		return strings.Join(parts, sep), nil
	},
}
