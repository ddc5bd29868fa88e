package executor

import (
	"strings"

	"topicgate/acl"
	"topicgate/authz"
	"topicgate/planner/catalog"
	"topicgate/sql"
	"topicgate/sql/pgerror"
)

// setIdentity runs SET [LOCAL] ROLE, RESET ROLE, SET [LOCAL] SESSION
// AUTHORIZATION and RESET SESSION AUTHORIZATION (ok false: st sets
// something else). Once authz allows it, the change is a setting of the
// session's ("role", "session_authorization"), so it follows the
// settings' rules as in PostgreSQL: a ROLLBACK or ROLLBACK TO SAVEPOINT
// undoes it, SET LOCAL lasts to the end of the transaction, SHOW reports
// it; applying it moves the identity (identityApplied).
func (s *Session) setIdentity(st *sql.SetVar) (tag string, ok bool, err error) {
	name := strings.ToLower(st.Name)
	if (name != "role" && name != "session_authorization") || st.All {
		return "", false, nil
	}
	var value string
	if !st.Reset && !st.Default {
		value = st.Value
	}
	tag = "SET"
	if st.Reset && !st.Default {
		tag = "RESET"
	}
	if name == "role" {
		if strings.EqualFold(value, "none") {
			value = ""
		}
		if err := s.eng.authz.CheckSetRole(s.id, value); err != nil {
			return "", true, err
		}
		return tag, true, s.settings.SetTrusted("role", orNone(value), st.Local)
	}
	if strings.EqualFold(value, "default") {
		value = ""
	}
	if err := s.eng.authz.CheckSessionAuthorization(s.id, value); err != nil {
		return "", true, err
	}
	if value == "" {
		value = s.id.Login
	}
	if err := s.settings.SetTrusted("session_authorization", value, st.Local); err != nil {
		return "", true, err
	}
	return tag, true, s.settings.SetTrusted("role", "none", st.Local)
}

// identityApplied moves the session's identity when the settings apply a
// value of "role" or "session_authorization" (a SET, or the undo of one).
func (s *Session) identityApplied(name, value string) {
	switch name {
	case "session_authorization":
		s.id.Session = value
		// The settings restore role and session_authorization in no
		// order: with no role set, the current user follows.
		if r, _ := s.settings.Get("role"); r == "none" || r == "" {
			s.id.Current = value
		}
	case "role":
		if value == "none" || value == "" {
			s.id.Current = s.id.Session
		} else {
			s.id.Current = value
		}
	}
	s.noteSuperuser()
}

// noteSuperuser sets is_superuser for the current user (reported to the
// client when it changes).
func (s *Session) noteSuperuser() {
	v := "off"
	if s.eng.authz.Superuser(s.id) {
		v = "on"
	}
	s.settings.SetInternal("is_superuser", v)
}

func orNone(role string) string {
	if role == "" {
		return "none"
	}
	return role
}

// stmtTag names a statement about roles for messages.
func stmtTag(st sql.Stmt) string {
	switch st.(type) {
	case *sql.CreateRole:
		return "CREATE ROLE"
	case *sql.AlterRole:
		return "ALTER ROLE"
	case *sql.DropRole:
		return "DROP ROLE"
	case *sql.GrantPrivs, *sql.GrantRole:
		return "GRANT"
	case *sql.AlterDefaultPrivileges:
		return "ALTER DEFAULT PRIVILEGES"
	case *sql.AlterOwner:
		return "ALTER TOPIC"
	case *sql.ReassignOwned:
		return "REASSIGN OWNED"
	case *sql.DropOwned:
		return "DROP OWNED"
	}
	return "statement"
}

// Privilege implements eval.Catalog: has_*_privilege and pg_has_role, as
// the session's role sees the catalog now.
func (s *Session) Privilege(kind string, role, object any, privs string) (any, error) {
	v, err := s.eng.authz.View(s.id)
	if err != nil {
		return nil, err
	}
	name := v.Current()
	if role != nil {
		if name, err = roleArg(v, role); err != nil || name == "" {
			return nil, err
		}
	}
	var obj string
	switch o := object.(type) {
	case int64:
		if kind == "role" {
			r, ok := v.D.RoleByOID(uint32(o))
			if !ok {
				return nil, nil
			}
			obj = r.Name
			break
		}
		if kind == "schema" {
			if o != catalog.OIDPublicNS {
				return true, nil // pg_catalog, sys: usable by everyone
			}
			obj = "public"
			break
		}
		rel, ok := s.Relation(o)
		if !ok {
			return nil, nil
		}
		if rel.Kind != "r" {
			return true, nil // a view of sys or pg_catalog: readable by everyone
		}
		obj = rel.Name
	case string:
		obj = o
		if kind == "table" {
			schema, rest, qualified := strings.Cut(o, ".")
			if qualified && schema != "public" {
				return true, nil // sys, pg_catalog, information_schema
			}
			if qualified {
				obj = rest
			}
			if _, err := s.eng.store.Topic(obj); err != nil && (catalog.SysViews[obj].Names != nil || catalog.PgCatalogViews[obj].Names != nil) {
				return true, nil
			}
		}
		if kind == "schema" && o != "public" && (o == "sys" || o == "pg_catalog" || o == "information_schema") {
			return true, nil
		}
	default:
		return nil, pgerror.Newf(pgerror.CodeDatatypeMismatch, "unexpected argument %v", object)
	}
	return v.Has(kind, name, obj, privs, s.eng.store.Topic)
}

// roleArg is the role a has_*_privilege argument names (a name or an
// OID; "" for an OID that names none).
func roleArg(v authz.View, role any) (string, error) {
	switch r := role.(type) {
	case int64:
		if x, ok := v.D.RoleByOID(uint32(r)); ok {
			return x.Name, nil
		}
		return "", nil
	case string:
		if strings.EqualFold(r, "public") {
			return "", pgerror.New(pgerror.CodeFeatureNotSupported, "a privilege of PUBLIC is not supported here")
		}
		return r, nil
	}
	return "", pgerror.Newf(pgerror.CodeDatatypeMismatch, "unexpected role argument %v", role)
}

// RoleName implements eval.Catalog: the role of oid; while no role
// exists, OID 10 is the session's user (the bootstrap superuser).
func (s *Session) RoleName(oid int64) (string, bool) {
	d, err := s.eng.authz.Doc()
	if err != nil {
		return "", false
	}
	if r, ok := d.RoleByOID(uint32(oid)); ok {
		return r.Name, true
	}
	if oid == int64(acl.BootstrapOID) && d.Bootstrap() == "" {
		return s.info.User, true
	}
	return "", false
}

// Signal implements eval.Catalog: pg_cancel_backend and
// pg_terminate_backend of a session of this gateway, with PostgreSQL's
// permission rules (authz.CanSignal).
func (s *Session) Signal(pid int64, terminate bool) (bool, error) {
	if pid < 0 {
		if ok, local, err := s.signalKafka(pid, terminate); local || err != nil {
			return ok, err
		}
	} else if v, ok := s.eng.sessions.Load(uint32(pid)); ok && s.eng.signal != nil {
		if err := s.eng.authz.CanSignal(s.id, v.(*Session).id, terminate); err != nil {
			return false, err
		}
		return s.eng.signal(uint32(pid), terminate), nil
	}
	if s.eng.remoteSignal == nil {
		return false, nil
	}
	// A session of another gateway: sys.sessions (which asks them) says
	// whose it is; this gateway decides, that one acts.
	sv, _, found, err := s.eng.views.FindSession(pid)
	if err != nil || !found {
		return false, err
	}
	if err := s.eng.authz.CanSignal(s.id, s.eng.authz.SessionOf(sv.User), terminate); err != nil {
		return false, err
	}
	if pid < 0 && !terminate {
		return false, nil // a Kafka request is not canceled
	}
	// A Kafka connection's negative pid goes as its 32 bits: the
	// gateway that hears it tells it from a process id by its sign.
	s.eng.remoteSignal(uint32(pid), terminate)
	return true, nil
}

// signalKafka is pg_cancel_backend and pg_terminate_backend of the Kafka
// connection of this gateway whose sys.sessions pid is pid (negative),
// with the same permission rule as a PostgreSQL session of its role
// (before SASL authentication it acts as nobody: only a superuser may).
// Terminating closes the connection; canceling does nothing and answers
// false (a Kafka request has no cancel). local is false when this
// gateway has no such connection.
func (s *Session) signalKafka(pid int64, terminate bool) (ok, local bool, err error) {
	if s.eng.kafkaConns == nil {
		return false, false, nil
	}
	for _, c := range s.eng.kafkaConns() {
		if c.PID != pid {
			continue
		}
		if err := s.eng.authz.CanSignal(s.id, s.eng.authz.SessionOf(c.User), terminate); err != nil {
			return false, true, err
		}
		if !terminate {
			return false, true, nil
		}
		return s.eng.kafkaClose(pid), true, nil
	}
	return false, false, nil
}
