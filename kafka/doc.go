// Package kafka is topicgate's Kafka protocol door: it frames Kafka
// requests, decodes and encodes them with github.com/twmb/franz-go/pkg/kmsg,
// and answers them from the same topics the PostgreSQL door (package wire)
// serves, through the topicstore contract and the authz checks. It sits
// beside wire, not behind it: a Kafka request never becomes SQL text, and
// the package knows no SQL, no plans and no store keys. What a Kafka client
// sees of a topic (partitions, offsets, record batches) is the topic
// itself: every gateway is broker 0 and the leader of every partition, and
// a Kafka offset is the topic's offset.
//
// # Pieces
//
//   - server.go: Server owns its listeners and connections (one goroutine
//     each); Close ends them all, Shutdown lets each finish the request it
//     is answering. CheckListen refuses an address beyond loopback
//     unless SASL is required.
//   - frame.go: a request frame (a 4-byte big-endian size, then the
//     request header v1 or v2 and the body) read from the socket and its
//     header decoded; a response framed with its header (v0 for
//     ApiVersions always, v1 with tagged fields for flexible versions).
//   - conn.go: one connection's loop: read a frame, answer it, write the
//     whole answer, read the next. The frame's buffer is read into again
//     by the next request, and a decoded request's byte fields alias it:
//     a handler copies what it keeps past its answer (a group's member
//     metadata and assignments, a transaction's staged records).
//   - connview.go: the open connections as sys.sessions shows them
//     (Conns: number, role, client id, address, since, the API answered
//     or last answered) and CloseConn (pg_terminate_backend of one).
//   - groupview.go: the groups as sys.kafka_groups shows them, each
//     member's assignment decoded (sys.consumers.kafka_member).
//   - apiversions.go: the APIs and version ranges this door implements
//     (Supported), which ApiVersions advertises and the loop enforces.
//   - metadata.go (with FindCoordinator), produce.go, fetch.go,
//     listoffsets.go: the APIs.
//   - producers.go: idempotent producers. InitProducerId hands out ids
//     from a durable counter (the offsets of ProducerIDTopic); each
//     (Kafka producer id, partition) is the topicgate producer
//     "kafka/<id>/<partition>" with seqno epoch·2³² + sequence (package
//     kproducer spells the mapping), so the
//     store's dedup keeps Kafka's exactly-once rules, and the door answers
//     DUPLICATE_SEQUENCE_NUMBER, OUT_OF_ORDER_SEQUENCE_NUMBER and
//     INVALID_PRODUCER_EPOCH as a broker does.
//   - transactions.go, txnapi.go: transactional producers. A
//     transactional id's epoch is registered in the store (the seqno of
//     producer "txn/<id>" of ProducerIDTopic, raised by InitProducerId on
//     any gateway) and its producer id derived from the id; an open
//     transaction is a txn.Conn block of this gateway (Config.Txns, the
//     SQL door's manager) that Produce stages transactional batches in and
//     TxnOffsetCommit the group's positions; EndTxn commits it in one
//     store commit fenced on the registration (topicstore.ProducerFence)
//     or rolls it back; a timeout rolls it back.
//   - grouproute.go: on a cluster (a topicstore.Gatherer store), the
//     gateway that coordinates each group: rendezvous hashing of the
//     group over the gateways with a Kafka door that answer a Gather;
//     group operations run there, through the store's Ask, and an
//     unreachable coordinator is NOT_COORDINATOR.
//   - group.go, groupops.go: the group coordinator of the classic
//     protocol, in the gateway's memory: members, generations, leader,
//     protocol, assignments, and rebalances on join, leave, session
//     timeout (time.AfterFunc, injectable) and rebalance timeout.
//   - groupstore.go: each group's membership as a document of the store
//     (topicstore.Documents), written in the background after each
//     completed rebalance and deleted when the group empties, each write
//     conditional on the version the coordinator read or wrote last;
//     loaded by a coordinator that does not hold the group (a restart, a
//     coordinator move) at its first request, and by a sweep for groups
//     nobody asks for any more.
//   - groupapi.go: JoinGroup (KIP-394's MEMBER_ID_REQUIRED from v4),
//     SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups and
//     DeleteGroups (ALTER TOPIC ... DROP CONSUMER on every topic of the
//     group, each checked before any is dropped; one store change per
//     topic, so a store failure midway is answered with what was done).
//   - offsets.go: OffsetCommit, OffsetFetch and OffsetDelete. A group
//     G's offsets are the positions of the consumer G of each topic
//     (created, not important, at the group's first commit to it, with
//     ALTER TOPIC's checks), committed in one synced store commit;
//     OffsetFetch answers the stored ones (topicstore's
//     StoredPositions), -1 where there is none, and OffsetDelete
//     forgets them (PositionUpdate.Forget), so -1 is answered again.
//   - retention.go: offsets retention. The consumers the door creates
//     for groups are marked (ConsumerConfig.Origin "kafka", UsedAt
//     renewed by commits every tenth of the retention); ExpireGroups,
//     run every tenth of Config.OffsetsRetention, drops those unused
//     that long whose group has no members.
//   - batch.go, compress.go: record batches (magic 2) decoded, their
//     CRC-32C checked and their records decompressed (gzip, snappy framed
//     or raw, lz4 frame, zstd), and messages encoded as uncompressed
//     record batches for Fetch, each record written into the batch as
//     the store's scan yields it (batchWriter).
//   - admin.go, admin_ops.go, admin_configs.go: the admin APIs.
//     CreateTopics is SQL's CREATE TOPIC (authz.PrepareCreate: CREATE on
//     schema public, the creator owns the topic), DeleteTopics DROP TOPIC
//     and CreatePartitions ALTER TOPIC's partition growth (the owner's,
//     authz.CheckOwner); DescribeConfigs shows, read-only, the Kafka
//     configs a topic maps to (retention.ms, retention.bytes,
//     max.message.bytes, cleanup.policy, message.timestamp.type) and
//     broker 0's; DescribeCluster names the one broker.
//   - admin_unsupported.go: the error answer to an API or version outside
//     Supported.
//   - sasl.go: SaslHandshake and SaslAuthenticate (and the raw tokens
//     that follow a SaslHandshake v0): PLAIN checked against the role's
//     stored verifier, SCRAM-SHA-256 through internal/scram (the
//     PostgreSQL door's exchange), then authz's login checks (Admit).
//     Once authenticated the connection acts as the role.
//   - errors.go: store errors mapped to Kafka error codes.
//   - metrics.go: the requests counted by API (requests, answers with an
//     error code, connections closed on a request, latency) and
//     WriteMetrics, their Prometheus text for /metrics.
//
// # Invariants
//
//   - Each connection's requests are answered in the order they came, one
//     at a time, as a Kafka broker does (it mutes a connection while it
//     answers a request): a long-polling Fetch holds the requests behind
//     it on its connection.
//   - A frame larger than Config.MaxFrameBytes, shorter than a request
//     header, or a header that does not decode closes the connection
//     without an answer; nothing of it was acted on.
//   - A request for an API or version outside Supported is answered:
//     ApiVersions with UNSUPPORTED_VERSION and the supported list (in a v0
//     response every client can read), any other API kmsg can encode at
//     that version with its response there, every error code
//     UNSUPPORTED_VERSION and its lists empty; the connection goes on.
//     An API key or version kmsg does not know closes the connection (no
//     answer can be encoded).
//   - An answer is built whole before a byte of it is written: nothing is
//     half-written, and a request whose handler panicked closes its
//     connection (logged with the stack) while the server lives on.
//   - A Produce commits each partition's batch durably (one synced
//     topicstore commit for the request) before it answers acks=1 or -1;
//     a batch that does not decode, fails its CRC or holds a record over
//     topicstore.MaxMessageSize writes nothing of its partition.
//   - A transaction's records are in no partition before its EndTxn
//     commit, which publishes them and moves its groups' positions in one
//     synced store commit, or nothing of it (a newer epoch of its
//     transactional id registered anywhere fails it whole): no control
//     records, and a reader never waits behind an open transaction.
//   - The door keeps no state a restart loses but open transactions and
//     a rebalance completed in the last moment before a crash:
//     everything else it answers comes from the store. Members of a
//     restarted or moved coordinator go on at their generation (the
//     group is loaded); those of a generation the store missed rejoin
//     once; a transactional producer whose transaction is gone is told
//     INVALID_PRODUCER_ID_MAPPING, aborts and initializes again.
//     On a cluster each group has one coordinating gateway (grouproute.go),
//     which every other gateway runs its members' group requests on.
//   - Every produce and fetch passes authz's checks (INSERT and SELECT on
//     the topic) for the connection's identity; an offset commit or fetch
//     also USAGE on the group's consumer (an offset delete too), and
//     creating or dropping that consumer ALTER TOPIC's (owning the
//     topic). The identity is the role a SASL
//     exchange authenticated; with Config.RequireSASL a connection sends
//     nothing but ApiVersions and the SASL APIs before that (anything
//     else closes it), without it a connection that does not
//     authenticate acts as Config.User (the bootstrap superuser a
//     PostgreSQL "trust" login gets), so the door then listens on
//     loopback only (CheckListen).
package kafka
