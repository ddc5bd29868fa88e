package authz

import (
	"context"
	"errors"

	"topicgate/acl"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
)

// REASSIGN OWNED and DROP OWNED, as PostgreSQL: the caller needs the
// privileges of every role named (and, to reassign, of the new owner).
// Each topic changes in an AlterTopic (or a DropTopic) of its own, and
// the role document in one compare-and-set after them; a failure part way
// leaves the topics done so far changed, each whole.

// ownedRoles resolves the roles of REASSIGN or DROP OWNED and checks that
// id has the privileges of each.
func ownedRoles(d *acl.Doc, id *Identity, specs []sql.RoleSpec, what string) ([]string, error) {
	var out []string
	for _, r := range specs {
		n, err := roleName(d, id, r, false)
		if err != nil {
			return nil, err
		}
		if !id.super(d) && !d.HasPrivsOf(id.Current, n) {
			return nil, pgerror.Newf(pgerror.CodeInsufficientPrivilege, "permission denied to %s objects", what).
				WithDetail("Only roles with privileges of role \"" + n + "\" may " + what + " objects owned by it.")
		}
		out = append(out, n)
	}
	return out, nil
}

func (a *Authority) reassignOwned(ctx context.Context, id *Identity, st *sql.ReassignOwned) error {
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return err
	}
	from, err := ownedRoles(d, id, st.Roles, "reassign")
	if err != nil {
		return err
	}
	to, err := ownedRoles(d, id, []sql.RoleSpec{st.To}, "reassign")
	if err != nil {
		return err
	}
	for _, ti := range a.store.Topics() {
		owner := ownerName(d, ti.Config.Owner)
		for _, f := range from {
			if owner != f {
				continue
			}
			err := a.store.AlterTopic(ctx, ti.Config.Name, func(cfg *topicstore.TopicConfig) error {
				setOwner(cfg, f, to[0])
				return nil
			})
			if err != nil && !errors.Is(err, topicstore.ErrTopicNotFound) {
				return txn.StoreError(err, ti.Config.Name)
			}
		}
	}
	return a.change(ctx, func(d *acl.Doc) error {
		for _, f := range from {
			d.ReassignOwned(f, to[0])
		}
		return nil
	})
}

// setOwner makes to the owner of cfg in place of from, with PostgreSQL's
// aclnewowner on every access list.
func setOwner(cfg *topicstore.TopicConfig, from, to string) {
	cfg.ACL = acl.ReplaceRole(cfg.ACL, from, to)
	for i := range cfg.ColumnACLs {
		cfg.ColumnACLs[i].ACL = acl.ReplaceRole(cfg.ColumnACLs[i].ACL, from, to)
	}
	for i := range cfg.Consumers {
		cfg.Consumers[i].ACL = acl.ReplaceRole(cfg.Consumers[i].ACL, from, to)
	}
	cfg.Owner = to
}

func (a *Authority) dropOwned(ctx context.Context, id *Identity, st *sql.DropOwned) error {
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return err
	}
	roles, err := ownedRoles(d, id, st.Roles, "drop")
	if err != nil {
		return err
	}
	for _, ti := range a.store.Topics() {
		owner := ownerName(d, ti.Config.Owner)
		name := ti.Config.Name
		for _, r := range roles {
			if owner == r {
				if err := a.store.DropTopic(ctx, name); err != nil && !errors.Is(err, topicstore.ErrTopicNotFound) {
					return txn.StoreError(err, name)
				}
				break
			}
		}
		err := a.store.AlterTopic(ctx, name, func(cfg *topicstore.TopicConfig) error {
			for _, r := range roles {
				cfg.ACL = acl.RemoveRole(cfg.ACL, r)
				for i := range cfg.ColumnACLs {
					cfg.ColumnACLs[i].ACL = acl.RemoveRole(cfg.ColumnACLs[i].ACL, r)
				}
				cfg.ColumnACLs = dropEmptyColumns(cfg.ColumnACLs)
				for i := range cfg.Consumers {
					cfg.Consumers[i].ACL = acl.RemoveRole(cfg.Consumers[i].ACL, r)
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, topicstore.ErrTopicNotFound) {
			return txn.StoreError(err, name)
		}
	}
	return a.change(ctx, func(d *acl.Doc) error {
		for _, r := range roles {
			d.DropOwned(r)
		}
		return nil
	})
}
