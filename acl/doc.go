// Package acl gives topicgate's authorization data its meaning, as
// PostgreSQL 16 defines it: privileges and access lists (aclitem), roles
// and their memberships, the checks of role management, default
// privileges, and password verifiers.
//
// The package owns the rules, never the storage or the statements: it is
// pure (no goroutines, no I/O, no SQL parsing, no clock except where a
// caller passes a time), and every function takes its inputs and returns
// its result. The stores keep the data it interprets: a topic's owner and
// access list (topicstore.TopicConfig.Owner, ACL, ColumnACLs), a
// consumer's access list (topicstore.ConsumerConfig.ACL), and the role
// catalog as one opaque document (topicstore.RoleStore) that Doc encodes
// and decodes.
//
// Invariants:
//
//   - Names are identities. A role is known by its name everywhere an
//     access list or a membership mentions it (PostgreSQL uses OIDs; here a
//     rename rewrites the mentions, see ReplaceRole). Grantee "" is PUBLIC.
//     Role OIDs exist only for the catalog views (pg_authid, regrole).
//   - A Doc is bounded by the live roles: it holds one entry per role, per
//     membership grant, per default-privilege entry and the ACL of schema
//     public, never a history of changes. DropRole removes a role's
//     memberships both ways; Decode refuses a document that mentions a
//     role that does not exist.
//   - The predefined roles (pg_read_all_data, pg_monitor, ...) are always
//     present and never stored; Role and the membership questions see
//     them.
//   - Access lists keep PostgreSQL's order: Grant merges into the entry of
//     the same (grantee, grantor) pair or appends one at the end, so
//     FormatACL prints what PostgreSQL prints for relacl after the same
//     statements.
//   - Errors that a client sees are *Error values carrying PostgreSQL's
//     SQLSTATE, message and detail, which the executor forwards as they
//     are.
package acl
