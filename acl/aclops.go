package acl

import "slices"

// memberFunc answers has_privs_of_role(role, of) for the access-list
// algorithms; nil means only a role itself.
type memberFunc func(role, of string) bool

// aclEnv is what PostgreSQL's aclupdate and aclmask know beyond the list:
// the object's owner and the role memberships. The pure functions use an
// env with no owner and no memberships.
type aclEnv struct {
	owner   string // "" unknown
	privsOf memberFunc
}

func (e aclEnv) hasPrivsOf(role, of string) bool {
	if role == of {
		return true
	}
	return e.privsOf != nil && e.privsOf(role, of)
}

// isOwner reports whether role acts as the object's owner.
func (e aclEnv) isOwner(role string) bool {
	return e.owner != "" && role != "" && e.hasPrivsOf(role, e.owner)
}

// Default returns PostgreSQL's acldefault for an object of owner whose
// privileges are all: the owner's entry, granted by itself, without grant
// options (which the owner holds implicitly). It is what a NULL relacl
// means, and what the first GRANT starts from.
func Default(owner string, all Priv) []Item {
	return []Item{{Grantee: owner, Grantor: owner, Privs: uint32(all)}}
}

// Effective returns list, or Default(owner, all) when list is nil (a NULL
// relacl). An empty non-nil list is an ACL with no entries.
func Effective(list []Item, owner string, all Priv) []Item {
	if list == nil {
		return Default(owner, all)
	}
	return list
}

// Grant adds privs (and, with grantOption, their grant options) for
// grantee from grantor, merging with the entry of the same (grantee,
// grantor) pair or appending a new entry at the end, as PostgreSQL's
// aclupdate does. It returns a new slice and leaves list alone. Grant
// checks nothing: select the grantor with (*Doc).BestGrantor and check
// cycles with (*Doc).GrantACL, which the executor should use.
func Grant(list []Item, grantee, grantor string, privs Priv, grantOption bool) []Item {
	mod := Item{Grantee: grantee, Grantor: grantor, Privs: uint32(privs)}
	if grantOption {
		mod.GrantOptions = uint32(privs)
	}
	out, _ := aclAdd(list, mod)
	return out
}

// aclAdd is aclupdate's ACL_MODECHG_ADD without the circularity check.
func aclAdd(list []Item, mod Item) ([]Item, int) {
	out := slices.Clone(list)
	for i := range out {
		if out[i].Grantee == mod.Grantee && out[i].Grantor == mod.Grantor {
			out[i].Privs |= mod.Privs
			out[i].GrantOptions |= mod.GrantOptions
			return out, i
		}
	}
	if mod.Privs == 0 {
		return out, -1
	}
	return append(out, mod), len(out)
}

// Revoke removes privs (or, with grantOptionOnly, only their grant
// options) that grantor gave grantee, as PostgreSQL's REVOKE does through
// aclupdate. When grant options go, what grantee granted onward with them
// goes too with cascade (PostgreSQL's recursive_revoke), and without
// cascade such dependent grants make it return the list unchanged and
// ErrDependentPrivileges. revoked is what was actually removed from the
// (grantee, grantor) entry: nothing means PostgreSQL's warning "no
// privileges could be revoked", less than privs "not all privileges could
// be revoked".
//
// Revoke knows no owner and no role memberships: whether grantee still
// holds a grant option through another grantor counts only grantee's own
// entries. (*Doc).RevokeACL is the same with both, as PostgreSQL decides.
func Revoke(list []Item, grantee, grantor string, privs Priv, grantOptionOnly, cascade bool) (out []Item, revoked Priv, err error) {
	return aclEnv{}.revoke(list, grantee, grantor, privs, grantOptionOnly, cascade)
}

func (e aclEnv) revoke(list []Item, grantee, grantor string, privs Priv, grantOptionOnly, cascade bool) ([]Item, Priv, error) {
	mod := Item{Grantee: grantee, Grantor: grantor, Privs: uint32(privs), GrantOptions: uint32(privs)}
	if grantOptionOnly {
		mod.Privs = 0
	}
	var revoked Priv
	for _, it := range list {
		if it.Grantee == grantee && it.Grantor == grantor {
			revoked = Priv(it.Privs) & privs
			if grantOptionOnly {
				revoked = Priv(it.GrantOptions) & privs
			}
		}
	}
	out, err := e.aclDel(list, mod, cascade)
	if err != nil {
		return list, 0, err
	}
	return out, revoked, nil
}

// aclDel is aclupdate's ACL_MODECHG_DEL: it clears mod's privileges and
// grant options from the matching entry, drops the entry when nothing is
// left, and revokes recursively what depended on the grant options lost.
func (e aclEnv) aclDel(list []Item, mod Item, cascade bool) ([]Item, error) {
	i := slices.IndexFunc(list, func(it Item) bool { return it.Grantee == mod.Grantee && it.Grantor == mod.Grantor })
	if i < 0 {
		return slices.Clone(list), nil
	}
	out := slices.Clone(list)
	oldOpts := Priv(out[i].GrantOptions)
	out[i].Privs &^= mod.Privs
	out[i].GrantOptions &^= mod.GrantOptions
	newOpts := Priv(out[i].GrantOptions)
	if out[i].Privs == 0 && out[i].GrantOptions == 0 {
		out = slices.Delete(out, i, i+1)
	}
	if lost := oldOpts &^ newOpts; lost != 0 && mod.Grantee != "" {
		return e.recursiveRevoke(out, mod.Grantee, lost, cascade)
	}
	return out, nil
}

// recursiveRevoke is PostgreSQL's recursive_revoke: grantee lost the grant
// options revoke; unless it still holds them another way, every entry it
// granted with them loses those privileges (and their grant options), in
// turn recursively.
func (e aclEnv) recursiveRevoke(list []Item, grantee string, revoke Priv, cascade bool) ([]Item, error) {
	if e.owner != "" && grantee == e.owner {
		return list, nil
	}
	revoke &^= e.grantOptions(list, grantee, revoke)
	if revoke == 0 {
		return list, nil
	}
	for {
		i := slices.IndexFunc(list, func(it Item) bool { return it.Grantor == grantee && Priv(it.Privs)&revoke != 0 })
		if i < 0 {
			return list, nil
		}
		if !cascade {
			return nil, DependentPrivilegesError()
		}
		mod := Item{Grantee: list[i].Grantee, Grantor: grantee, Privs: uint32(revoke), GrantOptions: uint32(revoke)}
		var err error
		if list, err = e.aclDel(list, mod, cascade); err != nil {
			return nil, err
		}
	}
}

// privs is aclmask for privileges: what role holds through entries for
// PUBLIC, for itself and for the roles whose privileges it has.
func (e aclEnv) privs(list []Item, role string, mask Priv) Priv {
	var result Priv
	for _, it := range list {
		if it.Grantee == "" || it.Grantee == role {
			result |= Priv(it.Privs) & mask
		}
	}
	for _, it := range list {
		p := Priv(it.Privs) & mask
		if it.Grantee == "" || it.Grantee == role || result&p == p {
			continue
		}
		if e.hasPrivsOf(role, it.Grantee) {
			result |= p
		}
	}
	return result
}

// grantOptions is aclmask for grant options: all of mask for the owner
// and the roles with its privileges, else what the entries give.
func (e aclEnv) grantOptions(list []Item, role string, mask Priv) Priv {
	if e.isOwner(role) {
		return mask
	}
	var result Priv
	for _, it := range list {
		if it.Grantee == "" || e.hasPrivsOf(role, it.Grantee) {
			result |= Priv(it.GrantOptions) & mask
		}
	}
	return result
}

// grantOptionsDirect is aclmask_direct for grant options: role's own
// entries only (and all of mask when role is the owner itself).
func (e aclEnv) grantOptionsDirect(list []Item, role string, mask Priv) Priv {
	if e.owner != "" && role == e.owner {
		return mask
	}
	var result Priv
	for _, it := range list {
		if it.Grantee == role {
			result |= Priv(it.GrantOptions) & mask
		}
	}
	return result
}

// checkCircularity is PostgreSQL's check_circularity: granting grant
// options from grantor to grantee must not make grantor's own grant
// options depend on grantee's.
func (e aclEnv) checkCircularity(list []Item, mod Item) error {
	if mod.GrantOptions == 0 || (e.owner != "" && mod.Grantor == e.owner) {
		return nil
	}
	work := slices.Clone(list)
	for {
		i := slices.IndexFunc(work, func(it Item) bool { return it.Grantee == mod.Grantee && it.GrantOptions != 0 })
		if i < 0 {
			break
		}
		var err error
		if work, err = e.aclDel(work, work[i], true); err != nil {
			return err
		}
	}
	own := e.grantOptions(work, mod.Grantor, Priv(mod.GrantOptions))
	if Priv(mod.GrantOptions)&^own != 0 {
		return &Error{Code: CodeInvalidGrantOperation, Message: "grant options cannot be granted back to your own grantor"}
	}
	return nil
}

// ReplaceRole is PostgreSQL's aclnewowner, for a change of owner (ALTER
// ... OWNER TO, REASSIGN OWNED, and ALTER ROLE ... RENAME): every mention
// of from, as grantee or grantor, becomes to, and entries that end up with
// the same (grantee, grantor) pair merge into the first of them.
func ReplaceRole(list []Item, from, to string) []Item {
	if list == nil {
		return nil
	}
	out := slices.Clone(list)
	for i := range out {
		if out[i].Grantee == from && from != "" {
			out[i].Grantee = to
		}
		if out[i].Grantor == from {
			out[i].Grantor = to
		}
	}
	merged := out[:0]
	for _, it := range out {
		j := slices.IndexFunc(merged, func(m Item) bool { return m.Grantee == it.Grantee && m.Grantor == it.Grantor })
		if j >= 0 {
			merged[j].Privs |= it.Privs
			merged[j].GrantOptions |= it.GrantOptions
			continue
		}
		merged = append(merged, it)
	}
	return merged
}

// RemoveRole is DROP OWNED's effect on an access list of an object role
// does not own: role's own entries go, and so do those it granted, with
// what their grantees granted onward from them (recursively, as a REVOKE
// ... CASCADE does). For an object role owns, DROP OWNED drops the object.
func RemoveRole(list []Item, role string) []Item {
	if list == nil || role == "" {
		return list
	}
	out := make([]Item, 0, len(list))
	var lost []Item
	for _, it := range list {
		switch {
		case it.Grantee == role:
		case it.Grantor == role:
			lost = append(lost, it)
		default:
			out = append(out, it)
		}
	}
	for _, it := range lost {
		// The grantee lost what role gave it, grant options included.
		if opts := Priv(it.GrantOptions); opts != 0 {
			out, _ = aclEnv{}.recursiveRevoke(out, it.Grantee, opts, true)
		}
	}
	return out
}

// Mentions reports whether role is a grantee or a grantor in list, which
// makes DROP ROLE refuse ("privileges for table t").
func Mentions(list []Item, role string) bool {
	return slices.ContainsFunc(list, func(it Item) bool {
		return role != "" && (it.Grantee == role || it.Grantor == role)
	})
}
