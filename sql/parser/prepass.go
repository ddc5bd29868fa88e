package parser

import (
	"strings"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// The pre-pass rewrites the topic extensions inside otherwise-PostgreSQL
// statements into text pg_query accepts, remembering what it removed:
//
//   - `WITH (opt = v, ...)` right after a table name in FROM, INSERT INTO,
//     UPDATE, DELETE FROM and COPY: blanked out (spaces keep positions); the
//     options attach to the TableRef whose RangeVar starts at the name.
//     The name parts are quoted (lower-cased) so that reserved words such as
//     `in` work as topic names there.
//   - unquoted `offset` used as a column: rewritten to "offset"; `LIMIT n
//     OFFSET m` keeps the keyword (decided from the neighbouring tokens).
//   - `backquoted names` become "double-quoted" ones.
//   - YQL literals Interval('PT30S'), Datetime('...'), Timestamp('...')
//     become a plain string constant whose position maps to the parsed
//     Literal; the converter turns that constant into a Const with
//     LitInterval / LitTime.
//
// Positions in the rewritten text map back to the original query through
// the recorded edits, so pg_query's error positions stay right.

type hintSet struct {
	opts []sql.Option
	used bool
}

type edit struct{ newStart, newEnd, origStart, origEnd int }

type prepassResult struct {
	query string // the whole query string
	text  string
	base  int    // byte offset of the statement in the query
	edits []edit // sorted, non-overlapping
	hints map[int]*hintSet
	lits  map[int]sql.Literal
	// consumers: ON CONSUMER / ON CONSUMERS of a GRANT, REVOKE or ALTER
	// DEFAULT PRIVILEGES was rewritten to SEQUENCE(S) (prepass_auth.go);
	// a SEQUENCE object without it is the user's and refused.
	consumers bool
}

// orig maps a byte offset in pp.text to a byte offset in the query.
func (pp *prepassResult) orig(p int) int {
	delta := pp.base
	for _, e := range pp.edits {
		if p < e.newStart {
			break
		}
		if p < e.newEnd {
			return e.origStart
		}
		delta = e.origEnd - e.newEnd
	}
	return p + delta
}

type rewrite struct {
	to   int // last token index replaced (inclusive)
	text string
	lit  *sql.Literal
}

// prepass scans the tokens of one statement (terminator included).
func prepass(query string, toks []token) (*prepassResult, error) {
	n := len(toks) - 1 // index of the terminator
	base, end := toks[0].Pos, toks[n-1].End
	var rws map[int]rewrite
	var hintAt map[int][]sql.Option
	add := func(i int, r rewrite) {
		if rws == nil {
			rws = make(map[int]rewrite)
		}
		rws[i] = r
	}
	at := func(i int) token {
		if i < 0 || i > n {
			return token{Kind: tEOF, Pos: end, End: end}
		}
		return toks[i]
	}
	consumers := authRewrites(toks[:n], add)
	var offsetKw map[int]bool // indexes of `offset` tokens kept as the keyword
	for i := 0; i < n; i++ {
		t := toks[i]
		if r, done := rws[i]; done {
			i = r.to
			continue
		}
		switch t.Kind {
		case tBQIdent:
			add(i, rewrite{to: i, text: sql.QuoteIdent(t.Val)})
		case tIdent:
			switch {
			case t.is("FROM") || t.is("INTO") || t.is("UPDATE") || t.is("COPY"):
				w, j, opts, ok, err := parseHint(query, toks, i+1)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
				if hintAt == nil {
					hintAt = make(map[int][]sql.Option)
				}
				hintAt[i+1] = opts
				// quote the name parts, blank the WITH (...) list
				k := i + 1
				for ; at(k).Kind == tIdent || at(k).Kind == tQIdent || at(k).Kind == tBQIdent; k += 2 {
					if at(k).Kind == tIdent {
						add(k, rewrite{to: k, text: sql.QuoteIdent(strings.ToLower(at(k).Val))})
					}
					if !at(k + 1).isP(".") {
						break
					}
				}
				add(w, rewrite{to: j - 1, text: strings.Repeat(" ", toks[j-1].End-toks[w].Pos)})
			case t.is("OFFSET"):
				if offsetIsColumn(toks, i, at, offsetKw) {
					add(i, rewrite{to: i, text: `"offset"`})
				} else {
					if offsetKw == nil {
						offsetKw = make(map[int]bool)
					}
					offsetKw[i] = true
				}
			case (t.is("INTERVAL") || t.is("DATETIME") || t.is("TIMESTAMP")) && at(i+1).isP("(") &&
				at(i+2).Kind == tString && at(i+3).isP(")") && !at(i-1).isP(".") && !at(i-1).isP("::"):
				lit, err := yqlLiteral(query, t, at(i+2))
				if err != nil {
					return nil, err
				}
				add(i, rewrite{to: i + 3, text: sql.QuoteString(at(i + 2).Val), lit: &lit})
			}
		}
	}
	pp := &prepassResult{query: query, base: base, consumers: consumers}
	if rws == nil && hintAt == nil {
		pp.text = query[base:end]
		return pp, nil
	}
	var b strings.Builder
	b.Grow(end - base + 16)
	last := base
	for i := 0; i < n; i++ {
		if opts, ok := hintAt[i]; ok {
			if pp.hints == nil {
				pp.hints = make(map[int]*hintSet)
			}
			pp.hints[b.Len()+toks[i].Pos-last] = &hintSet{opts: opts}
		}
		r, ok := rws[i]
		if !ok {
			continue
		}
		b.WriteString(query[last:toks[i].Pos])
		ns, os, oe := b.Len(), toks[i].Pos, toks[r.to].End
		if r.lit != nil {
			if pp.lits == nil {
				pp.lits = make(map[int]sql.Literal)
			}
			pp.lits[ns] = *r.lit
		}
		b.WriteString(r.text)
		if len(r.text) != oe-os {
			pp.edits = append(pp.edits, edit{ns, b.Len(), os, oe})
		}
		last = oe
		i = r.to
	}
	b.WriteString(query[last:end])
	pp.text = b.String()
	return pp, nil
}

// parseHint checks for `name[.name...] [[AS] alias] WITH (options)` at
// toks[i]; it returns the index of WITH, the index after ')' and the options.
func parseHint(query string, toks []token, i int) (int, int, []sql.Option, bool, error) {
	isName := func(t token) bool { return t.Kind == tIdent || t.Kind == tQIdent || t.Kind == tBQIdent }
	if !isName(toks[i]) || toks[i].is("WITH") || toks[i].is("STDIN") || toks[i].is("STDOUT") {
		return 0, 0, nil, false, nil
	}
	j := i + 1
	for j+1 < len(toks) && toks[j].isP(".") && isName(toks[j+1]) {
		j += 2
	}
	if toks[j].is("AS") && j+1 < len(toks) && isName(toks[j+1]) {
		j += 2
	} else if isName(toks[j]) && !toks[j].is("WITH") && j+1 < len(toks) && toks[j+1].is("WITH") {
		j++
	}
	if j+1 >= len(toks) || !toks[j].is("WITH") || !toks[j+1].isP("(") {
		return 0, 0, nil, false, nil
	}
	p := &ddlParser{src: query, toks: toks, i: j + 1}
	opts, err := p.optionList()
	if err != nil {
		return 0, 0, nil, false, err
	}
	return j, p.i, opts, true, nil
}

// offsetIsColumn decides whether the unquoted `offset` at toks[i] is a
// column name: it is the OFFSET keyword only right after the end of an
// expression or clause and when a value follows.
func offsetIsColumn(toks []token, i int, at func(int) token, kw map[int]bool) bool {
	prev, next := at(i-1), at(i+1)
	if i == 0 {
		return true
	}
	switch prev.Kind {
	case tIdent:
		if kw[i-1] || sql.IsExprKeyword(strings.ToLower(prev.Val)) {
			return true
		}
	case tNumber, tString, tDollar, tParam, tQIdent, tBQIdent:
	case tPunct, tOp:
		if !prev.isP(")") && !prev.isP("]") {
			return true
		}
	default:
		return true
	}
	// after an expression end: the keyword, unless what follows can only
	// continue a column reference
	switch next.Kind {
	case tEOF, tSemicolon:
		return true
	case tPunct:
		return next.isP(",") || next.isP(")") || next.isP(".")
	case tOp:
		return !next.isP("-") && !next.isP("+")
	case tIdent:
		return next.is("FROM") || next.is("AS")
	}
	return false
}

// yqlLiteral parses Interval('...') / Datetime('...') / Timestamp('...').
func yqlLiteral(query string, fn, arg token) (sql.Literal, error) {
	if fn.is("INTERVAL") {
		d, err := ParseInterval(arg.Val)
		if err != nil {
			return sql.Literal{}, errAt(pgerror.CodeInvalidDatetimeFormat, arg.Pos, "%v", err)
		}
		return sql.Literal{Kind: sql.LitInterval, Dur: d}, nil
	}
	tm, err := ParseTime(arg.Val)
	if err != nil {
		return sql.Literal{}, errAt(pgerror.CodeInvalidDatetimeFormat, arg.Pos, "%v", err)
	}
	return sql.Literal{Kind: sql.LitTime, Time: tm}, nil
}
