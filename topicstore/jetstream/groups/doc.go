// Package groups is the cluster store's read-session groups
// (topicstore.GroupCoordinator, implemented by topicstore/jetstream's
// Store through it): which gateways have read sessions of a streaming
// consumer, and what those hold, kept in the stream and folded like
// everything else (fold.Groups), so that the gateways divide the
// consumer's partitions (consume/cluster.go).
//
// It owns:
//
//   - the announcements (groups.go): what the executor wants announced
//     in each group (Announce), and the view of a group that every
//     gateway folds the same (Members);
//   - the loop (loop.go): this gateway's heartbeat and member records,
//     published and renewed on a timer, a farewell at Close, and the purge
//     of what dead gateways left.
//
// The records:
//
//   - A member record, subject <prefix>.m.<topic id>.<consumer hex>.<gateway>,
//     is a gateway's announcement in one group: its session count
//     (Tg-Sessions), the partitions they hold (Tg-Held), the group epoch
//     it computed them from (Tg-Saw), and the record that set its session
//     count (Tg-Since; absent: this record does). A group's epoch is the
//     highest Since of its records, the same on every gateway because
//     every gateway folds the same records.
//   - A heartbeat, subject <prefix>.h.<gateway>, says until when the
//     gateway lives (Tg-Until, by the store's Clock). A member counts while
//     its gateway's heartbeat has not expired by the reader's clock.
//
// Why a heartbeat per gateway rather than an expiry in each member record:
// renewals then cost one publish per gateway per renewal interval, however
// many consumers it reads, and a member record is written only when the
// gateway's sessions or what they hold change. The gateway renews its
// heartbeat at start and then renewals times per TTL for as long as
// it runs (the store's Gather waits for the gateways it shows alive), a
// publish conditional on the subject's last sequence like every change;
// at a graceful stop it publishes one that has expired already; one that
// dies, or loses the cluster, stops renewing and drops out of every group
// once the TTL has passed, and the others take its share. The TTL must
// outlast a stream leader election (5-8 s measured: topicstore/jetstream's
// doc.go) or every election would move every partition: DefaultTTL is
// 30 s.
//
// Announce only records what the executor wants announced; one goroutine
// (Loop) publishes the latest announcement of each group, in order
// (a subject never has two publishes in flight), and retries what
// failed at the next renewal. At each renewal it purges the older messages
// of the subjects it published on since the last one, so that the stream
// keeps one record per (group, gateway) and one heartbeat per gateway, not
// their history; not at each publish, because a purge is a replicated
// operation of the whole stream and readers joining and leaving all the
// time would make many (under load the replicas then lag, and a read's
// direct get answered by one that lags finds no message). What
// a dead gateway left is purged by the survivors one TTL after it expired
// (sweep), up to the last sequence they folded of it, so a gateway
// that was only cut off and comes back is not purged again: it publishes
// its heartbeat and then all its records anew, as a new membership.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state and this package's announcements are read and changed,
// and the store's cluster I/O (in a gateway the store's NATS connection;
// every publish conditional on its subject's last sequence).
//
// Invariants: the fold state is read and changed only under the host's
// lock, and of it only the groups' part is changed here (a member's
// expiry noted, what a dead gateway or a dropped topic left forgotten);
// the heartbeat, the purges and every publish but Announce's bookkeeping
// belong to the one Loop goroutine (and Start, before it runs); a
// subject never has two publishes in flight.
package groups
