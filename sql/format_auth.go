package sql

import (
	"strconv"
	"strings"
)

// Formatting of the statements about roles and privileges (Format). The
// text is PostgreSQL's syntax with topicgate's object names (TOPIC,
// CONSUMER, ALL TOPICS IN SCHEMA, TOPICS, CONSUMERS) and reads back as the
// same tree. Passwords are printed: use RedactPasswords before logging.

// PasswordRedacted replaces a password in RedactPasswords' copies.
const PasswordRedacted = "<redacted>"

// RedactPasswords returns s, or for a CREATE ROLE or ALTER ROLE that sets
// a password a copy of it whose password is PasswordRedacted: what the
// audit and statement logs print.
func RedactPasswords(s Stmt) Stmt {
	redacted := PasswordRedacted
	switch x := s.(type) {
	case *CreateRole:
		if x.Options.Password != nil {
			c := *x
			c.Options.Password = &redacted
			return &c
		}
	case *AlterRole:
		if x.Options.Password != nil {
			c := *x
			c.Options.Password = &redacted
			return &c
		}
	}
	return s
}

// authStmt prints a statement of ast_auth.go; false if s is none.
func (f *formatter) authStmt(s Stmt) bool {
	switch x := s.(type) {
	case *CreateRole:
		f.w("CREATE ROLE ", QuoteName(x.Name))
		f.roleOptions(&x.Options)
	case *AlterRole:
		f.w("ALTER ROLE ", x.Role.String())
		if x.NewName != "" {
			f.w(" RENAME TO ", QuoteName(x.NewName))
		} else {
			f.roleOptions(&x.Options)
		}
	case *DropRole:
		f.w("DROP ROLE ")
		if x.IfExists {
			f.w("IF EXISTS ")
		}
		f.nameList(x.Names)
	case *GrantPrivs:
		f.grantPrivs(x, false)
	case *GrantRole:
		f.grantRole(x)
	case *AlterDefaultPrivileges:
		f.w("ALTER DEFAULT PRIVILEGES ")
		if len(x.ForRoles) > 0 {
			f.w("FOR ROLE ")
			f.roleList(x.ForRoles)
			f.w(" ")
		}
		if len(x.Schemas) > 0 {
			f.w("IN SCHEMA ")
			f.nameList(x.Schemas)
			f.w(" ")
		}
		f.grantPrivs(&x.Grant, true)
	case *AlterOwner:
		f.w("ALTER TOPIC ")
		if x.IfExists {
			f.w("IF EXISTS ")
		}
		f.w(QuoteName(x.Topic), " OWNER TO ", x.Owner.String())
	case *ReassignOwned:
		f.w("REASSIGN OWNED BY ")
		f.roleList(x.Roles)
		f.w(" TO ", x.To.String())
	case *DropOwned:
		f.w("DROP OWNED BY ")
		f.roleList(x.Roles)
		if x.Cascade {
			f.w(" CASCADE")
		}
	default:
		return false
	}
	return true
}

// String prints a role as GRANT and the other statements name it.
func (r RoleSpec) String() string {
	switch r.Kind {
	case RolePublic:
		return "PUBLIC"
	case RoleCurrentUser:
		return "CURRENT_USER"
	case RoleSessionUser:
		return "SESSION_USER"
	}
	return QuoteName(r.Name)
}

func (f *formatter) roleList(rs []RoleSpec) {
	for i, r := range rs {
		if i > 0 {
			f.w(", ")
		}
		f.w(r.String())
	}
}

func (f *formatter) nameList(ns []string) {
	for i, n := range ns {
		if i > 0 {
			f.w(", ")
		}
		f.w(QuoteName(n))
	}
}

// roleOptions prints " WITH options" in a fixed order, or nothing.
func (f *formatter) roleOptions(o *RoleOptions) {
	var opts []string
	flag := func(v *bool, name string) {
		if v != nil {
			opts = append(opts, map[bool]string{true: name, false: "NO" + name}[*v])
		}
	}
	flag(o.Superuser, "SUPERUSER")
	flag(o.CreateDB, "CREATEDB")
	flag(o.CreateRole, "CREATEROLE")
	flag(o.Inherit, "INHERIT")
	flag(o.Login, "LOGIN")
	flag(o.Replication, "REPLICATION")
	flag(o.BypassRLS, "BYPASSRLS")
	if o.ConnLimit != nil {
		opts = append(opts, "CONNECTION LIMIT "+strconv.Itoa(*o.ConnLimit))
	}
	switch {
	case o.PasswordNull:
		opts = append(opts, "PASSWORD NULL")
	case o.Password != nil:
		opts = append(opts, "PASSWORD "+QuoteString(*o.Password))
	}
	switch {
	case o.ValidUntilInfinity:
		opts = append(opts, "VALID UNTIL 'infinity'")
	case o.ValidUntil != nil:
		opts = append(opts, "VALID UNTIL "+QuoteString(o.ValidUntil.UTC().Format("2006-01-02 15:04:05.999999999-07")))
	}
	for _, m := range []struct {
		kw    string
		roles []RoleSpec
	}{{"IN ROLE ", o.InRole}, {"ROLE ", o.Role}, {"ADMIN ", o.Admin}} {
		if len(m.roles) > 0 {
			var f2 formatter
			f2.roleList(m.roles)
			opts = append(opts, m.kw+f2.b.String())
		}
	}
	if len(opts) > 0 {
		f.w(" WITH ", strings.Join(opts, " "))
	}
}

// grantPrivs prints GRANT or REVOKE of privileges; defaults: of ALTER
// DEFAULT PRIVILEGES, on TOPICS or CONSUMERS.
func (f *formatter) grantPrivs(x *GrantPrivs, defaults bool) {
	if x.Revoke {
		f.w("REVOKE ")
		if x.GrantOption {
			f.w("GRANT OPTION FOR ")
		}
	} else {
		f.w("GRANT ")
	}
	if x.Privs == nil {
		f.w("ALL")
	}
	for i, p := range x.Privs {
		if i > 0 {
			f.w(", ")
		}
		f.w(p.Name)
		if len(p.Columns) > 0 {
			f.w(" (")
			f.nameList(p.Columns)
			f.w(")")
		}
	}
	f.w(" ON ")
	switch {
	case defaults && x.Kind == ObjConsumer:
		f.w("CONSUMERS")
	case defaults:
		f.w("TOPICS")
	case x.Kind == ObjConsumer:
		f.w("CONSUMER ")
		for i, c := range x.Consumers {
			if i > 0 {
				f.w(", ")
			}
			f.w(QuoteName(c.Topic), ".", QuoteName(c.Consumer))
		}
	case x.Kind == ObjSchema:
		f.w("SCHEMA ")
		f.nameList(x.Objects)
	case x.Kind == ObjAllTopicsInSchema:
		f.w("ALL TOPICS IN SCHEMA ")
		f.nameList(x.Objects)
	default:
		f.w("TOPIC ")
		f.nameList(x.Objects)
	}
	f.w(map[bool]string{false: " TO ", true: " FROM "}[x.Revoke])
	f.roleList(x.Grantees)
	if x.GrantOption && !x.Revoke {
		f.w(" WITH GRANT OPTION")
	}
	f.grantedBy(x.GrantedBy, x.Cascade)
}

func (f *formatter) grantedBy(by *RoleSpec, cascade bool) {
	if by != nil {
		f.w(" GRANTED BY ", by.String())
	}
	if cascade {
		f.w(" CASCADE")
	}
}

// grantRole prints GRANT or REVOKE of roles.
func (f *formatter) grantRole(x *GrantRole) {
	opts := []struct {
		name string
		v    *bool
	}{{"ADMIN", x.Admin}, {"INHERIT", x.Inherit}, {"SET", x.Set}}
	if x.Revoke {
		f.w("REVOKE ")
		for _, o := range opts {
			if o.v != nil {
				f.w(o.name, " OPTION FOR ")
				break
			}
		}
		f.nameList(x.Roles)
		f.w(" FROM ")
		f.roleList(x.Members)
	} else {
		f.w("GRANT ")
		f.nameList(x.Roles)
		f.w(" TO ")
		f.roleList(x.Members)
		sep := " WITH "
		for _, o := range opts {
			if o.v != nil {
				f.w(sep, o.name, " ", strings.ToUpper(strconv.FormatBool(*o.v)))
				sep = ", "
			}
		}
	}
	f.grantedBy(x.GrantedBy, x.Cascade)
}
