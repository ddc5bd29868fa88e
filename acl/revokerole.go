package acl

import "slices"

// rrg is what a REVOKE does to one pg_auth_members row
// (RevokeRoleGrantAction).
type rrg int

const (
	rrgNoop rrg = iota
	rrgRemoveAdmin
	rrgRemoveInherit
	rrgRemoveSet
	rrgDelete
)

// revokePlan is the actions planned on the grants of one role: idx are
// the indexes into Doc.Members of that role's grants.
type revokePlan struct {
	d       *Doc
	idx     []int
	actions []rrg
}

func (d *Doc) newRevokePlan(role string) *revokePlan {
	p := &revokePlan{d: d}
	for i, m := range d.Members {
		if m.Role == role {
			p.idx = append(p.idx, i)
		}
	}
	p.actions = make([]rrg, len(p.idx))
	return p
}

func (p *revokePlan) m(k int) Membership { return p.d.Members[p.idx[k]] }

// singleRevoke is plan_single_revoke: it reports whether the grant of
// (member, grantor) exists.
func (p *revokePlan) singleRevoke(member, grantor string, what RevokeRoleOption, cascade bool) (bool, error) {
	for k := range p.idx {
		m := p.m(k)
		if m.Member != member || m.Grantor != grantor {
			continue
		}
		switch what {
		case RevokeInheritOption:
			p.actions[k] = rrgRemoveInherit
		case RevokeSetOption:
			p.actions[k] = rrgRemoveSet
		default:
			if err := p.recursiveRevoke(k, what == RevokeAdminOption, cascade); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	return false, nil
}

// memberRevoke is plan_member_revoke: every grant to member, cascading.
func (p *revokePlan) memberRevoke(member string) {
	for k := range p.idx {
		if p.m(k).Member == member {
			_ = p.recursiveRevoke(k, false, true)
		}
	}
}

// recursiveRevoke is plan_recursive_revoke.
func (p *revokePlan) recursiveRevoke(k int, adminOnly, cascade bool) error {
	if p.actions[k] == rrgDelete || p.actions[k] == rrgRemoveAdmin && adminOnly {
		return nil
	}
	m := p.m(k)
	if !adminOnly {
		p.actions[k] = rrgDelete
		if !m.Admin {
			return nil
		}
	} else {
		if !m.Admin {
			return nil
		}
		p.actions[k] = rrgRemoveAdmin
	}
	for j := range p.idx {
		o := p.m(j)
		if o.Member == m.Member && o.Admin && p.actions[j] == rrgNoop {
			return nil // member would still have ADMIN OPTION
		}
	}
	for j := range p.idx {
		if p.m(j).Grantor == m.Member && p.actions[j] != rrgDelete {
			if !cascade {
				return DependentPrivilegesError()
			}
			if err := p.recursiveRevoke(j, false, cascade); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyRevokePlan performs the planned actions on the Doc.
func (d *Doc) applyRevokePlan(p *revokePlan) {
	del := map[int]bool{}
	for k, i := range p.idx {
		switch p.actions[k] {
		case rrgDelete:
			del[i] = true
		case rrgRemoveAdmin:
			d.Members[i].Admin = false
		case rrgRemoveInherit:
			d.Members[i].Inherit = false
		case rrgRemoveSet:
			d.Members[i].Set = false
		}
	}
	n := 0
	d.Members = slices.DeleteFunc(d.Members, func(Membership) bool { n++; return del[n-1] })
}
