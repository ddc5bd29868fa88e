package sql

import "time"

// The AST's statements about roles and privileges. Names are as written
// after identifier folding; PUBLIC, CURRENT_USER, CURRENT_ROLE and
// SESSION_USER appear in RoleSpec.Kind, never as names.

// RoleSpecKind says what a RoleSpec names.
type RoleSpecKind uint8

// The kinds of RoleSpec.
const (
	RoleName RoleSpecKind = iota
	RolePublic
	RoleCurrentUser // CURRENT_USER and CURRENT_ROLE
	RoleSessionUser
)

// RoleSpec names a role: a name, PUBLIC, CURRENT_USER/CURRENT_ROLE or
// SESSION_USER.
type RoleSpec struct {
	Kind RoleSpecKind
	Name string // Kind == RoleName
}

// RoleOptions are the options of CREATE ROLE and ALTER ROLE; a nil field
// was not given.
type RoleOptions struct {
	Superuser, CreateRole, CreateDB, Inherit, Login, Replication, BypassRLS *bool
	ConnLimit                                                               *int
	// Password: nil not given; PasswordNull is PASSWORD NULL.
	Password     *string
	PasswordNull bool
	// ValidUntil: nil not given; ValidUntilInfinity is 'infinity'.
	ValidUntil         *time.Time
	ValidUntilInfinity bool
	// InRole (IN ROLE r, ...), Role (ROLE r, ...) and Admin (ADMIN r, ...)
	// of CREATE ROLE: memberships made with the role.
	InRole, Role, Admin []RoleSpec
}

// CreateRole is CREATE ROLE / USER / GROUP name [WITH] options. CREATE
// USER sets Login unless the options say otherwise.
type CreateRole struct {
	Name    string
	Options RoleOptions
}

// AlterRole is ALTER ROLE / USER role [WITH] options, or ALTER ROLE role
// RENAME TO NewName.
type AlterRole struct {
	Role    RoleSpec
	Options RoleOptions
	NewName string // RENAME TO
}

// DropRole is DROP ROLE / USER / GROUP [IF EXISTS] name, ...
type DropRole struct {
	Names    []string
	IfExists bool
}

// ObjectKind is what a GRANT or REVOKE is on.
type ObjectKind uint8

// The kinds of object privileges are granted on.
const (
	ObjTopic             ObjectKind = iota // TOPIC / TABLE / nothing: topics (and the system views)
	ObjConsumer                            // CONSUMER topic.consumer
	ObjSchema                              // SCHEMA name
	ObjAllTopicsInSchema                   // ALL TOPICS / ALL TABLES IN SCHEMA name
)

// Privilege is one privilege of a GRANT or REVOKE, with the columns it is
// limited to. Name is upper case ("SELECT", "INSERT", "USAGE", ...); the
// YDB spellings SELECT ROW and UPDATE ROW arrive as SELECT and INSERT.
type Privilege struct {
	Name    string
	Columns []string
}

// ConsumerName is topic.consumer in ON CONSUMER.
type ConsumerName struct{ Topic, Consumer string }

// GrantPrivs is GRANT privileges ON objects TO roles [WITH GRANT OPTION]
// [GRANTED BY role], or (Revoke) REVOKE [GRANT OPTION FOR] privileges ON
// objects FROM roles [GRANTED BY role] [CASCADE | RESTRICT].
type GrantPrivs struct {
	Revoke bool
	// Privs is nil for ALL [PRIVILEGES].
	Privs       []Privilege
	Kind        ObjectKind
	Objects     []string       // topic or schema names (ObjTopic, ObjSchema, ObjAllTopicsInSchema)
	Consumers   []ConsumerName // ObjConsumer
	Grantees    []RoleSpec
	GrantOption bool // WITH GRANT OPTION; on REVOKE, GRANT OPTION FOR
	GrantedBy   *RoleSpec
	Cascade     bool
}

// GrantRole is GRANT role, ... TO role, ... [WITH ADMIN OPTION | WITH
// {ADMIN|INHERIT|SET} {TRUE|FALSE}, ...] [GRANTED BY role], or (Revoke)
// REVOKE [{ADMIN|INHERIT|SET} OPTION FOR] role, ... FROM role, ...
// [GRANTED BY role] [CASCADE | RESTRICT].
type GrantRole struct {
	Revoke  bool
	Roles   []string
	Members []RoleSpec
	// Admin, Inherit, Set: nil not given. On REVOKE, a non-nil option
	// means OPTION FOR that option only.
	Admin, Inherit, Set *bool
	GrantedBy           *RoleSpec
	Cascade             bool
}

// AlterDefaultPrivileges is ALTER DEFAULT PRIVILEGES [FOR ROLE r, ...]
// [IN SCHEMA s, ...] GRANT|REVOKE ... ON TOPICS|TABLES|CONSUMERS TO|FROM
// roles. Grant.Kind is ObjTopic or ObjConsumer; Grant.Objects is empty.
type AlterDefaultPrivileges struct {
	ForRoles []RoleSpec
	Schemas  []string
	Grant    GrantPrivs
}

// AlterOwner is ALTER TOPIC / TABLE [IF EXISTS] name OWNER TO role.
type AlterOwner struct {
	Topic    string
	Owner    RoleSpec
	IfExists bool
}

// ReassignOwned is REASSIGN OWNED BY role, ... TO role.
type ReassignOwned struct {
	Roles []RoleSpec
	To    RoleSpec
}

// DropOwned is DROP OWNED BY role, ... [CASCADE | RESTRICT].
type DropOwned struct {
	Roles   []RoleSpec
	Cascade bool
}

func (*CreateRole) stmtNode()             {}
func (*AlterRole) stmtNode()              {}
func (*DropRole) stmtNode()               {}
func (*GrantPrivs) stmtNode()             {}
func (*GrantRole) stmtNode()              {}
func (*AlterDefaultPrivileges) stmtNode() {}
func (*AlterOwner) stmtNode()             {}
func (*ReassignOwned) stmtNode()          {}
func (*DropOwned) stmtNode()              {}
