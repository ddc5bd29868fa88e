package parser

// The pre-pass of GRANT, REVOKE and ALTER DEFAULT PRIVILEGES: topicgate's
// and YDB's spellings rewritten into PostgreSQL's.
//
//   - privileges: SELECT ROW → SELECT, UPDATE ROW → INSERT (YDB's names of
//     reading and writing a topic);
//   - objects: ON TOPIC t → ON TABLE t, ON CONSUMER t.c → ON SEQUENCE t.c
//     (the converter maps a SEQUENCE object back to a consumer, and refuses
//     one the user wrote), ON ALL TOPICS IN SCHEMA → ON ALL TABLES IN
//     SCHEMA;
//   - ALTER DEFAULT PRIVILEGES ... ON TOPICS → ON TABLES, ON CONSUMERS →
//     ON SEQUENCES.
//
// Unquoted `offset` in a column list is quoted by the general pre-pass.

// authRewrites adds the rewrites of a GRANT, REVOKE or ALTER DEFAULT
// PRIVILEGES statement (toks without its terminator) and reports whether
// a CONSUMER became a SEQUENCE; other statements are left alone.
func authRewrites(toks []token, add func(int, rewrite)) (consumers bool) {
	if len(toks) < 2 {
		return false
	}
	i := 0
	defaults := false
	switch {
	case toks[0].is("GRANT") || toks[0].is("REVOKE"):
	case len(toks) > 3 && toks[0].is("ALTER") && toks[1].is("DEFAULT") && toks[2].is("PRIVILEGES"):
		defaults = true
		for i < len(toks) && !toks[i].is("GRANT") && !toks[i].is("REVOKE") {
			i++
		}
	default:
		return false
	}
	// the privilege list runs to ON at depth 0; a role grant has none
	depth := 0
	on := -1
	for j := i + 1; j < len(toks) && on < 0; j++ {
		t := toks[j]
		switch {
		case t.isP("("):
			depth++
		case t.isP(")"):
			depth--
		case depth > 0:
		case t.is("ON"):
			on = j
		case (t.is("SELECT") || t.is("UPDATE")) && j+1 < len(toks) && toks[j+1].is("ROW"):
			text := "SELECT"
			if t.is("UPDATE") {
				text = "INSERT"
			}
			add(j, rewrite{to: j + 1, text: text})
			j++
		}
	}
	if on < 0 || on+1 >= len(toks) {
		return false
	}
	obj := on + 1
	next := func(k int) token {
		if k < len(toks) {
			return toks[k]
		}
		return token{Kind: tEOF}
	}
	// a name follows the object kind: TOPIC/CONSUMER is not itself the name
	named := func(k int) bool {
		t := next(k)
		return (t.Kind == tIdent || t.Kind == tQIdent || t.Kind == tBQIdent) && !t.is("TO") && !t.is("FROM")
	}
	t := toks[obj]
	switch {
	case defaults && t.is("TOPICS"):
		add(obj, rewrite{to: obj, text: "TABLES"})
	case defaults && t.is("CONSUMERS"):
		add(obj, rewrite{to: obj, text: "SEQUENCES"})
		return true
	case defaults:
	case t.is("TOPIC") && named(obj+1):
		add(obj, rewrite{to: obj, text: "TABLE"})
	case t.is("CONSUMER") && named(obj+1):
		add(obj, rewrite{to: obj, text: "SEQUENCE"})
		return true
	case t.is("ALL") && next(obj+1).is("TOPICS") && next(obj+2).is("IN"):
		add(obj+1, rewrite{to: obj + 1, text: "TABLES"})
	}
	return false
}
