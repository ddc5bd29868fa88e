package parser

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Conversion of transaction control, SET/SHOW and EXPLAIN statements.

func (c *converter) transactionStmt(s *pg.TransactionStmt) (sql.Stmt, error) {
	if s.Chain {
		return nil, c.unsupported(-1, "AND CHAIN")
	}
	switch s.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		b := &sql.Begin{Start: s.Kind == pg.TransactionStmtKind_TRANS_STMT_START}
		for _, o := range s.Options {
			d := o.GetDefElem()
			if d == nil {
				continue
			}
			v := constText(d.Arg)
			switch d.Defname {
			case "transaction_read_only":
				b.ReadOnly = v == "1" || v == "true"
			case "transaction_isolation":
				b.Isolation = strings.ToLower(v)
			}
		}
		return b, nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		return &sql.Commit{}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return &sql.Rollback{}, nil
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return &sql.Savepoint{Op: "SAVEPOINT", Name: s.SavepointName}, nil
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		return &sql.Savepoint{Op: "RELEASE", Name: s.SavepointName}, nil
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return &sql.Savepoint{Op: "ROLLBACK TO", Name: s.SavepointName}, nil
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "%s is not supported",
		strings.ReplaceAll(strings.TrimPrefix(s.Kind.String(), "TRANS_STMT_"), "_", " "))
}

func (c *converter) setStmt(s *pg.VariableSetStmt) (sql.Stmt, error) {
	name := strings.ToLower(s.Name)
	switch s.Kind {
	case pg.VariableSetKind_VAR_RESET:
		return &sql.SetVar{Name: name, Reset: true}, nil
	case pg.VariableSetKind_VAR_RESET_ALL:
		return &sql.SetVar{Reset: true, All: true}, nil
	case pg.VariableSetKind_VAR_SET_DEFAULT:
		return &sql.SetVar{Name: name, Reset: true, Default: true, Local: s.IsLocal}, nil
	case pg.VariableSetKind_VAR_SET_VALUE:
		vals := make([]string, 0, len(s.Args))
		for _, a := range s.Args {
			vals = append(vals, constText(a))
		}
		return &sql.SetVar{Name: name, Value: strings.Join(vals, ", "), Local: s.IsLocal}, nil
	case pg.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION ...
		if len(s.Args) == 1 && s.Args[0].GetDefElem() != nil {
			d := s.Args[0].GetDefElem()
			n := d.Defname
			if name != "transaction" {
				n = "default_" + n
			}
			return &sql.SetVar{Name: n, Value: strings.ToLower(constText(d.Arg)), Local: name == "transaction"}, nil
		}
	}
	return nil, c.unsupported(-1, "SET %s", s.Name)
}

// constText renders a constant (or a cast of one) as SET would see it.
func constText(n *pg.Node) string {
	switch x := n.GetNode().(type) {
	case *pg.Node_AConst:
		switch v := x.AConst.Val.(type) {
		case *pg.A_Const_Ival:
			return strconv.Itoa(int(v.Ival.Ival))
		case *pg.A_Const_Fval:
			return v.Fval.Fval
		case *pg.A_Const_Sval:
			return v.Sval.Sval
		case *pg.A_Const_Boolval:
			return strconv.FormatBool(v.Boolval.Boolval)
		}
	case *pg.Node_TypeCast:
		return constText(x.TypeCast.Arg)
	case *pg.Node_String_:
		return x.String_.Sval
	case *pg.Node_Integer:
		return strconv.Itoa(int(x.Integer.Ival))
	case *pg.Node_Boolean:
		return strconv.FormatBool(x.Boolean.Boolval)
	}
	return ""
}

func (c *converter) explainStmt(s *pg.ExplainStmt) (sql.Stmt, error) {
	out := &sql.Explain{Format: "text"}
	timingSet := false
	for _, o := range s.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		v := ""
		if d.Arg != nil {
			v = strings.ToLower(constText(d.Arg))
		}
		boolean := func() (bool, error) {
			switch v {
			case "", "true", "on", "1":
				return true, nil
			case "false", "off", "0":
				return false, nil
			}
			return false, pgerror.Newf(pgerror.CodeSyntaxError, "%s requires a Boolean value", d.Defname)
		}
		var err error
		switch d.Defname {
		case "analyze":
			out.Analyze, err = boolean()
		case "timing":
			out.Timing, err = boolean()
			timingSet = true
		case "verbose", "costs", "settings", "buffers", "wal", "summary":
			_, err = boolean() // accepted; topicgate has no costs or buffers to show
		case "format":
			switch v {
			case "text", "json":
				out.Format = v
			case "xml", "yaml":
				err = pgerror.Newf(pgerror.CodeFeatureNotSupported, "EXPLAIN format \"%s\" is not supported (text and json are)", v)
			default:
				err = pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized value for EXPLAIN option \"%s\": \"%s\"", d.Defname, v)
			}
		default:
			err = pgerror.Newf(pgerror.CodeSyntaxError, "unrecognized EXPLAIN option \"%s\"", d.Defname)
		}
		if err != nil {
			return nil, err
		}
	}
	if !timingSet {
		out.Timing = out.Analyze
	} else if out.Timing && !out.Analyze {
		return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "EXPLAIN option TIMING requires ANALYZE")
	}
	inner, err := c.stmt(s.Query)
	if err != nil {
		return nil, err
	}
	out.Stmt = inner
	return out, nil
}
