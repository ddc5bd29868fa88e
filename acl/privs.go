package acl

import "slices"

// env is the access-list environment of an object owned by owner.
func (d *Doc) env(owner string) aclEnv {
	return aclEnv{owner: owner, privsOf: d.HasPrivsOf}
}

// Privs returns the privileges of kind all that role holds on an object
// of owner whose ACL is list, as PostgreSQL's aclmask: a superuser holds
// all; everyone else what the entries for PUBLIC, for role and for the
// roles whose privileges role has (INHERIT) give. A nil list is the
// default ACL (the owner's entry with all): as in PostgreSQL the owner
// holds what its own entry says, and can revoke privileges from itself
// (an empty non-nil list gives nobody anything). Topics add the
// predefined roles' privileges: see (*Doc).TopicPrivs.
func (d *Doc) Privs(role, owner string, list []Item, all Priv) Priv {
	if d.Superuser(role) {
		return all
	}
	return d.env(owner).privs(Effective(list, owner, all), role, all)
}

// TopicPrivs is Privs for a topic (all is TopicPrivs) with what the
// predefined roles give on every table: SELECT to pg_read_all_data,
// INSERT, UPDATE and DELETE to pg_write_all_data (and to the roles with
// their privileges). A consumer's USAGE has no such role, since reading
// as a consumer moves its positions.
func (d *Doc) TopicPrivs(role, owner string, list []Item) Priv {
	p := d.Privs(role, owner, list, TopicPrivs)
	if p&Select == 0 && d.HasPrivsOf(role, "pg_read_all_data") {
		p |= Select
	}
	if p&(Insert|Update|Delete) != Insert|Update|Delete && d.HasPrivsOf(role, "pg_write_all_data") {
		p |= Insert | Update | Delete
	}
	return p
}

// GrantOptions returns which privileges of kind all role may grant on an
// object of owner whose ACL is list: all of them for a superuser, the
// owner and the roles with the owner's privileges; else the grant options
// of the entries for role and the roles whose privileges it has.
func (d *Doc) GrantOptions(role, owner string, list []Item, all Priv) Priv {
	if d.Superuser(role) {
		return all
	}
	return d.env(owner).grantOptions(Effective(list, owner, all), role, all)
}

// SchemaPrivileges returns role's privileges on schema public (USAGE,
// CREATE): the schema's ACL and owner, and USAGE for the roles with the
// privileges of pg_read_all_data or pg_write_all_data, as PostgreSQL.
func (d *Doc) SchemaPrivileges(role string) Priv {
	p := d.Privs(role, d.SchemaOwnerName(), d.SchemaACL, SchemaPrivs)
	if p&Usage == 0 && (d.HasPrivsOf(role, "pg_read_all_data") || d.HasPrivsOf(role, "pg_write_all_data")) {
		p |= Usage
	}
	return p
}

// SchemaOwnerName returns the owner of schema public: SchemaOwner, or the
// bootstrap superuser when it is "".
func (d *Doc) SchemaOwnerName() string {
	if d.SchemaOwner == "" {
		return d.Bootstrap()
	}
	return d.SchemaOwner
}

// BestGrantor is PostgreSQL's select_best_grantor: the grantor a GRANT or
// REVOKE by role records on an object of owner with ACL list, and which
// of privs it may grant. The owner, a superuser or a role with the
// owner's privileges grants as the owner, with every option; anyone else
// as the first role (role itself, then those whose privileges it
// inherits, nearest first) holding all of privs' grant options directly,
// else the one holding most of them, else role with none. Grant what
// options holds: nothing is PostgreSQL's WARNING "no privileges were
// granted for ..." (for REVOKE: "no privileges could be revoked for"),
// part of privs "not all privileges were granted for ...".
func (d *Doc) BestGrantor(role, owner string, list []Item, privs, all Priv) (grantor string, options Priv) {
	if role == owner || d.Superuser(role) {
		return owner, privs
	}
	list = Effective(list, owner, all)
	e := d.env(owner)
	roles, _ := d.rolesOf(role, recursePrivs, "")
	grantor, nrights := role, 0
	for _, other := range roles {
		got := e.grantOptionsDirect(list, other, privs)
		if got == privs {
			return other, got
		}
		if n := popcount(got); n > nrights {
			grantor, options, nrights = other, got, n
		}
	}
	return grantor, options
}

func popcount(p Priv) int {
	n := 0
	for ; p != 0; p &= p - 1 {
		n++
	}
	return n
}

// GrantACL is a GRANT on an object of owner with ACL list (nil: the
// default ACL), as PostgreSQL's merge_acl_with_grant: grant options go
// only to roles (0LP01 "grant options can only be granted to roles"), and
// not back to the grantor's own grantor (0LP01 "grant options cannot be
// granted back to your own grantor"); then as Grant.
func (d *Doc) GrantACL(list []Item, owner, grantee, grantor string, privs Priv, grantOption bool, all Priv) ([]Item, error) {
	list = Effective(list, owner, all)
	if grantOption && grantee == "" {
		return nil, &Error{Code: CodeInvalidGrantOperation, Message: "grant options can only be granted to roles"}
	}
	mod := Item{Grantee: grantee, Grantor: grantor, Privs: uint32(privs)}
	if grantOption {
		mod.GrantOptions = uint32(privs)
	}
	if err := d.env(owner).checkCircularity(list, mod); err != nil {
		return nil, err
	}
	out, _ := aclAdd(list, mod)
	return out, nil
}

// RevokeACL is Revoke on an object of owner with ACL list (nil: the
// default ACL), knowing the owner and the role memberships as PostgreSQL
// does: the owner never loses its grant options, and a grantee keeps a
// grant option it also holds through a role whose privileges it has.
func (d *Doc) RevokeACL(list []Item, owner, grantee, grantor string, privs Priv, grantOptionOnly, cascade bool, all Priv) (out []Item, revoked Priv, err error) {
	return d.env(owner).revoke(Effective(list, owner, all), grantee, grantor, privs, grantOptionOnly, cascade)
}

// kindAll returns what ALL means for a DefaultACL kind.
func kindAll(kind byte) Priv {
	if kind == KindConsumer {
		return ConsumerPrivs
	}
	return TopicPrivs
}

// DefaultsFor returns the ACL a new topic (kind 'r') or consumer ('c')
// created by owner starts with: owner's ALTER DEFAULT PRIVILEGES entry,
// or nil (the default ACL: the owner only).
func (d *Doc) DefaultsFor(owner string, kind byte) []Item {
	for _, def := range d.Defaults {
		if def.Role == owner && def.Kind == kind {
			return slices.Clone(def.ACL)
		}
	}
	return nil
}

// AlterDefaults is ALTER DEFAULT PRIVILEGES FOR ROLE role GRANT (grant)
// or REVOKE privs ON TABLES (kind 'r') or SEQUENCES (kind 'c') TO or FROM
// grantee, as PostgreSQL's SetDefaultACL: it changes role's entry (the
// default ACL when none) with role as grantor and owner, and removes the
// entry when it becomes equal to the default ACL. A REVOKE that would
// need CASCADE changes nothing.
func (d *Doc) AlterDefaults(role string, kind byte, grant bool, grantee string, privs Priv, grantOption bool) {
	all := kindAll(kind)
	i := slices.IndexFunc(d.Defaults, func(def DefaultACL) bool { return def.Role == role && def.Kind == kind })
	cur := Default(role, all)
	if i >= 0 {
		cur = d.Defaults[i].ACL
	}
	var next []Item
	if grant {
		mod := Item{Grantee: grantee, Grantor: role, Privs: uint32(privs)}
		if grantOption && grantee != "" {
			mod.GrantOptions = uint32(privs)
		}
		next, _ = aclAdd(cur, mod)
	} else {
		var err error
		if next, _, err = d.env(role).revoke(cur, grantee, role, privs, grantOption, false); err != nil {
			return
		}
	}
	switch {
	case sameACL(next, Default(role, all)):
		if i >= 0 {
			d.Defaults = slices.Delete(d.Defaults, i, i+1)
		}
	case i >= 0:
		d.Defaults[i].ACL = next
	default:
		d.Defaults = append(d.Defaults, DefaultACL{Role: role, Kind: kind, ACL: next})
	}
}

// sameACL compares two ACLs as sets of entries (aclitemsort, aclequal).
func sameACL(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	for _, it := range a {
		if !slices.Contains(b, it) {
			return false
		}
	}
	return true
}

// DropOwned is DROP OWNED BY role's effect on the Doc: role's default
// privileges go, so do the memberships it granted (PostgreSQL 16), and
// RemoveRole's on the ACLs of schema public and of the other roles'
// default privileges.
func (d *Doc) DropOwned(role string) {
	d.Defaults = slices.DeleteFunc(d.Defaults, func(def DefaultACL) bool { return def.Role == role })
	for i := range d.Defaults {
		d.Defaults[i].ACL = RemoveRole(d.Defaults[i].ACL, role)
	}
	d.SchemaACL = RemoveRole(d.SchemaACL, role)
	d.Members = slices.DeleteFunc(d.Members, func(m Membership) bool { return m.Grantor == role })
}

// ReassignOwned is REASSIGN OWNED BY from TO to's effect on the Doc:
// schema public changes owner when from owns it (its ACL as ReplaceRole).
// Default privileges stay, as in PostgreSQL (DROP OWNED removes them).
func (d *Doc) ReassignOwned(from, to string) {
	if d.SchemaOwnerName() == from {
		d.SchemaACL = ReplaceRole(d.SchemaACL, from, to)
		d.SchemaOwner = to
	}
}
