package authz

import (
	"context"
	"errors"
	"fmt"

	"topicgate/acl"
	"topicgate/planner/plantree"
	"topicgate/sql"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
	"topicgate/txn"
)

// privsOf is the set a GRANT or REVOKE names on an object whose ALL is
// all, refusing privileges the object does not have (0LP01, as
// PostgreSQL's "invalid privilege type X for table"); column lists are
// returned apart.
func privsOf(st *sql.GrantPrivs, all acl.Priv, kind string) (acl.Priv, map[string]acl.Priv, error) {
	if st.Privs == nil {
		return all, nil, nil
	}
	var p acl.Priv
	var cols map[string]acl.Priv
	for _, pr := range st.Privs {
		x, err := acl.ParsePriv(pr.Name)
		if err != nil || x&^all != 0 {
			return 0, nil, pgerror.Newf(pgerror.CodeInvalidGrantOperation, "invalid privilege type %s for %s", pr.Name, kind)
		}
		if len(pr.Columns) == 0 {
			p |= x
			continue
		}
		if x&^(acl.Select|acl.Insert|acl.Update|acl.References) != 0 {
			return 0, nil, pgerror.Newf(pgerror.CodeInvalidGrantOperation, "invalid privilege type %s for column", pr.Name)
		}
		if cols == nil {
			cols = map[string]acl.Priv{}
		}
		for _, c := range pr.Columns {
			cols[c] |= x
		}
	}
	return p, cols, nil
}

// grantees resolves the roles of a GRANT or REVOKE ("" is PUBLIC).
func grantees(d *acl.Doc, id *Identity, specs []sql.RoleSpec) ([]string, error) {
	out := make([]string, 0, len(specs))
	for _, r := range specs {
		n, err := roleName(d, id, r, true)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// edit is one GRANT or REVOKE applied to the access lists of one object,
// as grantor.
type edit struct {
	d        *acl.Doc
	st       *sql.GrantPrivs
	grantees []string
	grantor  string
	owner    string
	all      acl.Priv
}

// apply grants or revokes privs on list for each grantee and returns the
// new list.
func (e *edit) apply(list []acl.Item, privs acl.Priv) ([]acl.Item, error) {
	if privs == 0 {
		return list, nil
	}
	for _, g := range e.grantees {
		var err error
		if !e.st.Revoke {
			list, err = e.d.GrantACL(list, e.owner, g, e.grantor, privs, e.st.GrantOption, e.all)
		} else {
			list, _, err = e.d.RevokeACL(list, e.owner, g, e.grantor, privs, e.st.GrantOption, e.st.Cascade, e.all)
		}
		if err != nil {
			return nil, err
		}
	}
	return list, nil
}

// PostgreSQL's warning codes for a GRANT or REVOKE that did less than
// asked.
const (
	codePrivilegeNotGranted = "01007"
	codePrivilegeNotRevoked = "01006"
)

// grantable narrows want to what id may grant on an object of owner with
// list, warning as PostgreSQL does when that is less than asked, and
// returns the grantor (PostgreSQL's select_best_grantor: the owner when id
// acts as the owner). It refuses (42501) a role with no privilege on the
// object at all.
func grantable(d *acl.Doc, id *Identity, owner string, list []acl.Item, all, want acl.Priv, revoke bool, what, name string, out Output) (acl.Priv, string, error) {
	if isOwner(d, id, owner) {
		return want, owner, nil
	}
	grantor, opts := d.BestGrantor(id.Current, owner, list, want, all)
	if opts == 0 && d.Privs(id.Current, owner, list, all) == 0 {
		return 0, "", pgerror.Newf(pgerror.CodeInsufficientPrivilege, "permission denied for %s %s", what, name)
	}
	got := want & opts
	switch {
	case got == 0 && revoke:
		out.Warning(codePrivilegeNotRevoked, fmt.Sprintf("no privileges could be revoked for \"%s\"", name))
	case got == 0:
		out.Warning(codePrivilegeNotGranted, fmt.Sprintf("no privileges were granted for \"%s\"", name))
	case got != want && revoke:
		out.Warning(codePrivilegeNotRevoked, fmt.Sprintf("not all privileges could be revoked for \"%s\"", name))
	case got != want:
		out.Warning(codePrivilegeNotGranted, fmt.Sprintf("not all privileges were granted for \"%s\"", name))
	}
	return got, grantor, nil
}

func (a *Authority) grantPrivs(ctx context.Context, id *Identity, st *sql.GrantPrivs, out Output) error {
	switch st.Kind {
	case sql.ObjSchema:
		return a.grantOnSchema(ctx, id, st, out)
	case sql.ObjConsumer:
		for _, c := range st.Consumers {
			if err := a.grantOnConsumer(ctx, id, st, c, out); err != nil {
				return err
			}
		}
		return nil
	case sql.ObjAllTopicsInSchema:
		for _, s := range st.Objects {
			if s != "public" {
				return pgerror.Newf(pgerror.CodeInvalidSchemaName, "schema \"%s\" does not exist", s)
			}
		}
		for _, ti := range a.store.Topics() {
			if err := a.grantOnTopic(ctx, id, st, ti.Config.Name, out); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range st.Objects {
		if err := a.grantOnTopic(ctx, id, st, t, out); err != nil {
			return err
		}
	}
	return nil
}

// grantSetup reads the role document a GRANT or REVOKE on objects decides
// from (after the read barrier) and resolves its grantees.
func (a *Authority) grantSetup(ctx context.Context, id *Identity, st *sql.GrantPrivs) (*acl.Doc, []string, error) {
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return nil, nil, err
	}
	gs, err := grantees(d, id, st.Grantees)
	return d, gs, err
}

func (a *Authority) grantOnTopic(ctx context.Context, id *Identity, st *sql.GrantPrivs, topic string, out Output) error {
	privs, cols, err := privsOf(st, acl.TopicPrivs, "topic")
	if err != nil {
		return err
	}
	if cols, err = messageColumns(cols, topic); err != nil {
		return err
	}
	d, gs, err := a.grantSetup(ctx, id, st)
	if err != nil {
		return err
	}
	err = a.store.AlterTopic(ctx, topic, func(cfg *topicstore.TopicConfig) error {
		want := privs
		for _, p := range cols {
			want |= p
		}
		owner := ownerName(d, cfg.Owner)
		got, grantor, err := grantable(d, id, owner, cfg.ACL, acl.TopicPrivs, want, st.Revoke, "topic", cfg.Name, out)
		if err != nil {
			return err
		}
		e := edit{d: d, st: st, grantees: gs, grantor: grantor, owner: owner, all: acl.TopicPrivs}
		if cfg.ACL, err = e.apply(cfg.ACL, privs&got); err != nil {
			return err
		}
		for col, p := range cols {
			i := columnACL(cfg, col)
			if cfg.ColumnACLs[i].ACL, err = e.apply(cfg.ColumnACLs[i].ACL, p&got); err != nil {
				return err
			}
		}
		cfg.ColumnACLs = dropEmptyColumns(cfg.ColumnACLs)
		return nil
	})
	return txn.StoreError(err, topic)
}

// columnACL is the index of col's entry in cfg.ColumnACLs, added when
// missing.
func columnACL(cfg *topicstore.TopicConfig, col string) int {
	for i := range cfg.ColumnACLs {
		if cfg.ColumnACLs[i].Column == col {
			return i
		}
	}
	cfg.ColumnACLs = append(cfg.ColumnACLs, topicstore.ColumnACL{Column: col})
	return len(cfg.ColumnACLs) - 1
}

func dropEmptyColumns(cols []topicstore.ColumnACL) []topicstore.ColumnACL {
	out := cols[:0]
	for _, c := range cols {
		if len(c.ACL) > 0 {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (a *Authority) grantOnConsumer(ctx context.Context, id *Identity, st *sql.GrantPrivs, cn sql.ConsumerName, out Output) error {
	privs, cols, err := privsOf(st, acl.ConsumerPrivs, "consumer")
	if err != nil {
		return err
	}
	if cols != nil {
		return pgerror.New(pgerror.CodeInvalidGrantOperation, "column privileges are only valid for relations")
	}
	d, gs, err := a.grantSetup(ctx, id, st)
	if err != nil {
		return err
	}
	err = a.store.AlterTopic(ctx, cn.Topic, func(cfg *topicstore.TopicConfig) error {
		c := consumerOf(cfg, cn.Consumer)
		if c == nil {
			return pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" of topic \"%s\" does not exist", cn.Consumer, cn.Topic)
		}
		name := cn.Topic + "." + cn.Consumer
		owner := ownerName(d, cfg.Owner)
		got, grantor, err := grantable(d, id, owner, c.ACL, acl.ConsumerPrivs, privs, st.Revoke, "consumer", name, out)
		if err != nil {
			return err
		}
		e := edit{d: d, st: st, grantees: gs, grantor: grantor, owner: owner, all: acl.ConsumerPrivs}
		c.ACL, err = e.apply(c.ACL, got)
		return err
	})
	return txn.StoreError(err, cn.Topic)
}

func (a *Authority) grantOnSchema(ctx context.Context, id *Identity, st *sql.GrantPrivs, out Output) error {
	for _, s := range st.Objects {
		if s != "public" {
			return pgerror.Newf(pgerror.CodeInvalidSchemaName, "schema \"%s\" does not exist", s)
		}
	}
	privs, cols, err := privsOf(st, acl.SchemaPrivs, "schema")
	if err != nil {
		return err
	}
	if cols != nil {
		return pgerror.New(pgerror.CodeInvalidGrantOperation, "column privileges are only valid for relations")
	}
	return a.change(ctx, func(d *acl.Doc) error {
		gs, err := grantees(d, id, st.Grantees)
		if err != nil {
			return err
		}
		owner := d.SchemaOwnerName()
		got, grantor, err := grantable(d, id, owner, d.SchemaACL, acl.SchemaPrivs, privs, st.Revoke, "schema", "public", out)
		if err != nil {
			return err
		}
		e := edit{d: d, st: st, grantees: gs, grantor: grantor, owner: owner, all: acl.SchemaPrivs}
		d.SchemaACL, err = e.apply(d.SchemaACL, got)
		return err
	})
}

func (a *Authority) alterDefaults(ctx context.Context, id *Identity, st *sql.AlterDefaultPrivileges) error {
	for _, s := range st.Schemas {
		if s != "public" {
			return pgerror.Newf(pgerror.CodeInvalidSchemaName, "schema \"%s\" does not exist", s)
		}
	}
	kind, all, what := acl.KindTopic, acl.TopicPrivs, "topic"
	if st.Grant.Kind == sql.ObjConsumer {
		kind, all, what = acl.KindConsumer, acl.ConsumerPrivs, "consumer"
	}
	privs, cols, err := privsOf(&st.Grant, all, what)
	if err != nil {
		return err
	}
	if cols != nil {
		return pgerror.New(pgerror.CodeInvalidGrantOperation, "column privileges are only valid for relations")
	}
	return a.change(ctx, func(d *acl.Doc) error {
		roles := []string{id.actor(d)}
		if len(st.ForRoles) > 0 {
			roles = roles[:0]
			for _, r := range st.ForRoles {
				n, err := roleName(d, id, r, false)
				if err != nil {
					return err
				}
				if !id.super(d) && !d.HasPrivsOf(id.Current, n) {
					return pgerror.New(pgerror.CodeInsufficientPrivilege, "permission denied to change default privileges")
				}
				roles = append(roles, n)
			}
		}
		gs, err := grantees(d, id, st.Grant.Grantees)
		if err != nil {
			return err
		}
		for _, r := range roles {
			for _, g := range gs {
				d.AlterDefaults(r, kind, !st.Grant.Revoke, g, privs, st.Grant.GrantOption)
			}
		}
		return nil
	})
}

func (a *Authority) alterOwner(ctx context.Context, id *Identity, st *sql.AlterOwner, out Output) error {
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return err
	}
	to, err := roleName(d, id, st.Owner, false)
	if err != nil {
		return err
	}
	err = a.store.AlterTopic(ctx, st.Topic, func(cfg *topicstore.TopicConfig) error {
		if !isOwner(d, id, cfg.Owner) {
			return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "must be owner of topic %s", cfg.Name)
		}
		if !id.super(d) {
			if !d.CanSetRole(id.Current, to) {
				return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "must be able to SET ROLE \"%s\"", to)
			}
			if d.SchemaPrivileges(to)&acl.Create == 0 {
				return pgerror.New(pgerror.CodeInsufficientPrivilege, "permission denied for schema public")
			}
		}
		setOwner(cfg, ownerName(d, cfg.Owner), to)
		return nil
	})
	if errors.Is(err, topicstore.ErrTopicNotFound) && st.IfExists {
		out.Notice(pgerror.CodeUndefinedTable, fmt.Sprintf("topic \"%s\" does not exist, skipping", st.Topic))
		return nil
	}
	return txn.StoreError(err, st.Topic)
}

// messageColumns checks that cols name message columns of a topic and
// gives each its canonical name (a YDB alias such as __ydb_seq_no is the
// column seqno).
func messageColumns(cols map[string]acl.Priv, topic string) (map[string]acl.Priv, error) {
	if cols == nil {
		return nil, nil
	}
	out := make(map[string]acl.Priv, len(cols))
	for name, p := range cols {
		c, ok := plantree.LookupMsgCol(name)
		if !ok {
			return nil, pgerror.Newf(pgerror.CodeUndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, topic)
		}
		out[plantree.MsgColumns[c].Name] |= p
	}
	return out, nil
}
