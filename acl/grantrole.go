package acl

import (
	"fmt"
	"slices"
)

// GrantRoleOptions are a GRANT role's WITH options; nil is not given. On a
// new grant ADMIN defaults to false, SET to true and INHERIT to the
// member's INHERIT attribute; on an existing one (same role, member and
// grantor) only the given options change.
type GrantRoleOptions struct {
	Admin, Inherit, Set *bool
}

// GrantRole grants role to member recorded as granted by grantor, with
// every option given (see GrantRoleWith).
func (d *Doc) GrantRole(role, member, grantor string, admin, inherit, set bool) error {
	_, err := d.GrantRoleWith(role, member, grantor, GrantRoleOptions{Admin: &admin, Inherit: &inherit, Set: &set})
	return err
}

// GrantRoleWith is PostgreSQL 16's AddRoleMems for one member: it refuses
// unknown roles (42704), members for pg_database_owner and
// pg_database_owner as a member (0A000), a membership loop, a role granted
// to itself included (0LP01 role "a" is a member of role "b"), and ADMIN
// OPTION granted back to the grantor's own grantor (0LP01). changed false
// means the same grant existed with the same options: PostgreSQL's NOTICE
// "role "m" has already been granted membership in role "r" by role "g"".
// The grantor is taken as given: resolve it with RoleGrantor.
func (d *Doc) GrantRoleWith(role, member, grantor string, o GrantRoleOptions) (changed bool, err error) {
	mr, err := d.checkMembershipRoles(role, member, grantor)
	if err != nil {
		return false, err
	}
	if role == "pg_database_owner" {
		return false, &Error{Code: CodeFeatureNotSupported, Message: fmt.Sprintf("role \"%s\" cannot have explicit members", role)}
	}
	if member == "pg_database_owner" {
		return false, &Error{Code: CodeFeatureNotSupported, Message: fmt.Sprintf("role \"%s\" cannot be a member of any role", member)}
	}
	if d.isMemberNoSuper(role, member) {
		return false, &Error{Code: CodeInvalidGrantOperation, Message: fmt.Sprintf("role \"%s\" is a member of role \"%s\"", role, member)}
	}
	if o.Admin != nil && *o.Admin && grantor != d.Bootstrap() {
		if err := d.checkAdminCircularity(role, member, grantor); err != nil {
			return false, err
		}
	}
	i := slices.IndexFunc(d.Members, func(m Membership) bool { return m.Role == role && m.Member == member && m.Grantor == grantor })
	if i >= 0 {
		m := &d.Members[i]
		old := *m
		setIf(&m.Admin, o.Admin)
		setIf(&m.Inherit, o.Inherit)
		setIf(&m.Set, o.Set)
		return *m != old, nil
	}
	m := Membership{Role: role, Member: member, Grantor: grantor, Set: true, Inherit: mr.Inherit}
	setIf(&m.Admin, o.Admin)
	setIf(&m.Inherit, o.Inherit)
	setIf(&m.Set, o.Set)
	d.Members = append(d.Members, m)
	return true, nil
}

func setIf(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

// checkMembershipRoles checks that role, member and grantor exist and
// returns member.
func (d *Doc) checkMembershipRoles(role, member, grantor string) (*Role, error) {
	if _, ok := d.Role(role); !ok {
		return nil, ErrRoleNotFound(role)
	}
	mr, ok := d.Role(member)
	if !ok {
		return nil, ErrRoleNotFound(member)
	}
	if _, ok := d.Role(grantor); !ok {
		return nil, ErrRoleNotFound(grantor)
	}
	return mr, nil
}

// checkAdminCircularity refuses to grant ADMIN OPTION on role to member
// when grantor's own ADMIN OPTION depends on member's: with every grant to
// member revoked (cascading), grantor must still hold it directly.
func (d *Doc) checkAdminCircularity(role, member, grantor string) error {
	backErr := &Error{Code: CodeInvalidGrantOperation, Message: "ADMIN option cannot be granted back to your own grantor"}
	if member == d.Bootstrap() {
		return backErr
	}
	p := d.newRevokePlan(role)
	p.memberRevoke(member)
	for k, i := range p.idx {
		m := d.Members[i]
		if p.actions[k] == rrgNoop && m.Member == grantor && m.Admin {
			return nil
		}
	}
	return backErr
}

// RevokeRoleOption is what a REVOKE of a membership takes away.
type RevokeRoleOption int

// What REVOKE ... FROM takes: the membership, or one of its options
// (REVOKE ADMIN|INHERIT|SET OPTION FOR).
const (
	RevokeMembership RevokeRoleOption = iota
	RevokeAdminOption
	RevokeInheritOption
	RevokeSetOption
)

// RevokeRole revokes role from member as granted by grantor, or only the
// ADMIN OPTION with adminOnly, without CASCADE (see RevokeRoleWith).
func (d *Doc) RevokeRole(role, member, grantor string, adminOnly bool) (revoked bool, err error) {
	what := RevokeMembership
	if adminOnly {
		what = RevokeAdminOption
	}
	return d.RevokeRoleWith(role, member, grantor, what, false)
}

// RevokeRoleWith is PostgreSQL 16's DelRoleMems for one member. Taking
// the membership or its ADMIN OPTION takes what member granted with it
// too when member has no other grant with ADMIN OPTION: with cascade
// recursively, without it the Doc is left alone and the error is 2BP01
// "dependent privileges exist" (ErrDependentPrivileges). revoked false
// means there was no such grant: PostgreSQL's WARNING "role "m" has not
// been granted membership in role "r" by role "g"".
func (d *Doc) RevokeRoleWith(role, member, grantor string, what RevokeRoleOption, cascade bool) (revoked bool, err error) {
	if _, err := d.checkMembershipRoles(role, member, grantor); err != nil {
		return false, err
	}
	p := d.newRevokePlan(role)
	found, err := p.singleRevoke(member, grantor, what, cascade)
	if err != nil || !found {
		return false, err
	}
	d.applyRevokePlan(p)
	return true, nil
}

// CreatedBy records what PostgreSQL 16 does after a CREATE ROLE by a
// non-superuser with CREATEROLE: the new role is granted to its creator
// WITH ADMIN OPTION, INHERIT FALSE, SET FALSE, by the bootstrap superuser
// (so the creator cannot revoke it). It does nothing for a superuser actor.
func (d *Doc) CreatedBy(actor, role string) {
	if d.Superuser(actor) {
		return
	}
	t, f := true, false
	_, _ = d.GrantRoleWith(role, actor, d.Bootstrap(), GrantRoleOptions{Admin: &t, Inherit: &f, Set: &f})
}
