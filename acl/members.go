package acl

import (
	"fmt"
	"slices"
)

// recurse is which memberships a walk of the role graph follows, as
// PostgreSQL's RoleRecurseType.
type recurse int

const (
	recurseMembers recurse = iota // every membership (is_member_of_role)
	recursePrivs                  // memberships with INHERIT (has_privs_of_role)
	recurseSet                    // memberships with SET (member_can_set_role)
)

// edges returns the memberships whose Member is role: the stored ones,
// those among predefined roles, and the database owner's implicit
// membership in pg_database_owner (the bootstrap superuser owns the
// database).
func (d *Doc) edges(role string) []Membership {
	var out []Membership
	for _, m := range d.Members {
		if m.Member == role {
			out = append(out, m)
		}
	}
	for _, m := range predefinedMembers {
		if m.Member == role {
			m.Grantor = d.Bootstrap()
			out = append(out, m)
		}
	}
	if role != "" && role == d.Bootstrap() {
		out = append(out, Membership{Role: "pg_database_owner", Member: role, Inherit: true, Set: true})
	}
	return out
}

// rolesOf is PostgreSQL's roles_is_member_of: role and every role it
// reaches through memberships of kind typ, breadth first. It also returns
// the first role of that walk holding ADMIN OPTION on adminOf directly
// ("" when none or adminOf is "").
func (d *Doc) rolesOf(role string, typ recurse, adminOf string) ([]string, string) {
	list := []string{role}
	admin := ""
	for i := 0; i < len(list); i++ {
		for _, m := range d.edges(list[i]) {
			if adminOf != "" && m.Role == adminOf && m.Admin && admin == "" {
				admin = list[i]
			}
			if typ == recursePrivs && !m.Inherit || typ == recurseSet && !m.Set {
				continue
			}
			if !slices.Contains(list, m.Role) {
				list = append(list, m.Role)
			}
		}
	}
	return list, admin
}

// Superuser reports whether role exists and has the SUPERUSER attribute
// itself (PostgreSQL's superuser_arg: never through a membership).
func (d *Doc) Superuser(role string) bool {
	r, ok := d.Role(role)
	return ok && r.Superuser
}

// HasPrivsOf is PostgreSQL's has_privs_of_role: role is of, or a
// superuser, or reaches of through memberships with INHERIT.
func (d *Doc) HasPrivsOf(role, of string) bool {
	if role == of || d.Superuser(role) {
		return true
	}
	list, _ := d.rolesOf(role, recursePrivs, "")
	return slices.Contains(list, of)
}

// IsMemberOf is PostgreSQL's is_member_of_role: a superuser, or any path
// of memberships from role to of (role is a member of itself).
func (d *Doc) IsMemberOf(role, of string) bool {
	if role == of || d.Superuser(role) {
		return true
	}
	return d.isMemberNoSuper(role, of)
}

// isMemberNoSuper is is_member_of_role_nosuper.
func (d *Doc) isMemberNoSuper(role, of string) bool {
	list, _ := d.rolesOf(role, recurseMembers, "")
	return slices.Contains(list, of)
}

// CanSetRole is PostgreSQL's member_can_set_role (SET ROLE, SET SESSION
// AUTHORIZATION aside): a superuser, role itself, or a chain of
// memberships with SET.
func (d *Doc) CanSetRole(role, to string) bool {
	if role == to || d.Superuser(role) {
		return true
	}
	list, _ := d.rolesOf(role, recurseSet, "")
	return slices.Contains(list, to)
}

// HasAdmin is PostgreSQL 16's is_admin_of_role: a superuser, or role or a
// role whose privileges it inherits holds ADMIN OPTION on of. By policy
// no role has ADMIN OPTION on itself.
func (d *Doc) HasAdmin(role, of string) bool {
	if d.Superuser(role) {
		return true
	}
	return d.bestAdmin(role, of) != ""
}

// bestAdmin is select_best_admin without the superuser case: the role,
// nearest to role through inherited memberships, holding ADMIN OPTION on
// of.
func (d *Doc) bestAdmin(role, of string) string {
	if role == of {
		return ""
	}
	_, admin := d.rolesOf(role, recursePrivs, of)
	return admin
}

// RoleGrantor is PostgreSQL's check_role_grantor: the grantor a GRANT
// (isGrant) or REVOKE of membership in role by actor records. explicit is
// GRANTED BY's role ("" when not given): actor must have its privileges,
// and for a grant it must hold ADMIN OPTION on role itself (or be the
// bootstrap superuser). Without it a superuser grants as the bootstrap
// superuser, and anyone else as the nearest role whose privileges it has
// with ADMIN OPTION. Call it after CheckGrantRole.
func (d *Doc) RoleGrantor(actor, role, explicit string, isGrant bool) (string, error) {
	if explicit == "" {
		if d.Superuser(actor) {
			return d.Bootstrap(), nil
		}
		if g := d.bestAdmin(actor, role); g != "" {
			return g, nil
		}
		return "", denied(fmt.Sprintf("permission denied to grant role \"%s\"", role),
			"Only roles with the %s option on role \"%s\" may grant this role.", "ADMIN", role)
	}
	if !d.HasPrivsOf(actor, explicit) {
		if isGrant {
			return "", denied(fmt.Sprintf("permission denied to grant privileges as role \"%s\"", explicit),
				"Only roles with privileges of role \"%s\" may grant privileges as this role.", explicit)
		}
		return "", denied(fmt.Sprintf("permission denied to revoke privileges granted by role \"%s\"", explicit),
			"Only roles with privileges of role \"%s\" may revoke privileges granted by this role.", explicit)
	}
	if isGrant && explicit != d.Bootstrap() && (d.Superuser(explicit) || d.bestAdmin(explicit, role) != explicit) {
		return "", denied(fmt.Sprintf("permission denied to grant privileges as role \"%s\"", explicit),
			"The grantor must have the %s option on role \"%s\".", "ADMIN", role)
	}
	return explicit, nil
}
