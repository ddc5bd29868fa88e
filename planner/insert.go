package planner

import (
	"strings"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// resolveWriteCols resolves an INSERT/COPY column list. Without a list the
// only column is data.
func resolveWriteCols(topic string, names []string) ([]plantree.MsgCol, error) {
	if len(names) == 0 {
		return []plantree.MsgCol{plantree.ColData}, nil
	}
	cols := make([]plantree.MsgCol, 0, len(names))
	seen := map[plantree.MsgCol]bool{}
	for _, n := range names {
		c, ok := plantree.LookupMsgCol(n)
		if !ok {
			return nil, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" of topic \"%s\" does not exist", n, topic)
		}
		if !plantree.MsgColumns[c].Writable {
			return nil, pgerror.Newf("428C9", "cannot insert a value into column \"%s\": it is assigned by the server", plantree.MsgColumns[c].Name)
		}
		if seen[c] {
			return nil, pgerror.Newf(pgerror.CodeDuplicateColumn, "column \"%s\" specified more than once", plantree.MsgColumns[c].Name)
		}
		seen[c] = true
		cols = append(cols, c)
	}
	if !seen[plantree.ColData] {
		return nil, pgerror.Newf(pgerror.CodeNotNullViolation, "null value in column \"data\" of topic \"%s\" violates not-null constraint", topic).
			WithHint("Every message needs a body: add data to the column list.")
	}
	return cols, nil
}

func planInsert(cat Catalog, s *sql.Insert, params *[]Type) (plantree.Plan, error) {
	topic := s.Table.Name
	if s.Table.Schema != "" && s.Table.Schema != "public" {
		return nil, pgerror.Newf(pgerror.CodeWrongObjectType, "cannot insert into \"%s.%s\"", s.Table.Schema, topic)
	}
	if _, err := lookupTopic(cat, topic); err != nil {
		return nil, err
	}
	if len(s.Table.Hints) > 0 {
		return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "write hint \"%s\" is not supported", s.Table.Hints[0].Name)
	}
	if len(s.Returning) > 0 {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "INSERT ... RETURNING is not supported on topics")
	}
	cols, err := resolveWriteCols(topic, s.Columns)
	if err != nil {
		return nil, err
	}
	p := &plantree.InsertPlan{Topic: topic, Cols: cols}
	if s.Select != nil {
		sp, err := planSelect(cat, s.Select, params)
		if err != nil {
			return nil, err
		}
		if len(sp.Cols) != len(cols) {
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "INSERT has %d target columns but the SELECT returns %d", len(cols), len(sp.Cols))
		}
		for i, c := range cols {
			if err := assignable(sp.Cols[i].T, plantree.MsgColumns[c]); err != nil {
				return nil, err
			}
		}
		p.Select = sp
		return p, nil
	}
	b := newBinder(params, nil, nil)
	for _, row := range s.Values {
		if len(row) != len(cols) {
			if len(row) > len(cols) {
				return nil, pgerror.New(pgerror.CodeSyntaxError, "INSERT has more expressions than target columns")
			}
			return nil, pgerror.New(pgerror.CodeSyntaxError, "INSERT has more target columns than expressions")
		}
		out := make([]plantree.Expr, len(row))
		for i, e := range row {
			mc := plantree.MsgColumns[cols[i]]
			x, err := b.Bind(e, mc.Type)
			if err != nil {
				return nil, err
			}
			if err := assignable(x.Type(), mc); err != nil {
				return nil, err
			}
			out[i] = x
		}
		p.Rows = append(p.Rows, out)
	}
	return p, nil
}

// assignable checks a value of type t may be stored in column c (with the
// assignment casts PostgreSQL would apply).
func assignable(t Type, c plantree.MsgColumn) error {
	ct := c.Type
	switch {
	case t == ct || t == TNull || t == TUnknown:
		return nil
	case ct.IsNumeric() && t.IsNumeric():
		return nil
	case ct.IsText() && (t.IsText() || t.IsNumeric() || t == TJSONB || t == TJSON):
		return nil
	case ct == TBytea && t.IsText():
		return nil
	case ct == TJSONB && (t == TJSON || t.IsText()):
		return nil
	case ct == TInterval && t.IsText():
		return nil
	case ct == TTimestamptz && t.IsText():
		return nil
	}
	return pgerror.Newf(pgerror.CodeDatatypeMismatch, "column \"%s\" is of type %s but expression is of type %s", c.Name, ct, t).
		WithHint("You will need to rewrite or cast the expression.")
}

func planCopy(cat Catalog, s *sql.CopyFrom) (plantree.Plan, error) {
	topic := s.Table.Name
	if _, err := lookupTopic(cat, topic); err != nil {
		return nil, err
	}
	cols, err := resolveWriteCols(topic, s.Columns)
	if err != nil {
		return nil, err
	}
	if err := checkCopyOptions(s.CopyOptions); err != nil {
		return nil, err
	}
	return &plantree.CopyPlan{Topic: topic, Cols: cols, Opts: *s}, nil
}

// planCopyOut plans COPY ... TO STDOUT as its query.
func planCopyOut(cat Catalog, s *sql.CopyTo, params *[]Type) (plantree.Plan, error) {
	if err := checkCopyOptions(s.CopyOptions); err != nil {
		return nil, err
	}
	sel, err := planSelect(cat, s.Query, params)
	if err != nil {
		return nil, err
	}
	opts := *s
	opts.Query = nil
	return &plantree.CopyOutPlan{Select: sel, Opts: opts}, nil
}

// checkCopyOptions rejects what PostgreSQL rejects in COPY options, on
// the values in effect (the format's defaults filled in).
func checkCopyOptions(o sql.CopyOptions) error {
	format, delim, quote, escape, null := o.Format, o.Delimiter, o.Quote, o.Escape, o.Null
	nullSet, header := o.NullSet, o.Header
	switch format {
	case "", "text", "csv", "binary":
	default:
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "COPY format \"%s\" not recognized", format)
	}
	if format == "binary" {
		switch {
		case delim != "":
			return pgerror.New(pgerror.CodeSyntaxError, "cannot specify DELIMITER in BINARY mode")
		case nullSet:
			return pgerror.New(pgerror.CodeSyntaxError, "cannot specify NULL in BINARY mode")
		case header:
			return pgerror.New(pgerror.CodeFeatureNotSupported, "cannot specify HEADER in BINARY mode")
		}
		return nil
	}
	csv := format == "csv"
	if !csv {
		switch {
		case quote != "":
			return pgerror.New(pgerror.CodeFeatureNotSupported, "COPY quote available only in CSV mode")
		case escape != "":
			return pgerror.New(pgerror.CodeFeatureNotSupported, "COPY escape available only in CSV mode")
		}
	}
	for _, o := range []struct{ name, v string }{{"delimiter", delim}, {"quote", quote}, {"escape", escape}} {
		if o.v != "" && len(o.v) != 1 {
			return pgerror.Newf(pgerror.CodeFeatureNotSupported, "COPY %s must be a single one-byte character", o.name)
		}
	}
	// The values in effect.
	if delim == "" {
		delim = "\t"
		if csv {
			delim = ","
		}
	}
	if quote == "" {
		quote = "\""
	}
	if !nullSet {
		null = "\\N"
		if csv {
			null = ""
		}
	}
	switch {
	case delim == "\r" || delim == "\n":
		return pgerror.New(pgerror.CodeInvalidParameterValue, "COPY delimiter cannot be newline or carriage return")
	case strings.ContainsAny(null, "\r\n"):
		return pgerror.New(pgerror.CodeInvalidParameterValue, "COPY null representation cannot use newline or carriage return")
	case !csv && strings.Contains("\\.abcdefghijklmnopqrstuvwxyz0123456789", delim):
		return pgerror.Newf(pgerror.CodeInvalidParameterValue, "COPY delimiter cannot be \"%s\"", delim)
	case csv && delim == quote:
		return pgerror.New(pgerror.CodeInvalidParameterValue, "COPY delimiter and quote must be different")
	case strings.Contains(null, delim):
		return pgerror.New(pgerror.CodeFeatureNotSupported, "COPY delimiter must not appear in the NULL specification")
	case csv && strings.Contains(null, quote):
		return pgerror.New(pgerror.CodeFeatureNotSupported, "CSV quote character must not appear in the NULL specification")
	}
	return nil
}
