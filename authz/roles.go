package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"topicgate/acl"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// Output receives a statement's notices and warnings.
type Output interface {
	Notice(code, msg string)
	Warning(code, msg string)
}

// Exec runs a statement about roles or grants as id and returns its
// command tag; ok false: stmt is not one of them.
func (a *Authority) Exec(ctx context.Context, id *Identity, stmt sql.Stmt, out Output) (tag string, ok bool, err error) {
	tag, ok, err = a.exec(ctx, id, stmt, out)
	return tag, ok, pgError(err)
}

// pgError gives an error of package acl its SQLSTATE for the client.
func pgError(err error) error {
	var ae *acl.Error
	if errors.As(err, &ae) {
		pe := pgerror.New(ae.Code, ae.Message)
		pe.Detail = ae.Detail
		return pe
	}
	return err
}

func (a *Authority) exec(ctx context.Context, id *Identity, stmt sql.Stmt, out Output) (tag string, ok bool, err error) {
	switch st := stmt.(type) {
	case *sql.CreateRole:
		return "CREATE ROLE", true, a.createRole(ctx, id, st)
	case *sql.AlterRole:
		return "ALTER ROLE", true, a.alterRole(ctx, id, st)
	case *sql.DropRole:
		return "DROP ROLE", true, a.dropRoles(ctx, id, st, out)
	case *sql.GrantRole:
		if st.Revoke {
			return "REVOKE ROLE", true, a.grantRole(ctx, id, st, out)
		}
		return "GRANT ROLE", true, a.grantRole(ctx, id, st, out)
	case *sql.GrantPrivs:
		if st.Revoke {
			return "REVOKE", true, a.grantPrivs(ctx, id, st, out)
		}
		return "GRANT", true, a.grantPrivs(ctx, id, st, out)
	case *sql.AlterDefaultPrivileges:
		return "ALTER DEFAULT PRIVILEGES", true, a.alterDefaults(ctx, id, st)
	case *sql.AlterOwner:
		return "ALTER TOPIC", true, a.alterOwner(ctx, id, st, out)
	case *sql.ReassignOwned:
		return "REASSIGN OWNED", true, a.reassignOwned(ctx, id, st)
	case *sql.DropOwned:
		return "DROP OWNED", true, a.dropOwned(ctx, id, st)
	}
	return "", false, nil
}

// roleName resolves a RoleSpec to a role name; "" for PUBLIC when public
// is allowed.
func roleName(d *acl.Doc, id *Identity, r sql.RoleSpec, public bool) (string, error) {
	switch r.Kind {
	case sql.RolePublic:
		if !public {
			return "", pgerror.New(pgerror.CodeReservedName, "role name \"public\" is reserved")
		}
		return "", nil
	case sql.RoleCurrentUser:
		return id.Current, nil
	case sql.RoleSessionUser:
		return id.Session, nil
	}
	if _, ok := d.Role(r.Name); !ok {
		return "", roleMissing(r.Name)
	}
	return r.Name, nil
}

func roleMissing(name string) error {
	return pgerror.Newf(pgerror.CodeUndefinedObject, "role \"%s\" does not exist", name)
}

// createRole is CREATE ROLE: checked by PostgreSQL 16's rules unless id is
// a superuser; a CREATEROLE creator gets ADMIN OPTION on the new role.
func (a *Authority) createRole(ctx context.Context, id *Identity, st *sql.CreateRole) error {
	return a.change(ctx, func(d *acl.Doc) error {
		r := acl.Role{Name: st.Name, Inherit: true, ConnLimit: -1}
		if err := a.applyOptions(&r, &st.Options); err != nil {
			return err
		}
		super := id.super(d)
		if !super {
			if err := d.CheckCreateRole(id.Current, r); err != nil {
				return err
			}
		}
		if _, err := d.CreateRole(r); err != nil {
			return err
		}
		if !super {
			d.CreatedBy(id.Current, r.Name)
		}
		grantor := id.actor(d)
		for _, of := range st.Options.InRole {
			if err := grantMember(d, id, of, sql.RoleSpec{Name: r.Name}, grantor, false); err != nil {
				return err
			}
		}
		for _, m := range st.Options.Role {
			if err := grantMember(d, id, sql.RoleSpec{Name: r.Name}, m, grantor, false); err != nil {
				return err
			}
		}
		for _, m := range st.Options.Admin {
			if err := grantMember(d, id, sql.RoleSpec{Name: r.Name}, m, grantor, true); err != nil {
				return err
			}
		}
		return nil
	})
}

func grantMember(d *acl.Doc, id *Identity, role, member sql.RoleSpec, grantor string, admin bool) error {
	rn, err := roleName(d, id, role, false)
	if err != nil {
		return err
	}
	mn, err := roleName(d, id, member, false)
	if err != nil {
		return err
	}
	mr, _ := d.Role(mn)
	return d.GrantRole(rn, mn, grantor, admin, mr.Inherit, true)
}

// applyOptions sets the attributes o gives on r.
func (a *Authority) applyOptions(r *acl.Role, o *sql.RoleOptions) error {
	changesOf(o).Apply(r)
	if o.ConnLimit != nil {
		if *o.ConnLimit < -1 {
			return pgerror.Newf(pgerror.CodeInvalidParameterValue, "invalid connection limit: %d", *o.ConnLimit)
		}
		r.ConnLimit = *o.ConnLimit
	}
	switch {
	case o.PasswordNull:
		r.Password = ""
	case o.Password != nil:
		if *o.Password == "" {
			// PostgreSQL: an empty password is no password (with a NOTICE
			// it logs); it can never match.
			r.Password = ""
			break
		}
		stored, err := acl.StoredPassword(r.Name, *o.Password, a.md5)
		if err != nil {
			return err
		}
		r.Password = stored
	}
	switch {
	case o.ValidUntilInfinity:
		r.ValidUntil = time.Time{}
	case o.ValidUntil != nil:
		r.ValidUntil = *o.ValidUntil
	}
	return nil
}

func (a *Authority) alterRole(ctx context.Context, id *Identity, st *sql.AlterRole) error {
	return a.change(ctx, func(d *acl.Doc) error {
		name, err := roleName(d, id, st.Role, false)
		if err != nil {
			return err
		}
		r, _ := d.Role(name)
		if strings.HasPrefix(name, "pg_") {
			return pgerror.Newf(pgerror.CodeReservedName, "cannot alter reserved role \"%s\"", name)
		}
		if st.NewName != "" {
			return pgerror.New(pgerror.CodeFeatureNotSupported, "ALTER ROLE ... RENAME TO is not supported")
		}
		changed := *r
		if err := a.applyOptions(&changed, &st.Options); err != nil {
			return err
		}
		if !id.super(d) {
			if err := d.CheckAlterRole(id.Current, name, changesOf(&st.Options)); err != nil {
				return err
			}
		}
		*r = changed
		return nil
	})
}

func changesOf(o *sql.RoleOptions) acl.RoleChanges {
	return acl.RoleChanges{
		Superuser: o.Superuser, CreateRole: o.CreateRole, CreateDB: o.CreateDB,
		Inherit: o.Inherit, Login: o.Login, Replication: o.Replication, BypassRLS: o.BypassRLS,
		ConnLimit: o.ConnLimit != nil, Password: o.Password != nil || o.PasswordNull,
		ValidUntil: o.ValidUntil != nil || o.ValidUntilInfinity,
	}
}

func (a *Authority) dropRoles(ctx context.Context, id *Identity, st *sql.DropRole, out Output) error {
	return a.change(ctx, func(d *acl.Doc) error {
		for _, name := range st.Names {
			if _, ok := d.Role(name); !ok {
				if st.IfExists {
					out.Notice(pgerror.CodeSuccessfulCompletion, fmt.Sprintf("role \"%s\" does not exist, skipping", name))
					continue
				}
				return roleMissing(name)
			}
			switch {
			case strings.HasPrefix(name, "pg_"):
				return pgerror.Newf(pgerror.CodeReservedName, "cannot drop role %s because it is required by the database system", name)
			case name == id.Current:
				return pgerror.New(pgerror.CodeObjectInUse, "current user cannot be dropped")
			case name == id.Session:
				return pgerror.New(pgerror.CodeObjectInUse, "session user cannot be dropped")
			}
			if !id.super(d) {
				if err := d.CheckDropRole(id.Current, name); err != nil {
					return err
				}
			}
			// The topics that depend on the role, then what the role
			// document holds (acl's DETAIL lines, in PostgreSQL's words).
			deps := a.dependents(name)
			var ae *acl.Error
			if err := d.DropRole(name); errors.As(err, &ae) && ae.Code == pgerror.CodeDependentObjects && ae.Detail != "" {
				deps = append(deps, strings.Split(ae.Detail, "\n")...)
			} else if err != nil {
				return err
			}
			if len(deps) > 0 {
				return pgerror.Newf(pgerror.CodeDependentObjects, "role \"%s\" cannot be dropped because some objects depend on it", name).
					WithDetail(strings.Join(deps, "\n"))
			}
		}
		return nil
	})
}

// dependents are the topics that name role (PostgreSQL's DETAIL lines of
// 2BP01): those it owns, and grants to or by it on topics and consumers.
func (a *Authority) dependents(role string) []string {
	var deps []string
	for _, ti := range a.store.Topics() {
		cfg := &ti.Config
		if cfg.Owner == role {
			deps = append(deps, "owner of topic "+cfg.Name)
		}
		mentioned := acl.Mentions(cfg.ACL, role)
		for _, c := range cfg.ColumnACLs {
			mentioned = mentioned || acl.Mentions(c.ACL, role)
		}
		if mentioned {
			deps = append(deps, "privileges for topic "+cfg.Name)
		}
		for _, c := range cfg.Consumers {
			if acl.Mentions(c.ACL, role) {
				deps = append(deps, "privileges for consumer "+cfg.Name+"."+c.Name)
			}
		}
	}
	return deps
}

func (a *Authority) grantRole(ctx context.Context, id *Identity, st *sql.GrantRole, out Output) error {
	return a.change(ctx, func(d *acl.Doc) error {
		grantor := id.actor(d)
		if st.GrantedBy != nil {
			g, err := roleName(d, id, *st.GrantedBy, false)
			if err != nil {
				return err
			}
			grantor = g
		}
		for _, role := range st.Roles {
			if _, ok := d.Role(role); !ok {
				return roleMissing(role)
			}
			if !id.super(d) {
				if err := d.CheckGrantRole(id.Current, role); err != nil {
					return err
				}
			}
			for _, m := range st.Members {
				member, err := roleName(d, id, m, false)
				if err != nil {
					return err
				}
				if st.Revoke {
					revoked, err := d.RevokeRole(role, member, grantor, st.Admin != nil)
					if err != nil {
						return err
					}
					if !revoked {
						out.Warning(pgerror.CodeWarning, fmt.Sprintf("role \"%s\" has not been granted membership in role \"%s\" by role \"%s\"", member, role, grantor))
					}
					continue
				}
				mr, _ := d.Role(member)
				admin, inherit, set := false, mr.Inherit, true
				if st.Admin != nil {
					admin = *st.Admin
				}
				if st.Inherit != nil {
					inherit = *st.Inherit
				}
				if st.Set != nil {
					set = *st.Set
				}
				if err := d.GrantRole(role, member, grantor, admin, inherit, set); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
