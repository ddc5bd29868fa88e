package authz

import (
	"context"
	"topicgate/acl"
	"topicgate/sql/pgerror"
)

// Identity is who a session acts as: the role that logged in, the session
// user (SET SESSION AUTHORIZATION changes it) and the current user (SET
// ROLE changes it), as PostgreSQL's session_user and current_user. It
// belongs to its session's goroutine.
type Identity struct {
	Login   string
	Session string
	Current string
	// virtual: Login names no role (a "trust" login, or a store that keeps
	// no roles): it acts as the bootstrap superuser.
	virtual bool
}

// super reports whether id's current user is a superuser in d.
func (id *Identity) super(d *acl.Doc) bool {
	if id.virtual && id.Current == id.Login {
		return true
	}
	return d.Superuser(id.Current)
}

// actor is the role id's changes are recorded as (a grantor): its current
// user, or for a login that names no role the bootstrap superuser it
// acts as.
func (id *Identity) actor(d *acl.Doc) string {
	if id.virtual && id.Current == id.Login {
		return d.Bootstrap()
	}
	return id.Current
}

// Superuser reports whether id's current user is a superuser now
// (is_superuser).
func (a *Authority) Superuser(id *Identity) bool {
	if id.virtual && id.Current == id.Login {
		return true
	}
	d, err := a.Doc()
	return err == nil && id.super(d)
}

// Admit checks that user may open a session now (LOGIN, CONNECTION LIMIT)
// and returns its identity and the function to call when the session
// ends. The password was checked before, by the wire layer.
func (a *Authority) Admit(user string) (*Identity, func(), error) {
	id := &Identity{Login: user, Session: user, Current: user}
	if a.trust {
		// No password check ran its barrier: a role created a moment ago
		// through another gateway must not log in as the bootstrap
		// superuser here.
		ctx, cancel := context.WithTimeout(context.Background(), loginBarrierTimeout)
		a.barrier(ctx)
		cancel()
	}
	d, err := a.Doc()
	if err != nil {
		return nil, nil, err
	}
	r, ok := d.Role(user)
	if !ok {
		// Only a trust login (or a store without roles) gets here
		// without a role: the password check needs one.
		id.virtual = true
		return id, func() {}, nil
	}
	if !r.Login {
		return nil, nil, pgerror.Newf(pgerror.CodeInvalidAuthorization, "role \"%s\" is not permitted to log in", user)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.ConnLimit >= 0 && !r.Superuser && a.conns[user] >= r.ConnLimit {
		return nil, nil, pgerror.Newf(pgerror.CodeTooManyConnections, "too many connections for role \"%s\"", user)
	}
	a.conns[user]++
	return id, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.conns[user]--; a.conns[user] <= 0 {
			delete(a.conns, user)
		}
	}, nil
}

// CheckSetRole is SET ROLE role's check ("" or "none": back to the
// session user, always allowed): the role exists, and the session user
// is a superuser or may SET ROLE to it. The caller changes id.Current (in
// the session's settings, so a ROLLBACK undoes it).
func (a *Authority) CheckSetRole(id *Identity, role string) error {
	if role == "" || role == "none" {
		return nil
	}
	d, err := a.Doc()
	if err != nil {
		return err
	}
	if _, ok := d.Role(role); !ok {
		return roleMissing(role)
	}
	sessionSuper := (id.virtual && id.Session == id.Login) || d.Superuser(id.Session)
	if !sessionSuper && !d.CanSetRole(id.Session, role) {
		return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "permission denied to set role \"%s\"", role)
	}
	return nil
}

// CheckSessionAuthorization is SET SESSION AUTHORIZATION role's check
// ("" or "default": back to the login, always allowed): only a superuser
// login may become another role.
func (a *Authority) CheckSessionAuthorization(id *Identity, role string) error {
	if role == "" || role == "default" || role == id.Login {
		return nil
	}
	d, err := a.Doc()
	if err != nil {
		return err
	}
	if _, ok := d.Role(role); !ok {
		return roleMissing(role)
	}
	if !id.virtual && !d.Superuser(id.Login) {
		return pgerror.Newf(pgerror.CodeInsufficientPrivilege, "permission denied to set session authorization")
	}
	return nil
}

// SessionOf is the identity of a session of user that another gateway
// holds, as far as this one knows it: the role it logged in as (the
// bootstrap superuser when user names no role).
func (a *Authority) SessionOf(user string) *Identity {
	id := &Identity{Login: user, Session: user, Current: user}
	if d, err := a.Doc(); err == nil {
		_, ok := d.Role(user)
		id.virtual = !ok
	}
	return id
}

// CanSignal is PostgreSQL's check of pg_cancel_backend (terminate false)
// and pg_terminate_backend by id of a session acting as target: a
// superuser may signal any session; a session of a superuser only a
// superuser; otherwise id needs the privileges of the target's role or of
// pg_signal_backend.
func (a *Authority) CanSignal(id, target *Identity, terminate bool) error {
	d, err := a.Doc()
	if err != nil {
		return err
	}
	if id.super(d) {
		return nil
	}
	msg, what := "permission denied to cancel query", "cancel queries"
	detail := "Only roles with privileges of the role whose query is being canceled or with privileges of the \"pg_signal_backend\" role may cancel this query."
	if terminate {
		msg, what = "permission denied to terminate process", "terminate processes"
		detail = "Only roles with privileges of the role whose process is being terminated or with privileges of the \"pg_signal_backend\" role may terminate this process."
	}
	if target.super(d) {
		return pgerror.New(pgerror.CodeInsufficientPrivilege, msg).
			WithDetail("Only roles with the SUPERUSER attribute may " + what + " of roles with the SUPERUSER attribute.")
	}
	if !d.HasPrivsOf(id.Current, target.Session) && !d.HasPrivsOf(id.Current, "pg_signal_backend") {
		return pgerror.New(pgerror.CodeInsufficientPrivilege, msg).WithDetail(detail)
	}
	return nil
}
