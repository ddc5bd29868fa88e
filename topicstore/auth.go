package topicstore

import (
	"context"
	"errors"
	"slices"
)

// Authorization data the stores keep. The stores know no SQL and decide
// nothing about privileges: they keep a topic's owner and access list in
// its catalog record (so CreateTopic and AlterTopic change them atomically
// with the rest of the topic, and dropping a topic or a consumer drops its
// grants), and the role catalog as one opaque document replaced whole by
// compare-and-set (RoleStore). Package acl gives both their meaning.

// ACLItem is one entry of an access list, as PostgreSQL's aclitem: the
// privileges Grantor gave Grantee, and which of them Grantee may grant on.
// Grantee "" is PUBLIC. Privs and GrantOptions are bit sets whose bits
// package acl defines.
type ACLItem struct {
	Grantee      string `json:"e,omitempty"`
	Grantor      string `json:"o"`
	Privs        uint32 `json:"p"`
	GrantOptions uint32 `json:"g,omitempty"`
}

// ColumnACL is the access list of one column of a topic's relation
// (GRANT SELECT (col, ...) ON TOPIC).
type ColumnACL struct {
	Column string    `json:"c"`
	ACL    []ACLItem `json:"a"`
}

// ErrRolesConflict: SetRoles found a newer role catalog than the one its
// change was based on (another session or gateway changed it); read it
// again and retry.
var ErrRolesConflict = errors.New("role catalog changed concurrently")

// RoleStore is implemented by stores that keep the role catalog: one
// document (roles, memberships, schema privileges, default privileges,
// encoded by package acl), bounded by the roles that exist, never by the
// number of changes ever made.
type RoleStore interface {
	// Roles returns the current document and its version; version 0 and a
	// nil document mean no document was ever stored. Versions only grow.
	// On the cluster store it is the gateway's view: after a ReadBarrier
	// it includes every change acknowledged before the barrier began.
	// doc is shared and read-only (the store never changes it: a new
	// document replaces it), so a caller checking the version on every
	// statement copies nothing.
	Roles() (doc []byte, version uint64)
	// SetRoles stores doc durably when the stored version is still expect
	// (0: none stored yet) and returns the new version; otherwise it
	// stores nothing and returns ErrRolesConflict.
	SetRoles(ctx context.Context, expect uint64, doc []byte) (uint64, error)
}

// Configer is implemented by stores that return a topic's definition
// alone, without its partitions' state (which Topic gathers under each
// partition's lock): what a privilege check on every statement reads.
// The returned config is read-only: its slices may be shared.
type Configer interface {
	TopicConfig(name string) (TopicConfig, error)
}

// PartitionCounter is implemented by stores that tell how many
// partitions a topic has (inactive ones included: the length of
// TopicInfo.Partitions) without gathering their state: what a statement
// that names partitions checks them against, on every execution.
type PartitionCounter interface {
	PartitionCount(name string) (int, error)
}

// cloneACL deep-copies an access list.
func cloneACL(acl []ACLItem) []ACLItem { return slices.Clone(acl) }

// cloneColumnACLs deep-copies column access lists.
func cloneColumnACLs(cols []ColumnACL) []ColumnACL {
	cols = slices.Clone(cols)
	for i := range cols {
		cols[i].ACL = cloneACL(cols[i].ACL)
	}
	return cols
}
