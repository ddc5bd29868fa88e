package executor

import (
	"strings"

	"topicgate/sql"
)

// setIdentity runs SET ROLE, RESET ROLE, SET SESSION AUTHORIZATION and
// RESET SESSION AUTHORIZATION (ok false: st sets something else). As in
// PostgreSQL they last for the session, and SHOW role and SHOW
// session_authorization report them.
func (s *Session) setIdentity(st *sql.SetVar) (tag string, ok bool, err error) {
	name := strings.ToLower(st.Name)
	if name != "role" && name != "session_authorization" {
		return "", false, nil
	}
	if st.All {
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
		if err := s.eng.authz.SetRole(s.id, value); err != nil {
			return "", true, err
		}
		s.settings.vals["role"] = orNone(value)
		s.noteSuperuser()
		return tag, true, nil
	}
	if err := s.eng.authz.SetSessionAuthorization(s.id, value); err != nil {
		return "", true, err
	}
	s.settings.vals["session_authorization"] = s.id.Session
	s.settings.vals["role"] = "none"
	s.noteSuperuser()
	return tag, true, nil
}

// noteSuperuser sets is_superuser for the current user (reported to the
// client when it changes).
func (s *Session) noteSuperuser() {
	v := "off"
	if s.eng.authz.Superuser(s.id) {
		v = "on"
	}
	s.settings.vals["is_superuser"] = v
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
	}
	return "statement"
}
