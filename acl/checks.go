package acl

import "fmt"

// The attributes' names in PostgreSQL 16's messages.
const (
	attrSuperuser   = "SUPERUSER"
	attrCreateRole  = "CREATEROLE"
	attrCreateDB    = "CREATEDB"
	attrReplication = "REPLICATION"
	attrBypassRLS   = "BYPASSRLS"
	optAdmin        = "ADMIN"
)

// role returns the stored or predefined role, or a zero Role.
func (d *Doc) roleOrZero(name string) Role {
	if r, ok := d.Role(name); ok {
		return *r
	}
	return Role{}
}

// CheckCreateRole is PostgreSQL 16's permission check of CREATE ROLE r by
// actor: "public" and "none" are reserved (42939); a non-superuser needs
// CREATEROLE, and may give CREATEDB, REPLICATION and BYPASSRLS only when it
// has them itself, SUPERUSER never (42501 "permission denied to create
// role"); then names starting "pg_" are reserved.
func (d *Doc) CheckCreateRole(actor string, r Role) error {
	if r.Name == "public" || r.Name == "none" {
		return ErrReservedName(r.Name)
	}
	a := d.roleOrZero(actor)
	if !a.Superuser {
		const msg = "permission denied to create role"
		if !a.CreateRole {
			return denied(msg, "Only roles with the %s attribute may create roles.", attrCreateRole)
		}
		const with = "Only roles with the %s attribute may create roles with the %s attribute."
		switch {
		case r.Superuser:
			return denied(msg, with, attrSuperuser, attrSuperuser)
		case r.CreateDB && !a.CreateDB:
			return denied(msg, with, attrCreateDB, attrCreateDB)
		case r.Replication && !a.Replication:
			return denied(msg, with, attrReplication, attrReplication)
		case r.BypassRLS && !a.BypassRLS:
			return denied(msg, with, attrBypassRLS, attrBypassRLS)
		}
	}
	if IsReservedName(r.Name) {
		return ErrReservedName(r.Name)
	}
	if _, ok := d.Role(r.Name); ok {
		return ErrRoleExists(r.Name)
	}
	return nil
}

// RoleChanges is what an ALTER ROLE sets: a non-nil attribute, and the
// options marked given (PASSWORD, even NULL; CONNECTION LIMIT; VALID
// UNTIL; Members: ALTER GROUP ... ADD/DROP USER).
type RoleChanges struct {
	Superuser, CreateRole, CreateDB, Inherit, Login, Replication, BypassRLS *bool
	Password, ConnLimit, ValidUntil, Members                                bool
}

// Apply sets the given attributes on r (not the password, ConnLimit or
// ValidUntil, whose values RoleChanges does not carry).
func (c RoleChanges) Apply(r *Role) {
	setIf(&r.Superuser, c.Superuser)
	setIf(&r.CreateRole, c.CreateRole)
	setIf(&r.CreateDB, c.CreateDB)
	setIf(&r.Inherit, c.Inherit)
	setIf(&r.Login, c.Login)
	setIf(&r.Replication, c.Replication)
	setIf(&r.BypassRLS, c.BypassRLS)
}

// CheckAlterRole is PostgreSQL 16's check of ALTER ROLE target by actor:
// reserved (predefined) roles cannot be altered; only a superuser alters a
// superuser or the SUPERUSER attribute; the other attributes need
// CREATEROLE and ADMIN OPTION on target, and CREATEDB, REPLICATION and
// BYPASSRLS also that actor has them; anyone may change their own
// password; members need ADMIN OPTION; the bootstrap superuser keeps
// SUPERUSER.
func (d *Doc) CheckAlterRole(actor, target string, c RoleChanges) error {
	if IsReservedName(target) {
		return &Error{Code: CodeReservedName, Message: fmt.Sprintf("role name \"%s\" is reserved", target), Detail: "Cannot alter reserved roles."}
	}
	t, ok := d.Role(target)
	if !ok {
		return ErrRoleNotFound(target)
	}
	const msg = "permission denied to alter role"
	su := d.Superuser(actor)
	if !su && t.Superuser {
		return denied(msg, "Only roles with the %s attribute may alter roles with the %s attribute.", attrSuperuser, attrSuperuser)
	}
	if !su && c.Superuser != nil {
		return denied(msg, "Only roles with the %s attribute may change the %s attribute.", attrSuperuser, attrSuperuser)
	}
	a := d.roleOrZero(actor)
	if !su && (!a.CreateRole || !d.HasAdmin(actor, target)) {
		if c.Inherit != nil || c.CreateRole != nil || c.CreateDB != nil || c.Login != nil || c.ConnLimit ||
			c.ValidUntil || c.Replication != nil || c.BypassRLS != nil {
			return denied(msg, "Only roles with the %s attribute and the %s option on role \"%s\" may alter this role.", attrCreateRole, optAdmin, target)
		}
		if c.Password && target != actor {
			return denied(msg, "To change another role's password, the current user must have the %s attribute and the %s option on the role.", attrCreateRole, optAdmin)
		}
	} else if !su {
		const change = "Only roles with the %s attribute may change the %s attribute."
		switch {
		case c.CreateDB != nil && !a.CreateDB:
			return denied(msg, change, attrCreateDB, attrCreateDB)
		case c.Replication != nil && !a.Replication:
			return denied(msg, change, attrReplication, attrReplication)
		case c.BypassRLS != nil && !a.BypassRLS:
			return denied(msg, change, attrBypassRLS, attrBypassRLS)
		}
	}
	if c.Members && !d.HasAdmin(actor, target) {
		return denied(msg, "Only roles with the %s option on role \"%s\" may add or drop members.", optAdmin, target)
	}
	if c.Superuser != nil && !*c.Superuser && t.OID == BootstrapOID {
		return &Error{Code: CodeFeatureNotSupported, Message: msg, Detail: "The bootstrap superuser must have the SUPERUSER attribute."}
	}
	return nil
}

// CheckRenameRole is PostgreSQL 16's check of ALTER ROLE target RENAME TO
// newName by actor (the session user and the current user cannot be
// renamed: the caller's to check).
func (d *Doc) CheckRenameRole(actor, target, newName string) error {
	t, ok := d.Role(target)
	if !ok {
		return ErrRoleNotFound(target)
	}
	if IsReservedName(target) {
		return ErrReservedName(target)
	}
	if IsReservedName(newName) {
		return ErrReservedName(newName)
	}
	if _, ok := d.Role(newName); ok {
		return ErrRoleExists(newName)
	}
	const msg = "permission denied to rename role"
	if t.Superuser {
		if !d.Superuser(actor) {
			return denied(msg, "Only roles with the %s attribute may rename roles with the %s attribute.", attrSuperuser, attrSuperuser)
		}
		return nil
	}
	if !d.roleOrZero(actor).CreateRole && !d.Superuser(actor) || !d.HasAdmin(actor, target) {
		return denied(msg, "Only roles with the %s attribute and the %s option on role \"%s\" may rename this role.", attrCreateRole, optAdmin, target)
	}
	return nil
}

// CheckDropRole is PostgreSQL 16's check of DROP ROLE target by actor:
// CREATEROLE, the role exists, is not the current user (55006), is not a
// superuser unless actor is one, and actor has ADMIN OPTION on it.
// Dependencies are DropRole's.
func (d *Doc) CheckDropRole(actor, target string) error {
	const msg = "permission denied to drop role"
	if !d.roleOrZero(actor).CreateRole && !d.Superuser(actor) {
		return denied(msg, "Only roles with the %s attribute and the %s option on the target roles may drop roles.", attrCreateRole, optAdmin)
	}
	t, ok := d.Role(target)
	if !ok {
		return ErrRoleNotFound(target)
	}
	if target == actor {
		return &Error{Code: CodeObjectInUse, Message: "current user cannot be dropped"}
	}
	if t.Superuser && !d.Superuser(actor) {
		return denied(msg, "Only roles with the %s attribute may drop roles with the %s attribute.", attrSuperuser, attrSuperuser)
	}
	if !d.HasAdmin(actor, target) {
		return denied(msg, "Only roles with the %s attribute and the %s option on role \"%s\" may drop this role.", attrCreateRole, optAdmin, target)
	}
	return nil
}

// CheckGrantRole is PostgreSQL 16's check_role_membership_authorization
// for GRANT role TO ... by actor: pg_database_owner has no explicit
// members (0A000); only a superuser grants a superuser role; anyone else
// needs ADMIN OPTION on role.
func (d *Doc) CheckGrantRole(actor, role string) error {
	return d.checkMembershipAuth(actor, role, true)
}

// CheckRevokeRole is CheckGrantRole for REVOKE role FROM ....
func (d *Doc) CheckRevokeRole(actor, role string) error {
	return d.checkMembershipAuth(actor, role, false)
}

func (d *Doc) checkMembershipAuth(actor, role string, isGrant bool) error {
	if _, ok := d.Role(role); !ok {
		return ErrRoleNotFound(role)
	}
	if isGrant && role == "pg_database_owner" {
		return &Error{Code: CodeFeatureNotSupported, Message: fmt.Sprintf("role \"%s\" cannot have explicit members", role)}
	}
	verb := "revoke"
	if isGrant {
		verb = "grant"
	}
	msg := fmt.Sprintf("permission denied to %s role \"%s\"", verb, role)
	if d.Superuser(role) {
		if !d.Superuser(actor) {
			return denied(msg, "Only roles with the %s attribute may %s roles with the %s attribute.", attrSuperuser, verb, attrSuperuser)
		}
		return nil
	}
	if !d.HasAdmin(actor, role) {
		return denied(msg, "Only roles with the %s option on role \"%s\" may %s this role.", optAdmin, role, verb)
	}
	return nil
}
