package planner

import (
	"strings"

	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
)

// Build plans stmt. declared holds the parameter types the client declared
// (TUnknown where it did not); the returned slice has one inferred type per
// parameter the statement uses. Unresolved parameters default to text.
func Build(cat Catalog, stmt sql.Stmt, declared []Type) (plantree.Plan, []Type, error) {
	params := append([]Type(nil), declared...)
	used := sql.ParamsUsed(stmt)
	if n := len(used); n > len(params) {
		params = append(params, make([]Type, n-len(params))...)
	}
	for i, u := range used {
		if !u && params[i] == TUnknown {
			// A $n the statement skips has no type to infer, and the
			// client did not declare one (42P18 in PostgreSQL).
			return nil, nil, pgerror.Newf(pgerror.CodeIndeterminateDatatype, "could not determine data type of parameter $%d", i+1)
		}
	}
	p, err := build(cat, stmt, &params)
	if err != nil {
		return nil, nil, err
	}
	plantree.Finish(p)
	for i, t := range params {
		if t == TUnknown {
			params[i] = TText
		}
	}
	return p, params, nil
}

func build(cat Catalog, stmt sql.Stmt, params *[]Type) (plantree.Plan, error) {
	switch s := stmt.(type) {
	case *sql.Select:
		return planSelect(cat, s, params)
	case *sql.Insert:
		return planInsert(cat, s, params)
	case *sql.CopyFrom:
		return planCopy(cat, s)
	case *sql.CreateTopic:
		return planCreateTopic(s)
	case *sql.AlterTopic:
		return planAlterTopic(s)
	case *sql.DropTopic:
		return &plantree.DropTopicPlan{Names: s.Names, IfExists: s.IfExists}, nil
	case *sql.Explain:
		inner, err := build(cat, s.Stmt, params)
		if err != nil {
			return nil, err
		}
		if s.Analyze {
			switch inner.(type) {
			case *plantree.SelectPlan, *plantree.DeclareCursorPlan:
			default:
				return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "EXPLAIN ANALYZE of %s is not supported (it would run the statement): only of a query", stmtName(s.Stmt))
			}
		}
		return &plantree.ExplainPlan{Inner: inner, Analyze: s.Analyze, Timing: s.Timing, JSON: s.Format == "json"}, nil
	case *sql.Show:
		if strings.EqualFold(s.Name, "all") {
			return &plantree.UtilityPlan{Stmt: s, Cols: []plantree.Column{{Name: "name", T: TText}, {Name: "setting", T: TText}, {Name: "description", T: TText}}}, nil
		}
		return &plantree.UtilityPlan{Stmt: s, Cols: []plantree.Column{{Name: strings.ToLower(s.Name), T: TText}}}, nil
	case *sql.ShowCreateTopic:
		if _, err := lookupTopic(cat, s.Name); err != nil {
			return nil, pgerror.At(err, s.Pos)
		}
		return &plantree.UtilityPlan{Stmt: s, Cols: []plantree.Column{{Name: "topic_name", T: TText}, {Name: "create_statement", T: TText}}}, nil
	case *sql.Begin, *sql.Commit, *sql.Rollback, *sql.Savepoint, *sql.SetVar, *sql.Empty, *sql.Discard, *sql.Deallocate:
		return &plantree.UtilityPlan{Stmt: s}, nil
	case *sql.CreateRole, *sql.AlterRole, *sql.DropRole, *sql.GrantPrivs, *sql.GrantRole,
		*sql.AlterDefaultPrivileges, *sql.AlterOwner, *sql.ReassignOwned, *sql.DropOwned:
		return &plantree.UtilityPlan{Stmt: s}, nil
	case *sql.Update:
		if s.Table.Schema == "sys" && s.Table.Name == "consumers" {
			return planSetPosition(s, params)
		}
		return planSharedUpdate(cat, s, params)
	case *sql.Delete:
		return planSharedDelete(cat, s, params)
	case *sql.CopyTo:
		return planCopyOut(cat, s, params)
	case *sql.DeclareCursor:
		return planDeclareCursor(cat, s, params)
	case *sql.Fetch:
		return &plantree.FetchPlan{Fetch: *s}, nil
	case *sql.CloseCursor:
		return &plantree.CloseCursorPlan{Close: *s}, nil
	}
	return nil, pgerror.Newf(pgerror.CodeFeatureNotSupported, "statement %T is not supported", stmt)
}

func lookupTopic(cat Catalog, name string) (topicstore.TopicInfo, error) {
	ti, err := cat.Topic(name)
	if err != nil {
		return ti, txn.StoreError(err, name)
	}
	return ti, nil
}

// stmtName names a statement's kind for messages.
func stmtName(s sql.Stmt) string {
	switch s.(type) {
	case *sql.Insert:
		return "INSERT"
	case *sql.CopyFrom, *sql.CopyTo:
		return "COPY"
	case *sql.Update:
		return "UPDATE"
	case *sql.Delete:
		return "DELETE"
	}
	return "this statement"
}

// Catalog is what the planner may ask about topics. It never writes.
type Catalog interface {
	Topic(name string) (topicstore.TopicInfo, error)
}
