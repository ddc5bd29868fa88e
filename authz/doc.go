// Package authz decides who may do what, from the role catalog and the
// topics' access lists a store keeps (topicstore.RoleStore, TopicConfig's
// Owner and ACL), with the meaning package acl gives them: logins
// (LOGIN, VALID UNTIL, CONNECTION LIMIT, the verifier a password is
// checked against), the privilege check of a planned statement before it
// runs, the owner's rights for DDL, and the statements that change roles
// and grants (CREATE/ALTER/DROP ROLE, GRANT, REVOKE, OWNER TO).
//
// Invariants:
//   - Every decision of a statement is made from one role document, read
//     when the statement starts (after the cluster store's read barrier,
//     so a GRANT through one gateway binds every other from their next
//     statement).
//   - A change of the role document is a compare-and-set of the whole
//     document: it is stored whole or not at all, and two concurrent
//     changes never lose one another (the loser reads again and retries).
//   - A change of a topic's grants is an AlterTopic of that topic: atomic
//     with the topic, gone with it.
//   - Superusers pass every check. So does the bootstrap identity of a
//     "trust" login that names no role (the behaviour before roles
//     existed); a login that names a role acts as that role.
//   - The package knows no SQL text and no store keys: it takes parsed
//     statements (package sql) and planned accesses (plantree.Accesses).
package authz
