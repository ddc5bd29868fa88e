package eval

import (
	"time"

	"topicgate/sql/values"
)

// Context is what a builtin reads of the statement running it and of the
// session around it. rowexec's evaluation context (rowexec.EvalCtx)
// implements it; builtins reach nothing else of the executor.
type Context interface {
	// Now is the statement's timestamp: now(), current_date and the
	// other transaction-time functions all return it.
	Now() time.Time
	// Location is the session's TimeZone (to_char prints timestamptz in it).
	Location() *time.Location
	// DateStyle is the session's DateStyle, which casts between dates
	// and text follow.
	DateStyle() values.DateStyle
	// Session says who runs the statement.
	Session() Session
	// Setting is a run-time parameter's current value (current_setting);
	// ok false for a parameter that does not exist.
	Setting(name string) (value string, ok bool)
	// SetSetting sets a run-time parameter as SET (SET LOCAL when local)
	// would, and returns its new value as SHOW prints it (set_config).
	SetSetting(name, value string, local bool) (string, error)
	// Catalog answers the catalog functions psql's describe commands call.
	Catalog() Catalog
}

// Session is who runs a statement, for version(), current_user,
// current_database() and pg_backend_pid().
type Session struct {
	Database string
	// User is current_user (SET ROLE changes it), SessionUser
	// session_user (SET SESSION AUTHORIZATION changes it).
	User, SessionUser string
	ProcessID         uint32
	// ServerVersion is topicgate's version, which version() names.
	ServerVersion string
}

// Catalog is what the catalog functions read of the relations a session
// sees: the topics and the system views.
type Catalog interface {
	// Relation is the relation of an OID; ok false for none.
	Relation(oid int64) (r Relation, ok bool)
	// DatabaseSize is the bytes every topic's partitions hold.
	DatabaseSize() int64
	// Privilege answers has_table_privilege, has_schema_privilege,
	// has_consumer_privilege and pg_has_role (kind "table", "schema",
	// "consumer", "role"): whether role (nil: the current user; a name or
	// an OID) has any of privs on object (a name or an OID); ok is NULL
	// (nil) for an OID that names nothing.
	Privilege(kind string, role, object any, privs string) (ok any, err error)
	// RoleName is the name of the role with oid (pg_get_userbyid).
	RoleName(oid int64) (string, bool)
	// Signal cancels the statement of session pid, and with terminate
	// ends the session (pg_cancel_backend, pg_terminate_backend); false
	// when no such session is found.
	Signal(pid int64, terminate bool) (bool, error)
}

// Relation is one relation of pg_class as the catalog functions see it.
type Relation struct {
	Name      string
	Namespace int64  // the OID of its schema: public, sys or pg_catalog
	Kind      string // pg_class.relkind: "r" for a topic, "v" for a view
	Bytes     int64  // stored bytes (a topic's retained messages), 0 for a view
	Columns   []string
}
