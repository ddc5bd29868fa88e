package authz

import (
	"strings"

	"topicgate/acl"
	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// View is what one statement of a session may see of the catalog, decided
// from one role document: the topics it holds some privilege on (on the
// topic, a column of it, or one of its consumers), and other sessions
// only for superusers and members of pg_read_all_stats (pg_monitor is one)
// as PostgreSQL shows other sessions' activity.
type View struct {
	D  *acl.Doc
	id *Identity
	// All: a superuser, who sees everything.
	All bool
	// Sessions: may see every session, not only its own role's.
	Sessions bool
}

// View returns what id may see now.
func (a *Authority) View(id *Identity) (View, error) {
	d, err := a.Doc()
	if err != nil {
		return View{}, err
	}
	v := View{D: d, id: id, All: id.super(d)}
	v.Sessions = v.All || d.HasPrivsOf(id.Current, "pg_read_all_stats")
	return v, nil
}

// Topic reports whether the view shows the topic of cfg.
func (v View) Topic(cfg *topicstore.TopicConfig) bool {
	if v.All {
		return true
	}
	owner := ownerName(v.D, cfg.Owner)
	if topicPrivs(v.D, v.id.Current, cfg) != 0 {
		return true
	}
	for _, c := range cfg.ColumnACLs {
		if len(c.ACL) > 0 && v.D.Privs(v.id.Current, owner, c.ACL, acl.TopicPrivs) != 0 {
			return true
		}
	}
	for _, c := range cfg.Consumers {
		if v.D.Privs(v.id.Current, owner, c.ACL, acl.ConsumerPrivs) != 0 {
			return true
		}
	}
	return false
}

// Session reports whether the view shows a session of role user.
func (v View) Session(user string) bool {
	return v.Sessions || user == v.id.Session || v.D.HasPrivsOf(v.id.Current, user)
}

// Owner is the role that owns the topic of cfg.
func (v View) Owner(cfg *topicstore.TopicConfig) string { return ownerName(v.D, cfg.Owner) }

// Current is the view's current user.
func (v View) Current() string { return v.id.Current }

// Has answers has_table_privilege, has_schema_privilege,
// has_consumer_privilege and pg_has_role for role (a role name) on the
// topic, schema, consumer (topic.consumer) or role named object, privs
// being PostgreSQL's comma-separated list ("SELECT, INSERT WITH GRANT
// OPTION"): true when role has any of them. topic looks a topic up.
func (v View) Has(kind, role, object, privs string, topic func(string) (topicstore.TopicInfo, error)) (bool, error) {
	if _, ok := v.D.Role(role); !ok && !(v.id.virtual && role == v.id.Login) {
		return false, roleMissing(role)
	}
	super := v.D.Superuser(role) || (v.id.virtual && role == v.id.Login)
	for _, p := range strings.Split(privs, ",") {
		p = strings.ToUpper(strings.TrimSpace(p))
		grantOpt := false
		if base, ok := strings.CutSuffix(p, " WITH GRANT OPTION"); ok {
			p, grantOpt = strings.TrimSpace(base), true
		}
		ok, err := v.has(kind, role, object, p, grantOpt, super, topic)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func (v View) has(kind, role, object, priv string, grantOpt, super bool, topic func(string) (topicstore.TopicInfo, error)) (bool, error) {
	if kind == "role" {
		switch priv {
		case "MEMBER":
			return v.D.IsMemberOf(role, object), nil
		case "USAGE":
			return v.D.HasPrivsOf(role, object), nil
		case "SET":
			return v.D.CanSetRole(role, object), nil
		}
		return false, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized privilege type: \"%s\"", strings.ToLower(priv))
	}
	p, err := acl.ParsePriv(priv)
	if err != nil {
		return false, pgerror.Newf(pgerror.CodeInvalidParameterValue, "unrecognized privilege type: \"%s\"", strings.ToLower(priv))
	}
	if super {
		return true, nil
	}
	check := func(owner string, list []acl.Item, all acl.Priv) bool {
		if grantOpt {
			return v.D.GrantOptions(role, owner, list, all)&p != 0
		}
		return v.D.Privs(role, owner, list, all)&p != 0
	}
	switch kind {
	case "schema":
		if object != "public" {
			return false, pgerror.Newf(pgerror.CodeInvalidSchemaName, "schema \"%s\" does not exist", object)
		}
		if grantOpt {
			return check(v.D.SchemaOwnerName(), v.D.SchemaACL, acl.SchemaPrivs), nil
		}
		return v.D.SchemaPrivileges(role)&p != 0, nil
	case "consumer":
		t, c, ok := strings.Cut(object, ".")
		ti, err := topic(t)
		if !ok || err != nil {
			return false, pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" does not exist", object)
		}
		cc := consumerOf(&ti.Config, c)
		if cc == nil {
			return false, pgerror.Newf(pgerror.CodeUndefinedObject, "consumer \"%s\" does not exist", object)
		}
		return check(ownerName(v.D, ti.Config.Owner), cc.ACL, acl.ConsumerPrivs), nil
	}
	ti, err := topic(object)
	if err != nil {
		return false, pgerror.Newf(pgerror.CodeUndefinedTable, "relation \"%s\" does not exist", object)
	}
	if !grantOpt {
		return v.D.TopicPrivs(role, ownerName(v.D, ti.Config.Owner), ti.Config.ACL)&p != 0, nil
	}
	return check(ownerName(v.D, ti.Config.Owner), ti.Config.ACL, acl.TopicPrivs), nil
}

// Usage reports whether the view's role may act as consumer of the topic
// of cfg (USAGE): read as it, acknowledge for it, move its position.
func (v View) Usage(cfg *topicstore.TopicConfig, consumer string) bool {
	if v.All {
		return true
	}
	c := consumerOf(cfg, consumer)
	return c != nil && v.D.Privs(v.id.Current, ownerName(v.D, cfg.Owner), c.ACL, acl.ConsumerPrivs)&acl.Usage != 0
}
