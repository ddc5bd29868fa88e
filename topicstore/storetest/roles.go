package storetest

import (
	"bytes"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

// The authorization data a store keeps (topicstore/auth.go): the role
// catalog, one opaque document replaced by compare-and-set, and the
// owner and access lists that ride in a topic's catalog record.
var roleTests = []subtest{
	{"CompareAndSet", needs(Roles, testRolesCAS)},
	{"Document", needs(Roles, testRolesDocument)},
	{"Reopen", needs(Roles, testRolesReopen)},
	{"Closed", needs(Roles, testRolesClosed)},
	{"TopicACLs", testTopicACLs},
	{"ConsumerACLDropped", testConsumerACLDropped},
}

// roles reads the role catalog.
func (e *env) roles() (string, uint64) {
	doc, v := e.roleStore().Roles()
	return string(doc), v
}

// setRoles stores doc over version expect and returns the new version.
func (e *env) setRoles(expect uint64, doc string) uint64 {
	e.t.Helper()
	v, err := e.roleStore().SetRoles(ctx, expect, []byte(doc))
	require.NoError(e.t, err)
	require.Greater(e.t, v, expect, "a new version is above the one it replaced")
	return v
}

// testRolesCAS: nothing is stored at first; SetRoles over version 0
// stores; a change based on an older version is refused and changes
// nothing; versions grow.
func testRolesCAS(e *env) {
	t := e.t
	rs := e.roleStore()
	doc, v := rs.Roles()
	require.Nil(t, doc, "nothing stored yet")
	require.Zero(t, v)

	v1 := e.setRoles(0, "one")
	got, gv := e.roles()
	require.Equal(t, "one", got)
	require.Equal(t, v1, gv)

	_, err := rs.SetRoles(ctx, 0, []byte("stale"))
	require.ErrorIs(t, err, topicstore.ErrRolesConflict, "a document is stored: version 0 is stale")
	got, gv = e.roles()
	require.Equal(t, "one", got, "the refused change stored nothing")
	require.Equal(t, v1, gv)

	v2 := e.setRoles(v1, "two")
	require.Greater(t, v2, v1)
	for _, stale := range []uint64{0, v1, v2 + 1} {
		_, err = rs.SetRoles(ctx, stale, []byte("stale"))
		require.ErrorIs(t, err, topicstore.ErrRolesConflict, "expect %d, stored %d", stale, v2)
	}
	got, gv = e.roles()
	require.Equal(t, "two", got)
	require.Equal(t, v2, gv)
	v3 := e.setRoles(v2, "three")
	require.Greater(t, v3, v2, "versions only grow")
}

// testRolesDocument: the document is opaque bytes, tens of kilobytes at
// most, kept as given, across a reopen too: binary bytes survive, an
// empty document is a document (its version is not 0) and replaces a
// large one whole, and neither the caller's slice nor the returned one
// is the store's.
func testRolesDocument(e *env) {
	t := e.t
	rs := e.roleStore()
	doc := make([]byte, 48<<10)
	for i := range doc {
		doc[i] = byte(i*7 + i/251) // every byte value, NULs and newlines included
	}
	in := bytes.Clone(doc)
	v1, err := rs.SetRoles(ctx, 0, in)
	require.NoError(t, err)
	in[0]++ // the caller's slice is the caller's
	got, gv := rs.Roles()
	require.Equal(t, v1, gv)
	require.True(t, bytes.Equal(doc, got), "the document as given (%d bytes back of %d)", len(got), len(doc))

	e.reopen()
	rs = e.roleStore()
	got, gv = rs.Roles()
	require.Equal(t, v1, gv)
	require.True(t, bytes.Equal(doc, got), "the document as given, after a reopen")

	v2, err := rs.SetRoles(ctx, v1, []byte{})
	require.NoError(t, err)
	require.Greater(t, v2, v1)
	got, gv = rs.Roles()
	require.Equal(t, v2, gv)
	require.Empty(t, got, "an empty document")
	e.reopen()
	got, gv = e.roleStore().Roles()
	require.Equal(t, v2, gv)
	require.Empty(t, got, "an empty document replaced a large one, after a reopen")
}

// testRolesReopen: the document and its version survive closing and
// reopening the store, and changes go on from them.
func testRolesReopen(e *env) {
	t := e.t
	v1 := e.setRoles(0, "one")
	v2 := e.setRoles(v1, "two")
	e.reopen()
	got, gv := e.roles()
	require.Equal(t, "two", got)
	require.Equal(t, v2, gv)
	_, err := e.roleStore().SetRoles(ctx, v1, []byte("stale"))
	require.ErrorIs(t, err, topicstore.ErrRolesConflict)
	v3 := e.setRoles(v2, "three")
	e.reopen()
	got, gv = e.roles()
	require.Equal(t, "three", got)
	require.Equal(t, v3, gv)
}

// testRolesClosed: after Close, SetRoles gives ErrClosed, as DDL does.
func testRolesClosed(e *env) {
	rs := e.roleStore()
	v := e.setRoles(0, "one")
	require.NoError(e.t, e.s.Close())
	_, err := rs.SetRoles(ctx, v, []byte("two"))
	require.ErrorIs(e.t, err, topicstore.ErrClosed)
}

// Access lists of the tests below (the bits are package acl's; the
// stores keep them as given).
var (
	aclA = []topicstore.ACLItem{
		{Grantee: "alice", Grantor: "owner", Privs: 0b101, GrantOptions: 0b1},
		{Grantor: "owner", Privs: 0b1}, // PUBLIC
	}
	aclB     = []topicstore.ACLItem{{Grantee: "bob", Grantor: "alice", Privs: 0b10}}
	colACLs  = []topicstore.ColumnACL{{Column: "body", ACL: []topicstore.ACLItem{{Grantee: "carol", Grantor: "owner", Privs: 0b1}}}}
	consACLc = []topicstore.ACLItem{{Grantee: "carol", Grantor: "owner", Privs: 0b1000}}
	consACLd = []topicstore.ACLItem{{Grantee: "dave", Grantor: "owner", Privs: 0b1000, GrantOptions: 0b1000}}
)

// testTopicACLs: a topic's owner, access lists and its consumers' access
// lists round-trip through CreateTopic, through an AlterTopic that
// changes only access lists (nothing else of the topic moves, positions
// included), and through reopening the store; what Topic returns is a
// copy.
func testTopicACLs(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, Owner: "owner", ACL: aclA, ColumnACLs: colACLs,
		Consumers: []topicstore.ConsumerConfig{{Name: "c", ACL: consACLc}, {Name: "d", ACL: consACLd}}})
	cfg := e.info("t").Config
	require.Equal(t, "owner", cfg.Owner)
	require.Equal(t, aclA, cfg.ACL)
	require.Equal(t, colACLs, cfg.ColumnACLs)
	require.Equal(t, consACLc, cfg.Consumers[0].ACL)
	require.Equal(t, consACLd, cfg.Consumers[1].ACL)

	cfg.ACL[0].Privs = 0 // a copy: the store's record is not touched
	cfg.Consumers[0].ACL[0].Privs = 0
	cfg.ColumnACLs[0].ACL[0].Grantee = "mallory"
	cfg = e.info("t").Config
	require.Equal(t, aclA, cfg.ACL, "Topic returns a copy")
	require.Equal(t, colACLs, cfg.ColumnACLs)
	require.Equal(t, consACLc, cfg.Consumers[0].ACL)

	e.commit("t", at(1, body("a"), body("b"))...)
	require.NoError(t, e.s.SetPosition(ctx, "t", "c", 1, 1))
	want := topicstore.CloneConfig(cfg)
	want.ACL = aclB
	want.Consumers[0].ACL = consACLd
	e.alter("t", func(c *topicstore.TopicConfig) {
		c.ACL = topicstore.CloneConfig(topicstore.TopicConfig{ACL: aclB}).ACL
		c.Consumers[0].ACL = topicstore.CloneConfig(topicstore.TopicConfig{ACL: consACLd}).ACL
	})
	require.Equal(t, want, e.info("t").Config, "only the access lists changed")
	require.Equal(t, map[int32]int64{0: 0, 1: 1}, e.positions("t", "c"), "an access list is no position change")
	require.Equal(t, []int64{0, 2}, e.ends("t"))

	e.reopen()
	require.Equal(t, want, e.info("t").Config, "the access lists survive a reopen")
	require.Equal(t, map[int32]int64{0: 0, 1: 1}, e.positions("t", "c"))
}

// testConsumerACLDropped: a consumer dropped by AlterTopic takes its
// access list with it; one added again by that name starts without one,
// across a reopen too.
func testConsumerACLDropped(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", Owner: "owner", ACL: aclA,
		Consumers: []topicstore.ConsumerConfig{{Name: "c", ACL: consACLc}, {Name: "d", ACL: consACLd}}})
	e.alter("t", func(c *topicstore.TopicConfig) { c.Consumers = c.Consumers[:1] })
	cfg := e.info("t").Config
	require.Len(t, cfg.Consumers, 1)
	require.Equal(t, consACLc, cfg.Consumers[0].ACL)
	require.Equal(t, aclA, cfg.ACL, "the topic's own list stays")

	e.alter("t", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "d"})
	})
	cfg = e.info("t").Config
	require.Equal(t, "d", cfg.Consumers[1].Name)
	require.Nil(t, cfg.Consumers[1].ACL, "d added again starts without the dropped one's grants")
	e.reopen()
	cfg = e.info("t").Config
	require.Len(t, cfg.Consumers, 2)
	require.Equal(t, consACLc, cfg.Consumers[0].ACL)
	require.Nil(t, cfg.Consumers[1].ACL)
	require.Equal(t, "owner", cfg.Owner)
}
