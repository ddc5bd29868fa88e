package authz

import (
	"context"
	"errors"
	"slices"

	"topicgate/acl"
	"topicgate/planner/plantree"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// Check decides whether id may run a statement that does accs (from
// plantree.Accesses) to topics, from the grants in force now: SELECT on
// each topic read, INSERT on each written, USAGE on each consumer acted
// as. A topic that does not exist is left to the statement to report
// (42P01 comes before 42501, as in PostgreSQL).
func (a *Authority) Check(ctx context.Context, id *Identity, accs []plantree.Access) error {
	if len(accs) == 0 || (id.virtual && id.Current == id.Login) {
		return nil
	}
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return err
	}
	if id.super(d) {
		return nil
	}
	for _, x := range accs {
		cfg, err := a.TopicConfig(x.Topic)
		if err != nil {
			continue
		}
		if x.Read || x.Insert {
			have := topicPrivs(d, id.Current, cfg)
			if x.Read && have&acl.Select == 0 && !columnsAllow(d, id.Current, cfg, acl.Select, x.ReadCols) ||
				x.Insert && have&acl.Insert == 0 && !columnsAllow(d, id.Current, cfg, acl.Insert, x.InsertCols) {
				return deniedTopic(cfg.Name)
			}
		}
		if x.Consumer == "" {
			continue
		}
		c := consumerOf(cfg, x.Consumer)
		if c == nil {
			continue
		}
		if d.Privs(id.Current, ownerName(d, cfg.Owner), c.ACL, acl.ConsumerPrivs)&acl.Usage == 0 {
			return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "permission denied for consumer %s.%s", cfg.Name, x.Consumer)
		}
	}
	return nil
}

// topicPrivs are role's privileges on the topic of cfg, the predefined
// roles' included.
func topicPrivs(d *acl.Doc, role string, cfg *topicstore.TopicConfig) acl.Priv {
	return d.TopicPrivs(role, ownerName(d, cfg.Owner), cfg.ACL)
}

// ownerName is the owner of an object whose record names owner: the
// bootstrap superuser for one created before roles (or by a login that
// names no role).
func ownerName(d *acl.Doc, owner string) string {
	if owner == "" {
		owner = d.Bootstrap()
	}
	if owner == "" {
		// No role yet: a name no role can have, so that the default
		// access list ("the owner has all") gives no one anything.
		return noOwner
	}
	return owner
}

// noOwner owns what the bootstrap superuser owns while no role exists.
const noOwner = "\x00bootstrap"

func deniedTopic(name string) error {
	return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "permission denied for topic %s", name)
}

func consumerOf(cfg *topicstore.TopicConfig, name string) *topicstore.ConsumerConfig {
	for i := range cfg.Consumers {
		if cfg.Consumers[i].Name == name {
			return &cfg.Consumers[i]
		}
	}
	return nil
}

// isOwner reports whether id may act as the owner of an object owned by
// owner: a superuser, the owner, or a member of the owning role with its
// privileges. A topic created before roles (owner "") is the bootstrap
// superuser's.
func isOwner(d *acl.Doc, id *Identity, owner string) bool {
	return id.super(d) || (owner != "" && d.HasPrivsOf(id.Current, owner))
}

// CheckOwner is the check of ALTER TOPIC, DROP TOPIC and SPLIT: id must
// own the topic. A topic that does not exist passes (the statement
// reports it, or skips it under IF EXISTS).
func (a *Authority) CheckOwner(ctx context.Context, id *Identity, topic string) error {
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return err
	}
	cfg, err := a.TopicConfig(topic)
	if errors.Is(err, topicstore.ErrTopicNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !isOwner(d, id, cfg.Owner) {
		return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "must be owner of topic %s", topic)
	}
	return nil
}

// CheckDeadLetterQueues: a consumer that moves dead letters to a topic
// needs INSERT on it when its DDL runs (the moves then run as the
// system). Only queues cfg names that before (nil at CREATE) did not are
// checked.
func (a *Authority) CheckDeadLetterQueues(id *Identity, before, cfg *topicstore.TopicConfig) error {
	d, err := a.Doc()
	if err != nil {
		return err
	}
	if id.super(d) {
		return nil
	}
	for _, c := range cfg.Consumers {
		if c.DeadLetterQueue == "" || c.DeadLetterQueue == cfg.Name {
			continue
		}
		if before != nil {
			if old := consumerOf(before, c.Name); old != nil && old.DeadLetterQueue == c.DeadLetterQueue {
				continue
			}
		}
		q, err := a.TopicConfig(c.DeadLetterQueue)
		if err != nil {
			continue // a missing queue is a NOTICE of its own
		}
		if topicPrivs(d, id.Current, q)&acl.Insert == 0 {
			return deniedTopic(q.Name)
		}
	}
	return nil
}

// PrepareCreate checks that id may create topics (CREATE on schema
// public) and makes cfg its: owner, and the default privileges of the
// owner for the topic and each of its consumers.
func (a *Authority) PrepareCreate(ctx context.Context, id *Identity, cfg *topicstore.TopicConfig) error {
	a.barrier(ctx)
	d, err := a.Doc()
	if err != nil {
		return err
	}
	if !id.super(d) && d.SchemaPrivileges(id.Current)&acl.Create == 0 {
		return pgerror.New(pgerror.CodeInsufficientPrivilege, "permission denied for schema public")
	}
	if !id.virtual || id.Current != id.Login {
		cfg.Owner = id.Current
	}
	cfg.ACL = d.DefaultsFor(cfg.Owner, acl.KindTopic)
	for i := range cfg.Consumers {
		cfg.Consumers[i].ACL = d.DefaultsFor(cfg.Owner, acl.KindConsumer)
	}
	return a.CheckDeadLetterQueues(id, nil, cfg)
}

// PrepareAlter checks an ALTER TOPIC of name that applies apply, as the
// topic is now (a consumer's new dead_letter_queue needs INSERT on it),
// and returns what to run inside the store's change after apply: it gives
// each new consumer the owner's default privileges for consumers. It
// makes no store call (the cluster store runs the change under its lock).
// A topic that does not exist, or an apply that fails, is left to the
// statement to report.
func (a *Authority) PrepareAlter(ctx context.Context, id *Identity, name string, apply func(*topicstore.TopicConfig) error) (func(old, cfg *topicstore.TopicConfig), error) {
	noop := func(old, cfg *topicstore.TopicConfig) {}
	cfg, err := a.TopicConfig(name)
	if err != nil {
		return noop, nil
	}
	trial := topicstore.CloneConfig(*cfg)
	if apply(&trial) != nil {
		return noop, nil
	}
	if err := a.CheckDeadLetterQueues(id, cfg, &trial); err != nil {
		return nil, err
	}
	d, err := a.Doc()
	if err != nil {
		return nil, err
	}
	return func(old, cfg *topicstore.TopicConfig) {
		for i := range cfg.Consumers {
			if consumerOf(old, cfg.Consumers[i].Name) == nil {
				cfg.Consumers[i].ACL = d.DefaultsFor(cfg.Owner, acl.KindConsumer)
			}
		}
	}, nil
}

// columnsAllow reports whether role's column privileges on the topic of
// cfg allow priv on every column of cols (bit i: plantree.MsgCol i), or,
// cols naming none (SELECT count(*)), on some column, as PostgreSQL
// decides for a role without the privilege on the whole table.
func columnsAllow(d *acl.Doc, role string, cfg *topicstore.TopicConfig, priv acl.Priv, cols uint64) bool {
	if len(cfg.ColumnACLs) == 0 {
		return false
	}
	owner := ownerName(d, cfg.Owner)
	has := func(c *topicstore.ColumnACL) bool { return d.Privs(role, owner, c.ACL, acl.TopicPrivs)&priv != 0 }
	if cols == 0 {
		for i := range cfg.ColumnACLs {
			if has(&cfg.ColumnACLs[i]) {
				return true
			}
		}
		return false
	}
	for c := range plantree.MsgColumns {
		if cols&(1<<uint(c)) == 0 {
			continue
		}
		i := slices.IndexFunc(cfg.ColumnACLs, func(a topicstore.ColumnACL) bool { return a.Column == plantree.MsgColumns[c].Name })
		if i < 0 || !has(&cfg.ColumnACLs[i]) {
			return false
		}
	}
	return true
}

// TopicConfig is the definition of topic name as this process sees it
// now, read-only: without its partitions' state where the store can
// (topicstore.Configer), since checks read it on every statement.
func (a *Authority) TopicConfig(name string) (*topicstore.TopicConfig, error) {
	if c, ok := a.store.(topicstore.Configer); ok {
		cfg, err := c.TopicConfig(name)
		return &cfg, err
	}
	ti, err := a.store.Topic(name)
	return &ti.Config, err
}
