// Package route is the route of the cluster store's batches
// (topicstore/jetstream): which connection the committer publishes an
// atomic batch on. It owns the connections pinned to the cluster's nodes,
// one per node it could reach, and what the gateway knows of the node
// that leads the stream (its leader-elected advisories and, when they are
// missing, the stream's info), so that a batch goes to the leader rather
// than being forwarded to it over a route by another node
// (docs/cluster/leader.md).
//
// It does not publish: the store's cluster I/O (jetstream's io.go) asks
// Leaders.Conn for the connection of its next batch and tells
// Leaders.Forget when a batch failed on it for a reason that is not the
// stream's refusal. What it needs of the store is its Host: the stream's
// leader as the stream's info names it.
//
// Invariants:
//
//   - It is a shortcut, never a dependency: without a live pinned
//     connection to a known leader (not yet known, its node down, a URL
//     list that names a load balancer, credentials that may not subscribe
//     to advisories) Conn returns the store's own connection, and nothing
//     of it can fail the store.
//   - A pinned connection never reconnects: when its node goes, so does
//     the connection, and it is dropped from the set.
//   - One refresh at a time looks for what is missing, at once when a
//     connection or the leader is lost and at most every second while
//     batches find no live connection to the leader; an answer of the
//     stream's info older than the last advisory heard is dropped.
//   - Nothing of it outlives Close by more than one dial or question in
//     progress, each bounded by the store's timeout.
package route
