package parser

import (
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v5"

	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/sql/values"
)

// Conversion of the statements about roles: CREATE/ALTER/DROP ROLE (USER,
// GROUP), REASSIGN OWNED, DROP OWNED and OWNER TO. PostgreSQL checks some
// of what is refused here only when it runs the statement (a reserved
// name, PUBLIC where a role must be named, conflicting options); the
// messages are its own.

// authStmt converts the statements about roles and privileges; ok is
// false for any other statement.
func (c *converter) authStmt(n *pg.Node) (_ sql.Stmt, ok bool, _ error) {
	var s sql.Stmt
	var err error
	switch x := n.GetNode().(type) {
	case *pg.Node_CreateRoleStmt:
		s, err = c.createRole(x.CreateRoleStmt)
	case *pg.Node_AlterRoleStmt:
		s, err = c.alterRole(x.AlterRoleStmt)
	case *pg.Node_AlterRoleSetStmt:
		what := "SET"
		if k := x.AlterRoleSetStmt.GetSetstmt().GetKind(); k == pg.VariableSetKind_VAR_RESET || k == pg.VariableSetKind_VAR_RESET_ALL {
			what = "RESET"
		}
		err = c.unsupported(-1, "ALTER ROLE ... %s", what)
	case *pg.Node_RenameStmt:
		if x.RenameStmt.RenameType != pg.ObjectType_OBJECT_ROLE {
			return nil, false, nil
		}
		s, err = c.renameRole(x.RenameStmt)
	case *pg.Node_DropRoleStmt:
		s, err = c.dropRole(x.DropRoleStmt)
	case *pg.Node_GrantStmt:
		s, err = c.grantStmt(x.GrantStmt)
	case *pg.Node_GrantRoleStmt:
		s, err = c.grantRole(x.GrantRoleStmt)
	case *pg.Node_AlterDefaultPrivilegesStmt:
		s, err = c.alterDefaultPrivileges(x.AlterDefaultPrivilegesStmt)
	case *pg.Node_ReassignOwnedStmt:
		s, err = c.reassignOwned(x.ReassignOwnedStmt)
	case *pg.Node_DropOwnedStmt:
		s, err = c.dropOwned(x.DropOwnedStmt)
	default:
		return nil, false, nil
	}
	return s, true, err
}

// roleSpec converts a RoleSpec; CURRENT_ROLE is CURRENT_USER.
func roleSpec(r *pg.RoleSpec) sql.RoleSpec {
	switch r.GetRoletype() {
	case pg.RoleSpecType_ROLESPEC_PUBLIC:
		return sql.RoleSpec{Kind: sql.RolePublic}
	case pg.RoleSpecType_ROLESPEC_CURRENT_ROLE, pg.RoleSpecType_ROLESPEC_CURRENT_USER:
		return sql.RoleSpec{Kind: sql.RoleCurrentUser}
	case pg.RoleSpecType_ROLESPEC_SESSION_USER:
		return sql.RoleSpec{Kind: sql.RoleSessionUser}
	}
	return sql.RoleSpec{Name: r.GetRolename()}
}

// roleSpecs converts a list of RoleSpec nodes; unless public, PUBLIC is
// refused as PostgreSQL's get_rolespec_oid does.
func roleSpecs(nodes []*pg.Node, public bool) ([]sql.RoleSpec, error) {
	out := make([]sql.RoleSpec, 0, len(nodes))
	for _, n := range nodes {
		r, err := namedRole(n.GetRoleSpec(), public)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// namedRole converts one RoleSpec that must name a role (PUBLIC only if
// public).
func namedRole(r *pg.RoleSpec, public bool) (sql.RoleSpec, error) {
	if r == nil {
		return sql.RoleSpec{}, pgerror.New(pgerror.CodeSyntaxError, "role specification expected")
	}
	s := roleSpec(r)
	if s.Kind == sql.RolePublic && !public {
		return s, pgerror.New(pgerror.CodeUndefinedObject, `role "public" does not exist`)
	}
	return s, nil
}

// checkRoleName refuses the names CREATE ROLE and RENAME TO may not give.
func checkRoleName(name string) error {
	switch {
	case name == "public" || name == "none":
		return pgerror.Newf(pgerror.CodeReservedName, "role name \"%s\" is reserved", name)
	case strings.HasPrefix(name, "pg_"):
		return pgerror.Newf(pgerror.CodeReservedName, "role name \"%s\" is reserved", name).
			WithDetail("Role names starting with \"pg_\" are reserved.")
	}
	return nil
}

func (c *converter) createRole(s *pg.CreateRoleStmt) (sql.Stmt, error) {
	if err := checkRoleName(s.Role); err != nil {
		return nil, err
	}
	out := &sql.CreateRole{Name: s.Role}
	if err := c.roleOptions(s.Options, &out.Options); err != nil {
		return nil, err
	}
	if s.StmtType == pg.RoleStmtType_ROLESTMT_USER && out.Options.Login == nil {
		login := true
		out.Options.Login = &login
	}
	return out, nil
}

func (c *converter) alterRole(s *pg.AlterRoleStmt) (sql.Stmt, error) {
	role, err := namedRole(s.Role, false)
	if err != nil {
		return nil, err
	}
	for _, o := range s.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == "rolemembers" {
			return c.alterGroup(s, role, d)
		}
	}
	out := &sql.AlterRole{Role: role}
	if err := c.roleOptions(s.Options, &out.Options); err != nil {
		return nil, err
	}
	return out, nil
}

// alterGroup converts ALTER GROUP g ADD|DROP USER u, ... (and ALTER ROLE
// g USER u, ...) into what PostgreSQL does with it: GRANT g TO u, ... or
// REVOKE g FROM u, ...
func (c *converter) alterGroup(s *pg.AlterRoleStmt, group sql.RoleSpec, members *pg.DefElem) (sql.Stmt, error) {
	if len(s.Options) > 1 {
		return nil, c.unsupported(members.Location, "ALTER ROLE ... USER with other options")
	}
	if group.Kind != sql.RoleName {
		return nil, c.unsupported(s.Role.Location, "ALTER GROUP of %s", group.String())
	}
	g := &sql.GrantRole{Revoke: s.Action < 0, Roles: []string{group.Name}}
	var err error
	if g.Members, err = roleSpecs(members.Arg.GetList().GetItems(), false); err != nil {
		return nil, err
	}
	return g, nil
}

// renameRole converts ALTER ROLE name RENAME TO new.
func (c *converter) renameRole(s *pg.RenameStmt) (sql.Stmt, error) {
	if err := checkRoleName(s.Newname); err != nil {
		return nil, err
	}
	return &sql.AlterRole{Role: sql.RoleSpec{Name: s.Subname}, NewName: s.Newname}, nil
}

func (c *converter) dropRole(s *pg.DropRoleStmt) (sql.Stmt, error) {
	out := &sql.DropRole{IfExists: s.MissingOk}
	for _, n := range s.Roles {
		r := roleSpec(n.GetRoleSpec())
		if r.Kind != sql.RoleName {
			return nil, pgerror.New(pgerror.CodeInvalidParameterValue, "cannot use special role specifier in DROP ROLE")
		}
		out.Names = append(out.Names, r.Name)
	}
	return out, nil
}

// roleOptions converts the options of CREATE ROLE and ALTER ROLE into o.
func (c *converter) roleOptions(opts []*pg.Node, o *sql.RoleOptions) error {
	seen := map[string]bool{}
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		if d.Defname == "sysid" {
			continue // PostgreSQL only notes that SYSID is ignored
		}
		if seen[d.Defname] {
			return errAt(pgerror.CodeSyntaxError, c.pp.orig(int(d.Location)), "conflicting or redundant options")
		}
		seen[d.Defname] = true
		if err := c.roleOption(d, o); err != nil {
			return err
		}
	}
	return nil
}

// roleOption converts one option of CREATE ROLE or ALTER ROLE into o.
func (c *converter) roleOption(d *pg.DefElem, o *sql.RoleOptions) error {
	flag := func() *bool { v := d.Arg.GetBoolean().GetBoolval(); return &v }
	var err error
	switch d.Defname {
	case "superuser":
		o.Superuser = flag()
	case "createrole":
		o.CreateRole = flag()
	case "createdb":
		o.CreateDB = flag()
	case "inherit":
		o.Inherit = flag()
	case "canlogin":
		o.Login = flag()
	case "isreplication":
		o.Replication = flag()
	case "bypassrls":
		o.BypassRLS = flag()
	case "connectionlimit":
		n := int(d.Arg.GetInteger().GetIval())
		if n < -1 {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid connection limit: %d", n)
		}
		o.ConnLimit = &n
	case "password":
		if d.Arg == nil {
			o.PasswordNull = true
		} else {
			p := d.Arg.GetString_().GetSval()
			o.Password = &p
		}
	case "validUntil":
		err = validUntil(d.Arg.GetString_().GetSval(), o)
	case "addroleto":
		o.InRole, err = roleSpecs(d.Arg.GetList().GetItems(), false)
	case "rolemembers":
		o.Role, err = roleSpecs(d.Arg.GetList().GetItems(), false)
	case "adminmembers":
		o.Admin, err = roleSpecs(d.Arg.GetList().GetItems(), false)
	default:
		return c.unsupported(d.Location, "role option \"%s\"", d.Defname)
	}
	return err
}

// validUntil reads VALID UNTIL's timestamp as timestamptz input would
// (DateStyle's default order; no zone is UTC).
func validUntil(s string, o *sql.RoleOptions) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "infinity", "+infinity":
		o.ValidUntilInfinity = true
		return nil
	case "-infinity":
		return pgerror.New(pgerror.CodeFeatureNotSupported, "VALID UNTIL '-infinity' is not supported")
	}
	v, err := values.ParseTextIn(s, values.TTimestamptz, values.MDY)
	if err != nil {
		return err
	}
	t := v.(time.Time).UTC()
	o.ValidUntil = &t
	return nil
}

func (c *converter) reassignOwned(s *pg.ReassignOwnedStmt) (sql.Stmt, error) {
	roles, err := roleSpecs(s.Roles, false)
	if err != nil {
		return nil, err
	}
	to, err := namedRole(s.Newrole, false)
	if err != nil {
		return nil, err
	}
	return &sql.ReassignOwned{Roles: roles, To: to}, nil
}

func (c *converter) dropOwned(s *pg.DropOwnedStmt) (sql.Stmt, error) {
	roles, err := roleSpecs(s.Roles, false)
	if err != nil {
		return nil, err
	}
	return &sql.DropOwned{Roles: roles, Cascade: s.Behavior == pg.DropBehavior_DROP_CASCADE}, nil
}

// alterTable converts the one ALTER TABLE topicgate has: ALTER TABLE name
// OWNER TO role.
func (c *converter) alterTable(s *pg.AlterTableStmt) (sql.Stmt, error) {
	if s.Objtype != pg.ObjectType_OBJECT_TABLE || len(s.Cmds) != 1 ||
		s.Cmds[0].GetAlterTableCmd().GetSubtype() != pg.AlterTableType_AT_ChangeOwner {
		return nil, pgerror.New(pgerror.CodeFeatureNotSupported, "ALTER TABLE is not supported; use ALTER TOPIC")
	}
	name, err := c.topicName(s.Relation)
	if err != nil {
		return nil, err
	}
	owner, err := namedRole(s.Cmds[0].GetAlterTableCmd().GetNewowner(), false)
	if err != nil {
		return nil, err
	}
	return &sql.AlterOwner{Topic: name, Owner: owner, IfExists: s.MissingOk}, nil
}

// topicName is the topic a table name of GRANT or ALTER TABLE names: a
// bare name, or one qualified by public (the schema of topics).
func (c *converter) topicName(rv *pg.RangeVar) (string, error) {
	switch {
	case rv.Catalogname != "":
		return "", c.unsupported(rv.Location, "a catalog-qualified name")
	case rv.Schemaname == "" || rv.Schemaname == "public":
		return rv.Relname, nil
	case rv.Schemaname == "sys" || rv.Schemaname == "pg_catalog" || rv.Schemaname == "information_schema":
		return "", c.unsupported(rv.Location, "GRANT on system view %s.%s", rv.Schemaname, rv.Relname)
	}
	return "", errAt(pgerror.CodeInvalidSchemaName, c.pp.orig(int(rv.Location)), "schema \"%s\" does not exist", rv.Schemaname)
}
