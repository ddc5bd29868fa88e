package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Conversion of GRANT and REVOKE (of privileges and of roles) and ALTER
// DEFAULT PRIVILEGES. The pre-pass (prepass_auth.go) has turned TOPIC into
// TABLE and CONSUMER into SEQUENCE; pp.consumers tells a SEQUENCE the user
// wrote from one that was a CONSUMER.

// privsOf are the privileges valid on each kind of object, as PostgreSQL's
// ACL_ALL_RIGHTS_*: a topic's are a table's, a consumer's a sequence's.
var privsOf = map[sql.ObjectKind][]string{
	sql.ObjTopic:             {"INSERT", "SELECT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"},
	sql.ObjAllTopicsInSchema: {"INSERT", "SELECT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"},
	sql.ObjConsumer:          {"USAGE", "SELECT", "UPDATE"},
	sql.ObjSchema:            {"USAGE", "CREATE"},
}

// columnPrivs are the privileges a column list may limit, in PostgreSQL's
// order; ALL (columns) is all of them.
var columnPrivs = []string{"SELECT", "INSERT", "UPDATE", "REFERENCES"}

// knownPrivs are PostgreSQL's privilege names (string_to_privilege).
var knownPrivs = map[string]bool{
	"insert": true, "select": true, "update": true, "delete": true, "truncate": true, "references": true,
	"trigger": true, "execute": true, "usage": true, "create": true, "temporary": true, "temp": true,
	"connect": true, "set": true, "alter system": true,
}

// kindNames name the kinds of object topicgate has no privileges on.
var kindNames = map[pg.ObjectType]string{
	pg.ObjectType_OBJECT_FUNCTION: "FUNCTION", pg.ObjectType_OBJECT_PROCEDURE: "PROCEDURE",
	pg.ObjectType_OBJECT_ROUTINE: "ROUTINE", pg.ObjectType_OBJECT_DATABASE: "DATABASE",
	pg.ObjectType_OBJECT_LARGEOBJECT: "LARGE OBJECT", pg.ObjectType_OBJECT_TYPE: "TYPE",
	pg.ObjectType_OBJECT_DOMAIN: "DOMAIN", pg.ObjectType_OBJECT_FDW: "FOREIGN DATA WRAPPER",
	pg.ObjectType_OBJECT_FOREIGN_SERVER: "FOREIGN SERVER", pg.ObjectType_OBJECT_LANGUAGE: "LANGUAGE",
	pg.ObjectType_OBJECT_TABLESPACE: "TABLESPACE", pg.ObjectType_OBJECT_PARAMETER_ACL: "PARAMETER",
	pg.ObjectType_OBJECT_SCHEMA: "SCHEMA", pg.ObjectType_OBJECT_TABLE: "TABLE",
}

func kindName(t pg.ObjectType) string {
	if n, ok := kindNames[t]; ok {
		return n
	}
	return strings.ReplaceAll(strings.TrimPrefix(t.String(), "OBJECT_"), "_", " ")
}

func verb(grant bool) string {
	if grant {
		return "GRANT"
	}
	return "REVOKE"
}

func errSequences() error {
	return pgerror.New(pgerror.CodeFeatureNotSupported, "sequences are not supported")
}

func (c *converter) grantStmt(s *pg.GrantStmt) (sql.Stmt, error) {
	out := &sql.GrantPrivs{Revoke: !s.IsGrant, GrantOption: s.GrantOption, Cascade: s.Behavior == pg.DropBehavior_DROP_CASCADE}
	var err error
	switch {
	case s.Targtype == pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA && s.Objtype == pg.ObjectType_OBJECT_TABLE:
		out.Kind = sql.ObjAllTopicsInSchema
		out.Objects = stringList(s.Objects)
	case s.Targtype == pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA && s.Objtype == pg.ObjectType_OBJECT_SEQUENCE:
		return nil, errSequences()
	case s.Targtype == pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA:
		return nil, c.unsupported(-1, "%s ON ALL %sS IN SCHEMA", verb(s.IsGrant), kindName(s.Objtype))
	case s.Objtype == pg.ObjectType_OBJECT_TABLE:
		out.Kind = sql.ObjTopic
		for _, n := range s.Objects {
			name, err := c.topicName(n.GetRangeVar())
			if err != nil {
				return nil, err
			}
			out.Objects = append(out.Objects, name)
		}
	case s.Objtype == pg.ObjectType_OBJECT_SEQUENCE && c.pp.consumers:
		out.Kind = sql.ObjConsumer
		if out.Consumers, err = c.consumerNames(s.Objects); err != nil {
			return nil, err
		}
	case s.Objtype == pg.ObjectType_OBJECT_SEQUENCE:
		return nil, errSequences()
	case s.Objtype == pg.ObjectType_OBJECT_SCHEMA:
		out.Kind = sql.ObjSchema
		out.Objects = stringList(s.Objects)
	default:
		return nil, c.unsupported(-1, "%s ON %s", verb(s.IsGrant), kindName(s.Objtype))
	}
	if out.Privs, err = c.privileges(s.Privileges, out.Kind, false); err != nil {
		return nil, err
	}
	if out.Grantees, err = roleSpecs(s.Grantees, true); err != nil {
		return nil, err
	}
	if s.Grantor != nil {
		g, err := namedRole(s.Grantor, false)
		if err != nil {
			return nil, err
		}
		out.GrantedBy = &g
	}
	return out, nil
}

func stringList(nodes []*pg.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.GetString_().GetSval())
	}
	return out
}

// consumerNames converts ON CONSUMER's names: topic.consumer, or
// public.topic.consumer.
func (c *converter) consumerNames(nodes []*pg.Node) ([]sql.ConsumerName, error) {
	var out []sql.ConsumerName
	for _, n := range nodes {
		rv := n.GetRangeVar()
		switch {
		case rv.Schemaname == "":
			return nil, errAt(pgerror.CodeSyntaxError, c.pp.orig(int(rv.Location)),
				"consumer \"%s\" must be named with its topic, as topic.consumer", rv.Relname)
		case rv.Catalogname != "" && rv.Catalogname != "public":
			return nil, errAt(pgerror.CodeInvalidSchemaName, c.pp.orig(int(rv.Location)), "schema \"%s\" does not exist", rv.Catalogname)
		}
		out = append(out, sql.ConsumerName{Topic: rv.Schemaname, Consumer: rv.Relname})
	}
	return out, nil
}

// privileges converts a privilege list: nil for ALL [PRIVILEGES], whose
// column list (ALL (a, b)) stands for every column privilege on them.
func (c *converter) privileges(nodes []*pg.Node, kind sql.ObjectKind, defaults bool) ([]sql.Privilege, error) {
	var out []sql.Privilege
	for _, n := range nodes {
		p := n.GetAccessPriv()
		cols := stringList(p.GetCols())
		if len(p.GetCols()) == 0 {
			cols = nil
		}
		switch {
		case cols != nil && defaults:
			return nil, pgerror.New(pgerror.CodeInvalidGrantOperation, "default privileges cannot be set for columns")
		case cols != nil && kind != sql.ObjTopic && kind != sql.ObjAllTopicsInSchema:
			return nil, pgerror.New(pgerror.CodeInvalidGrantOperation, "column privileges are only valid for relations")
		case p.GetPrivName() == "" && cols == nil: // ALL [PRIVILEGES]
			return nil, nil
		case p.GetPrivName() == "":
			for _, name := range columnPrivs {
				out = append(out, sql.Privilege{Name: name, Columns: cols})
			}
			continue
		case !knownPrivs[p.GetPrivName()]:
			return nil, pgerror.Newf(pgerror.CodeSyntaxError, "unrecognized privilege type \"%s\"", p.GetPrivName())
		}
		name := strings.ToUpper(p.GetPrivName())
		if name == "TEMP" {
			name = "TEMPORARY"
		}
		if cols != nil && !contains(columnPrivs, name) {
			return nil, pgerror.Newf(pgerror.CodeInvalidGrantOperation, "invalid privilege type %s for column", name)
		}
		if !contains(privsOf[kind], name) {
			return nil, pgerror.Newf(pgerror.CodeInvalidGrantOperation, "invalid privilege type %s for %s", name, kindWord(kind))
		}
		out = append(out, sql.Privilege{Name: name, Columns: cols})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kindWord names a kind of object in PostgreSQL's invalid privilege type
// message.
func kindWord(k sql.ObjectKind) string {
	switch k {
	case sql.ObjConsumer:
		return "consumer"
	case sql.ObjSchema:
		return "schema"
	}
	return "table"
}

func (c *converter) grantRole(s *pg.GrantRoleStmt) (sql.Stmt, error) {
	out := &sql.GrantRole{Revoke: !s.IsGrant, Cascade: s.Behavior == pg.DropBehavior_DROP_CASCADE}
	for _, n := range s.GrantedRoles {
		p := n.GetAccessPriv()
		if len(p.GetCols()) > 0 {
			return nil, pgerror.New(pgerror.CodeInvalidGrantOperation, "column names cannot be included in GRANT/REVOKE ROLE")
		}
		if p.GetPrivName() == "public" {
			return nil, pgerror.New(pgerror.CodeUndefinedObject, `role "public" does not exist`)
		}
		out.Roles = append(out.Roles, p.GetPrivName())
	}
	var err error
	if out.Members, err = roleSpecs(s.GranteeRoles, false); err != nil {
		return nil, err
	}
	for _, n := range s.Opt {
		d := n.GetDefElem()
		v := d.GetArg().GetBoolean().GetBoolval()
		switch d.GetDefname() {
		case "admin":
			out.Admin = &v
		case "inherit":
			out.Inherit = &v
		case "set":
			out.Set = &v
		default:
			return nil, errAt(pgerror.CodeSyntaxError, c.pp.orig(int(d.GetLocation())), "unrecognized role option \"%s\"", d.GetDefname())
		}
	}
	if s.Grantor != nil {
		g, err := namedRole(s.Grantor, false)
		if err != nil {
			return nil, err
		}
		out.GrantedBy = &g
	}
	return out, nil
}

func (c *converter) alterDefaultPrivileges(s *pg.AlterDefaultPrivilegesStmt) (sql.Stmt, error) {
	out := &sql.AlterDefaultPrivileges{}
	seen := map[string]bool{}
	for _, n := range s.Options {
		d := n.GetDefElem()
		if seen[d.GetDefname()] {
			return nil, errAt(pgerror.CodeSyntaxError, c.pp.orig(int(d.GetLocation())), "conflicting or redundant options")
		}
		seen[d.GetDefname()] = true
		var err error
		switch d.GetDefname() {
		case "roles":
			out.ForRoles, err = roleSpecs(d.GetArg().GetList().GetItems(), false)
		case "schemas":
			out.Schemas = stringList(d.GetArg().GetList().GetItems())
		}
		if err != nil {
			return nil, err
		}
	}
	a := s.Action
	g := &out.Grant
	*g = sql.GrantPrivs{Revoke: !a.IsGrant, GrantOption: a.GrantOption, Cascade: a.Behavior == pg.DropBehavior_DROP_CASCADE}
	switch {
	case a.Objtype == pg.ObjectType_OBJECT_TABLE:
		g.Kind = sql.ObjTopic
	case a.Objtype == pg.ObjectType_OBJECT_SEQUENCE && c.pp.consumers:
		g.Kind = sql.ObjConsumer
	case a.Objtype == pg.ObjectType_OBJECT_SEQUENCE:
		return nil, errSequences()
	default:
		return nil, c.unsupported(-1, "ALTER DEFAULT PRIVILEGES ON %sS", kindName(a.Objtype))
	}
	var err error
	if g.Privs, err = c.privileges(a.Privileges, g.Kind, true); err != nil {
		return nil, err
	}
	if g.Grantees, err = roleSpecs(a.Grantees, true); err != nil {
		return nil, err
	}
	return out, nil
}
