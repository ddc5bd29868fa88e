package executor

import (
	"topicgate/eval"
	"topicgate/planner/catalog"
)

// procRows are pg_proc's rows.
func procRows(add func(map[string]any)) {
	for _, p := range catalog.PgProcs {
		// proargtypes is an oidvector in PostgreSQL; here an oid[] with
		// the same elements (pgcli casts it to regtype[]).
		args := append([]int64{}, p.Args...)
		add(map[string]any{"oid": p.OID, "proname": p.Name, "pronamespace": int64(oidPgCatalogNS),
			"proowner": int64(oidBootstrap), "prolang": int64(eval.OIDInternalLang), "prokind": "f",
			"provolatile": p.Volatile, "proparallel": p.Parallel, "proisstrict": true,
			"pronargs": int64(len(p.Args)), "prorettype": p.Result, "proargtypes": args,
			"prosrc": p.Src})
	}
}
