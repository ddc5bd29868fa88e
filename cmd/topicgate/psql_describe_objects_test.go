package main

import (
	"strings"
	"testing"
)

// TestPsqlDescribeObjects runs psql 15's describe commands for the kinds
// of objects topicgate has none of (operators, casts, conversions,
// languages, event triggers, domains, collations, extended statistics,
// descriptions, foreign data, text search, role settings, large objects,
// partitioned relations, subscriptions), and \sf and \sv. Each must print
// what PostgreSQL 15 prints for a fresh database without such objects: the
// same title and column headers, and no rows (docs/psql-catalog.md says where
// PostgreSQL's built-in rows are absent). Unaligned output (-A).
func TestPsqlDescribeObjects(t *testing.T) {
	a := startTestServer(t)
	psqlRequireOK(t, runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", "CREATE TOPIC orders"))
	// psql exits 1 when \dx+ finds no extension, as it does against
	// PostgreSQL for a pattern no extension matches.
	exitCode := map[string]int{`\dx+`: 1}
	empty := func(title, header string) string { return title + "\n" + header + "\n(0 rows)\n" }
	for _, tc := range []struct {
		cmd, stdout, stderr string
	}{
		{`\do`, empty("List of operators", "Schema|Name|Left arg type|Right arg type|Result type|Description"), ""},
		{`\dC`, empty("List of casts", "Source type|Target type|Function|Implicit?"), ""},
		{`\dc`, empty("List of conversions", "Schema|Name|Source|Destination|Default?"), ""},
		{`\dL`, empty("List of languages", "Name|Owner|Trusted|Description"), ""},
		{`\dLS`, "List of languages\nName|Owner|Trusted|Description\ninternal|postgres|f|\n(1 row)\n", ""},
		{`\dy`, empty("List of event triggers", "Name|Event|Owner|Enabled|Function|Tags"), ""},
		{`\dD`, empty("List of domains", "Schema|Name|Type|Collation|Nullable|Default|Check"), ""},
		{`\dO`, empty("List of collations", "Schema|Name|Collate|Ctype|ICU Locale|Provider|Deterministic?"), ""},
		{`\dX`, empty("List of extended statistics", "Schema|Name|Definition|Ndistinct|Dependencies|MCV"), ""},
		{`\dd`, empty("Object descriptions", "Schema|Name|Object|Description"), ""},
		{`\dd orders`, empty("Object descriptions", "Schema|Name|Object|Description"), ""},
		{`\des`, empty("List of foreign servers", "Name|Owner|Foreign-data wrapper"), ""},
		{`\dew`, empty("List of foreign-data wrappers", "Name|Owner|Handler|Validator"), ""},
		{`\det`, empty("List of foreign tables", "Schema|Table|Server"), ""},
		{`\deu`, empty("List of user mappings", "Server|User name"), ""},
		{`\dF`, empty("List of text search configurations", "Schema|Name|Description"), ""},
		{`\dFd`, empty("List of text search dictionaries", "Schema|Name|Description"), ""},
		{`\dFp`, empty("List of text search parsers", "Schema|Name|Description"), ""},
		{`\dFt`, empty("List of text search templates", "Schema|Name|Description"), ""},
		{`\drds`, "", "Did not find any settings.\n"},
		{`\dl`, empty("Large objects", "ID|Owner|Description"), ""},
		{`\dx+`, "", "Did not find any extensions.\n"},
		{`\dP`, empty("List of partitioned relations", "Schema|Name|Owner|Type|Table"), ""},
		{`\dRs`, empty("List of subscriptions", "Name|Owner|Enabled|Publication"), ""},
		{`\dRs+`, empty("List of subscriptions", "Name|Owner|Enabled|Publication|Binary|Streaming|Two-phase commit|"+
			"Disable on error|Synchronous commit|Conninfo|Skip LSN"), ""},
		{`\dD+`, empty("List of domains", "Schema|Name|Type|Collation|Nullable|Default|Check|Access privileges|Description"), ""},
		{`\dAo`, empty("List of operators of operator families", "AM|Operator family|Operator|Strategy|Purpose"), ""},
		{`\dAp`, empty("List of support functions of operator families",
			"AM|Operator family|Registered left type|Registered right type|Number|Function"), ""},
		{`\ddp`, empty("Default access privileges", "Owner|Schema|Type|Access privileges"), ""},
		// A built-in function's definition, as PostgreSQL prints it.
		{`\sf now`, "CREATE OR REPLACE FUNCTION pg_catalog.now()\n RETURNS timestamp with time zone\n LANGUAGE internal\n" +
			" STABLE PARALLEL SAFE STRICT\nAS $function$now$function$\n", ""},
		{`\sf pg_catalog.boolin`, "CREATE OR REPLACE FUNCTION pg_catalog.boolin(cstring)\n RETURNS boolean\n LANGUAGE internal\n" +
			" IMMUTABLE PARALLEL SAFE STRICT\nAS $function$boolin$function$\n", ""},
	} {
		r := runPsql(t, a, "-A", "-c", tc.cmd)
		if r.code != exitCode[tc.cmd] || r.stdout != tc.stdout || r.stderr != tc.stderr {
			t.Errorf("%s: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", tc.cmd, r.code, r.stdout, tc.stdout, r.stderr, tc.stderr)
		}
	}

	// A function topicgate does not have: PostgreSQL's error.
	r := runPsql(t, a, "-A", "-c", `\sf nosuch`)
	if r.code == 0 || !strings.Contains(r.stderr, `function "nosuch" does not exist`) {
		t.Errorf(`\sf nosuch: exit %d, stderr %q`, r.code, r.stderr)
	}

	// \sv shows a system view's column list.
	r = runPsql(t, a, "-v", "ON_ERROR_STOP=1", "-c", `\sv sys.topics`)
	psqlRequireOK(t, r)
	if !strings.HasPrefix(r.stdout, "CREATE OR REPLACE VIEW sys.topics AS\n SELECT topic,\n    partitions,\n") ||
		!strings.Contains(r.stdout, "   FROM sys.topics;") {
		t.Errorf(`\sv sys.topics: got %q`, r.stdout)
	}
}
