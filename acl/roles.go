package acl

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is a role of pg_authid.
type Role struct {
	Name                                                                    string
	OID                                                                     uint32
	Superuser, CreateRole, CreateDB, Inherit, Login, Replication, BypassRLS bool
	// ConnLimit is the connection limit; -1 is none.
	ConnLimit int
	// ValidUntil is when the password expires; the zero time is never.
	ValidUntil time.Time
	// Password is a stored verifier, "SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>"
	// or "md5<32 hex>", or "" for none; never a plaintext password.
	Password string
}

// Membership is a row of pg_auth_members: Member was granted Role by
// Grantor, with PostgreSQL 16's options of that grant.
type Membership struct {
	Role, Member, Grantor string
	Admin, Inherit, Set   bool
}

// DefaultACL is one pg_default_acl entry (ALTER DEFAULT PRIVILEGES FOR
// ROLE Role ... ON <Kind>): the whole ACL a new object of Role's starts
// with, its owner's entry included.
type DefaultACL struct {
	Role string
	// Kind is 'r' for topics (tables) and 'c' for consumers.
	Kind byte
	ACL  []Item
}

// Kinds of DefaultACL.
const (
	KindTopic    byte = 'r'
	KindConsumer byte = 'c'
)

// Doc is the role catalog: the document a topicstore.RoleStore keeps.
type Doc struct {
	Roles   []Role
	Members []Membership
	// SchemaOwner owns schema public. A fresh Doc has PostgreSQL 15's
	// "pg_database_owner"; "" means the bootstrap superuser.
	SchemaOwner string
	// SchemaACL is the ACL of schema public; a fresh Doc has PostgreSQL
	// 15's {pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}
	// (USAGE for PUBLIC, not CREATE).
	SchemaACL []Item
	Defaults  []DefaultACL
	// NextOID is the OID the next role gets, from FirstNormalObjectId.
	NextOID uint32
}

// OIDs of roles PostgreSQL fixes.
const (
	BootstrapOID        uint32 = 10    // BOOTSTRAP_SUPERUSERID
	FirstNormalObjectID uint32 = 16384 // FirstNormalObjectId
)

// Predefined roles: always present, never stored.
var predefined = []Role{
	{Name: "pg_database_owner", OID: 6171, Inherit: true, ConnLimit: -1},
	{Name: "pg_read_all_data", OID: 6181, Inherit: true, ConnLimit: -1},
	{Name: "pg_write_all_data", OID: 6182, Inherit: true, ConnLimit: -1},
	{Name: "pg_monitor", OID: 3373, Inherit: true, ConnLimit: -1},
	{Name: "pg_read_all_settings", OID: 3374, Inherit: true, ConnLimit: -1},
	{Name: "pg_read_all_stats", OID: 3375, Inherit: true, ConnLimit: -1},
	{Name: "pg_stat_scan_tables", OID: 3377, Inherit: true, ConnLimit: -1},
	{Name: "pg_signal_backend", OID: 4200, Inherit: true, ConnLimit: -1},
}

// predefinedMembers are the memberships among predefined roles that
// PostgreSQL's initdb creates (granted by the bootstrap superuser).
var predefinedMembers = []Membership{
	{Role: "pg_read_all_settings", Member: "pg_monitor", Inherit: true, Set: true},
	{Role: "pg_read_all_stats", Member: "pg_monitor", Inherit: true, Set: true},
	{Role: "pg_stat_scan_tables", Member: "pg_monitor", Inherit: true, Set: true},
}

// Predefined returns the predefined roles.
func Predefined() []Role { return slices.Clone(predefined) }

// PredefinedMembers returns the memberships among predefined roles, with
// Grantor "" standing for the bootstrap superuser.
func PredefinedMembers() []Membership { return slices.Clone(predefinedMembers) }

// NewDoc returns a fresh role catalog with PostgreSQL 15's defaults and
// no roles.
func NewDoc() *Doc {
	return &Doc{
		SchemaOwner: "pg_database_owner",
		SchemaACL: []Item{
			{Grantee: "pg_database_owner", Grantor: "pg_database_owner", Privs: uint32(Usage | Create)},
			{Grantee: "", Grantor: "pg_database_owner", Privs: uint32(Usage)},
		},
		NextOID: FirstNormalObjectID,
	}
}

// Clone returns a deep copy of d.
func (d *Doc) Clone() *Doc {
	c := *d
	c.Roles = slices.Clone(d.Roles)
	c.Members = slices.Clone(d.Members)
	c.SchemaACL = slices.Clone(d.SchemaACL)
	c.Defaults = slices.Clone(d.Defaults)
	for i := range c.Defaults {
		c.Defaults[i].ACL = slices.Clone(c.Defaults[i].ACL)
	}
	return &c
}

// Role returns the role named name, a predefined one included. The
// pointer is into d for a stored role (change it to alter the role) and a
// copy for a predefined one.
func (d *Doc) Role(name string) (*Role, bool) {
	for i := range d.Roles {
		if d.Roles[i].Name == name {
			return &d.Roles[i], true
		}
	}
	for _, r := range predefined {
		if r.Name == name {
			return &r, true
		}
	}
	return nil, false
}

// RoleByOID returns the role with oid, a predefined one included.
func (d *Doc) RoleByOID(oid uint32) (*Role, bool) {
	for i := range d.Roles {
		if d.Roles[i].OID == oid {
			return &d.Roles[i], true
		}
	}
	for _, r := range predefined {
		if r.OID == oid {
			return &r, true
		}
	}
	return nil, false
}

// isPredefined reports whether name is a predefined role.
func isPredefined(name string) bool {
	return slices.ContainsFunc(predefined, func(r Role) bool { return r.Name == name })
}

// Bootstrap returns the bootstrap superuser's name: the role with OID 10
// (see CreateBootstrap), else the superuser with the lowest OID, else "".
func (d *Doc) Bootstrap() string {
	best := ""
	var bestOID uint32
	for _, r := range d.Roles {
		if r.OID == BootstrapOID {
			return r.Name
		}
		if r.Superuser && (best == "" || r.OID < bestOID) {
			best, bestOID = r.Name, r.OID
		}
	}
	return best
}

// CreateBootstrap creates the bootstrap superuser as initdb does: OID 10,
// every attribute, no connection limit. It fails when a role with OID 10
// or with name exists.
func (d *Doc) CreateBootstrap(name string) (*Role, error) {
	if _, ok := d.RoleByOID(BootstrapOID); ok {
		return nil, ErrRoleExists(d.Bootstrap())
	}
	r := Role{Name: name, OID: BootstrapOID, Superuser: true, CreateRole: true, CreateDB: true,
		Inherit: true, Login: true, Replication: true, BypassRLS: true, ConnLimit: -1}
	return d.addRole(r)
}

// CreateRole adds r, giving it the next free OID. r is stored as given:
// set ConnLimit to -1 and Inherit to true for CREATE ROLE's defaults. It refuses an existing
// name (42710), and the reserved names "public", "none" and those
// starting with "pg_" (42939). Permissions are CheckCreateRole's; after a
// non-superuser's CREATE ROLE call CreatedBy.
func (d *Doc) CreateRole(r Role) (*Role, error) {
	if r.Name == "public" || r.Name == "none" || IsReservedName(r.Name) {
		return nil, ErrReservedName(r.Name)
	}
	if d.NextOID < FirstNormalObjectID {
		d.NextOID = FirstNormalObjectID
	}
	for d.oidUsed(d.NextOID) {
		d.NextOID++
	}
	r.OID = d.NextOID
	added, err := d.addRole(r)
	if err == nil {
		d.NextOID++
	}
	return added, err
}

func (d *Doc) oidUsed(oid uint32) bool {
	_, ok := d.RoleByOID(oid)
	return ok
}

func (d *Doc) addRole(r Role) (*Role, error) {
	if r.Name == "" || len(r.Name) >= nameDataLen || !utf8.ValidString(r.Name) {
		return nil, &Error{Code: "42602", Message: "invalid role name \"" + r.Name + "\""}
	}
	if _, ok := d.Role(r.Name); ok {
		return nil, ErrRoleExists(r.Name)
	}
	if !r.ValidUntil.IsZero() {
		r.ValidUntil = r.ValidUntil.UTC().Truncate(time.Microsecond)
	}
	d.Roles = append(d.Roles, r)
	return &d.Roles[len(d.Roles)-1], nil
}

// DropRole removes the role and its memberships both ways. It refuses a
// predefined role or the bootstrap superuser (2BP01, PostgreSQL pins
// them), and a role that still granted memberships or has or is named in
// default privileges (2BP01 "role ... cannot be dropped because some
// objects depend on it"); the access lists of topics and consumers are the
// caller's to check (Mentions).
func (d *Doc) DropRole(name string) error {
	i := slices.IndexFunc(d.Roles, func(r Role) bool { return r.Name == name })
	if i < 0 {
		if isPredefined(name) {
			return pinnedError(name)
		}
		return ErrRoleNotFound(name)
	}
	if d.Roles[i].OID == BootstrapOID {
		return pinnedError(name)
	}
	if err := d.dependents(name); err != nil {
		return err
	}
	d.Roles = slices.Delete(d.Roles, i, i+1)
	d.Members = slices.DeleteFunc(d.Members, func(m Membership) bool { return m.Role == name || m.Member == name })
	return nil
}

func pinnedError(name string) *Error {
	return &Error{Code: CodeDependentObjects, Message: "cannot drop role " + quoteIdent(name) + " because it is required by the database system"}
}

// dependents returns DROP ROLE's refusal when the Doc still needs name:
// memberships it granted (between other roles), default privileges it
// has or is named in, schema public's owner or ACL.
func (d *Doc) dependents(name string) error {
	var lines []string
	for _, m := range d.Members {
		if m.Grantor == name && m.Role != name && m.Member != name {
			lines = append(lines, "privileges for membership of role "+m.Member+" in role "+m.Role)
		}
	}
	if d.SchemaOwner == name {
		lines = append(lines, "owner of schema public")
	} else if Mentions(d.SchemaACL, name) {
		lines = append(lines, "privileges for schema public")
	}
	for _, def := range d.Defaults {
		if def.Role == name {
			lines = append(lines, "owner of default privileges on new "+kindWord(def.Kind)+" belonging to role "+name)
		} else if Mentions(def.ACL, name) {
			lines = append(lines, "privileges for default privileges on new "+kindWord(def.Kind)+" belonging to role "+def.Role)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &Error{Code: CodeDependentObjects, Message: "role \"" + name + "\" cannot be dropped because some objects depend on it", Detail: strings.Join(lines, "\n")}
}

// kindWord names a DefaultACL kind as PostgreSQL's object descriptions do.
func kindWord(kind byte) string {
	if kind == KindConsumer {
		return "sequences"
	}
	return "relations"
}

// quoteIdent quotes name as quote_identifier does for messages that print
// a role without quotes when it is a plain lower-case identifier.
func quoteIdent(name string) string {
	safe := name != "" && (name[0] >= 'a' && name[0] <= 'z' || name[0] == '_')
	for i := 0; i < len(name) && safe; i++ {
		c := name[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if safe {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
