package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// copyStmt converts COPY ... FROM STDIN and COPY ... TO STDOUT.
func (c *converter) copyStmt(s *pg.CopyStmt) (sql.Stmt, error) {
	switch {
	case s.IsProgram:
		return nil, c.unsupported(-1, "COPY ... PROGRAM")
	case s.Filename != "" && s.IsFrom:
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported,
			"COPY FROM a file is not supported; use COPY ... FROM STDIN")
	case s.Filename != "":
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported,
			"COPY TO a file is not supported; use COPY ... TO STDOUT")
	case s.WhereClause != nil:
		return nil, c.unsupported(-1, "COPY ... WHERE")
	}
	var cols []string
	for _, n := range s.Attlist {
		cols = append(cols, n.GetString_().GetSval())
	}
	format, delim, null, quote, escape := "text", "", "", "", ""
	nullSet, header := false, false
	seen := map[string]bool{}
	for _, o := range s.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		v := constText(d.Arg)
		pos := c.pp.orig(int(d.Location))
		if seen[d.Defname] {
			return nil, errAt(pgerror.CodeSyntaxError, pos, "conflicting or redundant options")
		}
		seen[d.Defname] = true
		switch d.Defname {
		case "delimiter", "quote", "escape":
			if len(v) != 1 {
				// PostgreSQL checks these after reading every option and
				// gives no position.
				return nil, errAt(pgerror.CodeFeatureNotSupported, -1, "COPY %s must be a single one-byte character", d.Defname)
			}
		}
		switch d.Defname {
		case "format":
			format = strings.ToLower(v)
			if format != "text" && format != "csv" && format != "binary" {
				return nil, errAt(pgerror.CodeInvalidParameterValue, pos, "COPY format %q not recognized", v)
			}
		case "delimiter":
			delim = v
		case "null":
			null, nullSet = v, true
		case "header":
			switch strings.ToLower(v) {
			case "", "true", "on", "1":
				header = true
			case "false", "off", "0":
				header = false
			default:
				return nil, errAt(pgerror.CodeFeatureNotSupported, pos, "HEADER %s is not supported", v)
			}
		case "quote":
			quote = v
		case "escape":
			escape = v
		case "encoding":
			if e := strings.ToLower(strings.ReplaceAll(v, "-", "")); e != "utf8" {
				return nil, errAt(pgerror.CodeFeatureNotSupported, pos, "COPY ENCODING %s is not supported; use UTF8", v)
			}
		case "freeze":
			// no-op
		default:
			return nil, errAt(pgerror.CodeFeatureNotSupported, pos, "COPY option %s is not supported", strings.ToUpper(d.Defname))
		}
	}
	opts := sql.CopyOptions{Format: format, Delimiter: delim, Null: null, NullSet: nullSet, Header: header,
		Quote: quote, Escape: escape}
	if !s.IsFrom {
		out := &sql.CopyTo{CopyOptions: opts}
		if s.Query != nil {
			sel := s.Query.GetSelectStmt()
			if sel == nil {
				return nil, c.unsupported(-1, "COPY of this query")
			}
			q, err := c.selectStmt(sel)
			if err != nil {
				return nil, err
			}
			out.Query = q
		} else {
			t, err := c.tableRef(s.Relation)
			if err != nil {
				return nil, err
			}
			q := &sql.Select{From: &t}
			for _, col := range cols {
				q.Targets = append(q.Targets, sql.Target{Expr: &sql.ColumnRef{Name: col}})
			}
			if len(cols) == 0 {
				q.Targets = []sql.Target{{Expr: &sql.Star{}}}
			}
			out.Query = q
		}
		return out, nil
	}
	t, err := c.tableRef(s.Relation)
	if err != nil {
		return nil, err
	}
	return &sql.CopyFrom{Table: t, Columns: cols, CopyOptions: opts}, nil
}
