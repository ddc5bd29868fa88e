// Package jetstream is topicgate's store on a NATS JetStream cluster
// (nats-server 2.12+, client nats.go v1.55; docs/cluster/): Store
// implements topicstore.Store, Stager, GroupCoordinator, RoleStore and
// Documents and
// passes the whole contract suite (storetest). It owns:
//
//   - the layout: one stream (DefaultStream, R3 by default) holding the
//     catalog (c) and topic numbers (cn, the subpackage catalog), record
//     batches in the embedded store's format (d),
//     producers (p) and their expiry notices (e, producers.go),
//     positions (o), retention starts (r), guards (g),
//     staged chunks (t), shared-consumer windows (s), read-session members
//     and heartbeats (m, h), each gateway's chain of commit markers,
//     resolutions and sweep fences (f), wide transactions' decisions (x),
//     the maintenance lease (l), snapshot points and notices (n), the
//     role catalog (a, the subpackage catalog) and documents (y, one
//     subject per key, read from the stream's leader and never folded:
//     documents.go), each
//     on its own subjects (fold/subjects.go; the headers they carry:
//     fold/layout.go);
//   - the fold: a gateway's whole state (the subpackage fold: the state,
//     what each message does to it, the snapshot's encoding and digest)
//     is a fold of the stream's headers in stream order, fed by one
//     ordered consumer (fold.go; filled from any replica when it stalls),
//     which tells the gateway what concerns it alone through hooks
//     (fold_hooks.go); nothing else changes it, so every gateway
//     converges on the same state and rebuilds it at start, from the
//     newest snapshot of what record batches made of it when there is one
//     (the subpackage snapshot: an object store bucket beside the
//     stream; a digest at each snapshot's point checks that the gateways
//     agree);
//   - the commit: a request prepared (commit.go), grouped by one committer
//     goroutine (committer.go) and planned (the subpackage plan: its
//     checks and routing on topicstore/decide, its record batches, the
//     shared consumers' steps) into one atomic batch per group, every
//     message conditional on its subject's last sequence
//     (a multi-key compare-and-set), so offsets stay contiguous, a
//     (producer, seqno) is decided once and positions move only from where
//     they were read; the batch is the whole commit, so there is nothing to
//     roll forward; a commit returns once the fold has applied it (read
//     your writes), which the committer does itself from the batch it
//     published once the fold has everything before it (waitOwn), and
//     otherwise, when a later message replaced one of the batch's on its
//     subject before the fold got it (another gateway's state of the same
//     partition: the fold skips the deleted message and shows the subject
//     as before the batch), after the fold reached the stream's end; a
//     group's messages without a producer share one partition per topic
//     (sticky), and the committer may hold a group up to
//     Options.CommitDelay for the sessions that commit steadily and have
//     not joined it (pace.go); a batch that stored nothing is published
//     again until its requests' deadline (Options.CommitTimeout), so an
//     election is a delay;
//   - outcomes in doubt (the subpackage chain): every batch has a
//     witness, its first record batch or else a marker first in it on the
//     gateway's chain, whose links each name their predecessor, so a
//     batch whose answer never came is resolved by publishing a message
//     expecting the same predecessor; what stays unknown past the
//     deadline is ErrOutcomeUnknown, and nothing of it (its stagings) is
//     discarded until the fold decides it (the fold's hooks tell the
//     chain, fold_hooks.go);
//   - wide transactions (the subpackage wide): a commit too large for
//     one batch is published as intents, held aside by every fold and
//     holding their topics, then decided by one message on its own
//     subject, expected empty; the aborts of those whose batch failed or
//     whose gateway died; the retirement of their decisions once no
//     gateway can need them; the committer hands it a wide request, and
//     it leaves to the committer what follows a batch stored (wide.Commit,
//     host_doubt.go);
//   - the cluster I/O of all of the above goes through clusterIO (io.go):
//     natsIO in a gateway, a seeded scheduler's in the simulation
//     (sim_test.go), which drives the same code through every order of
//     lost acks, late proposals, crashes and stalls, with shared-consumer
//     workers whose every hand-out is checked (sim_shared_test.go);
//   - the route of a batch (the subpackage route): the committer
//     publishes on a connection pinned to the node that leads the stream
//     (one per node it reached, the leader told by the stream's info and
//     its leader-elected advisories, which host.go asks for it), so a
//     batch is not forwarded over a route by another node; without a live
//     one, on the store's own connection;
//   - gathering (gather.go): a question every live gateway answers over
//     core NATS (topicstore.Gatherer: sys.sessions across gateways);
//   - shared consumers' steps planned with the commits (plan/shared.go)
//     on this gateway's caches of their windows (plan.SharedCaches, filled
//     by queue, whose doc says their states' layout), staging (stage.go),
//     what retention leaves to the store (retention.go) and the direct
//     gets of record batches behind the reads (fetch.go);
//   - the rooms beside the commit protocol, each a subpackage: the topic
//     catalog (catalog: catalog changes published as records conditional
//     on the name's subject, drops and the purge of what a dropped topic
//     leaves, splits and write rates, the role catalog
//     (topicstore.RoleStore); the Store's topic methods delegate
//     to it in topics.go, and host_catalog.go gives it what host.go does
//     not), the reads
//     (reads: Scan and the other reads of the fold's state, and the record
//     cache of the batches this gateway wrote or read, by stream sequence,
//     so that reads of recent data need no direct get; the committer
//     fills it), shared consumers (queue: topicstore.SharedStore on
//     sharedcore, each call a step through the committer, on this
//     gateway's caches of their windows, plan.SharedCaches, which it
//     fills), retention (retain: each partition's new start and the
//     purge below it), outcomes in doubt (chain) and wide transactions
//     (wide), both above, read-session groups (groups) and maintenance
//     (maintain: its schedule, the maintenance lease, the sweep of dead
//     gateways' staged chunks behind a fence, the check that the nodes
//     sync every write, from their monitoring endpoints); they run on the
//     store's lock and cluster I/O through host.go (and host_queue.go:
//     the committer, for the shared consumers' steps; host_doubt.go: what
//     the chain and wide transactions need besides), which implements
//     what each of them says it needs of its host (and gives maintenance
//     the store's jobs it schedules), so that they read, publish and wait
//     for the fold the way the commit protocol does (and in the
//     simulation through its scheduler).
//
// Invariants: no gateway state that the stream cannot rebuild (this
// gateway's open stagings, batches in doubt and caches aside); no publish
// that is not conditional where a concurrent one could contradict it; no
// chunk a committed record (or an undecided intent) references is ever
// swept, and no staging is deleted while a commit naming it is in doubt; a
// commit is acknowledged only when a quorum stored it and this gateway
// folded it, answered ErrUnavailable only when nothing of it was stored,
// and ErrOutcomeUnknown otherwise.
//
// The primitives it stands on (atomic batch publish, JetStream error
// codes, connecting and checking a cluster) are the subpackage jsext's.
//
// Subpackages: fold, plan, chain, catalog, reads, queue, retain, wide, groups,
// maintain, route, snapshot and jsext (above); natsnode runs real nats-server processes
// built from the version go.mod pins (tool directive); jstest gives a test
// its own cluster; jsbench measures the engine's ceiling (also
// `tg-cluster bench`).
//
// # Verified on a real 3-node cluster, R3 file streams (nats-server 2.15.2)
//
// Each fact names the test that shows it (jstest unless said otherwise).
//
//   - A committed batch lands whole at consecutive sequences; an uncommitted
//     one is invisible (staged on the leader, dropped after 10s):
//     TestAtomicBatchAllOrNothing. Batches of concurrent writers through
//     different nodes never interleave: TestAtomicBatchesDoNotInterleave.
//   - A batch that lost a message (a gap in Nats-Batch-Sequence) is refused
//     at commit, err_code 10176 "atomic publish batch is incomplete", nothing
//     stored: TestAtomicBatchGapReported. jsext.PublishAtomic publishes all but the
//     commit without a reply, so a dropped message surfaces this way.
//   - Per-subject compare-and-set: a batch one of whose
//     Nats-Expected-Last-Subject-Sequence checks fails is refused whole with
//     err_code 10071 "wrong last sequence: N" (N = that subject's real last
//     sequence); an expectation on a subject the batch already wrote is
//     refused with 10164 "wrong last sequence" (no N);
//     Nats-Expected-Last-Subject-Sequence-Subject lets a message carry the
//     check of a subject it does not write: TestBatchExpectedSubjectSeqRejectsWhole.
//   - Nats-Expected-Last-Sequence on a batch's first message makes appends
//     contiguous: of two writers that read the same head the second gets
//     10071 "wrong last sequence: <head>" and retries at the new head; on any
//     other message of a batch it is refused with 10164:
//     TestBatchExpectedLastSequenceContiguous.
//   - No batch spans two streams: the other stream sees a stray message of
//     an unknown batch, the committing one a gap, the commit gets 10176 and
//     neither stream stores anything: TestBatchSpanningTwoStreams. Hence
//     one stream for everything (the layout above), so that a commit over
//     several partitions and topics is one atomic batch (wide
//     transactions aside).
//   - KV (R3): Create is create-only and Update(rev) a CAS, both refused with
//     10071 (nats.go: ErrKeyExists, ErrKeyRevisionMismatch); a watch wakes
//     2-5ms after an update through another node, and an UpdatesOnly watch
//     may also deliver an update acknowledged just before it started (its
//     consumer can start on a replica that lags): compare revisions; with LimitMarkerTTL a
//     per-key TTL (KeyTTL, 1s) expires the key at 1.00s with a marker the
//     watch sees (KeyValuePurge); a lease is renewed by a CAS publish on
//     $KV.<bucket>.<key> carrying a new Nats-TTL (nats.go's Update takes no
//     TTL), and then expires that TTL after the renewal: TestKVRevisionsTTLAndWatch.
//   - Killing the stream leader: publishes get no answer (the client's
//     timeout, context.DeadlineExceeded) until the survivors elect a leader,
//     5.0-7.8s over 6 runs (RAFT election timeouts); a killed follower
//     costs nothing. With two of three
//     killed, every publish waits out the caller's whole timeout (2s and 5s
//     measured, 15s in a row) with DeadlineExceeded: the server never
//     answers, so the store must bound each publish and report the cluster
//     unavailable. A restarted node is healthy 0.1-6.3s later and publishes
//     work within 0.25s of that: TestPublishWithNodesDown. The JetStream
//     meta leader killed: a new one after 4.1-8.1s (natsnode
//     TestClusterLifecycle); meanwhile a stream with a live leader takes
//     publishes at once (~1ms) while a stream create times out:
//     TestMetaLeaderDown. So topic DDL, not writes, depends on the meta
//     leader.
//   - The fold's ordered consumer is an R1 consumer on one node: when that
//     node dies nats.go notices after two missed heartbeats, and when the
//     gateway's connection moves to another node it creates a new
//     consumer, which needs the meta leader (4-8s after a kill of it).
//     Meanwhile waitApplied fills the fold from batched direct gets, which
//     any current replica answers (TestFoldFillsWhenConsumerStalls;
//     cmd/topicgate TestClusterMetaLeaderDown, TestClusterFollowerDown:
//     only INSERTs in flight on a connection to the killed node fail).
//   - A direct get may be answered by a replica that does not hold the
//     message yet (seen after a stream leader kill and restart: 10037);
//     Scan then asks the leader (cmd/topicgate TestClusterCrash).
//   - Two gateways writing one partition meet 10164 on most contended
//     commits; a short random back-off and a new plan settle them
//     (TestGatewaysContendForOnePartition).
//   - Nats-Msg-Id in a batch: a retried batch whose ids are stored is
//     refused whole with 10201 (a single publish is deduplicated silently
//     instead); Nats-Expected-Last-Msg-Id is refused in a batch (10177):
//     TestBatchMsgIDs. So batch retries are made idempotent by the
//     expected-sequence checks, and a 10201 means "already applied".
//   - jsext.Check refuses no JetStream (the server answers 503 err_code 10076),
//     Debian's nats-server 2.9.10 (run for real when installed), an
//     unreachable URL list: TestCheckRefusesNoJetStream,
//     TestCheckRefusesOldServer, TestCheckRefusesUnreachable, TestVersionAtLeast.
//   - jsext.Connect tells refused credentials (jsext.ErrRefused: nats.ErrAuthorization,
//     for a wrong user:password in a URL, no credentials, or a .creds file
//     of an account the operator never signed) from TLS failures (jsext.ErrTLS:
//     an unknown authority, a host name the certificate does not name, TLS
//     asked of nodes that offer none); nats.go reconnects to the nodes the
//     cluster announced with the same credentials and TLS configuration:
//     jstest TestSecureNodes, cmd/topicgate TestClusterSecureNodes and
//     TestClusterSecureFailover (one node's tls:// URL, operator mode).
//   - A partition's first record batch in the stream may start past the
//     offsets retention purged, and each batch carries the partition's
//     bytes ever written (Tg-Cum), so a gateway started after a purge
//     agrees with the others: TestGatewayStartsAfterRetention. A message
//     the fold cannot apply fails every later waitApplied (commits, reads'
//     syncs, Open) with that error, rather than leaving a view that stopped
//     following the stream: TestFoldErrorRefuses.
//   - ClusterStats asks the stream's leader (STREAM.INFO) at each /metrics
//     scrape: every gateway reports the same stream figures, and a killed
//     follower shows as not current about 6s later (cmd/topicgate
//     TestClusterMetrics).
//
// Server limits on atomic batches (2.15 defaults, per node in jetstream {
// limits { batch { ... } } }): 1000 messages a batch, 50 open batches a
// stream, 1000 a server, 10s without traffic abandons a batch; wider
// commits are wide transactions (jetstream/wide).
// An expectation on a subject with a publish still being
// proposed is refused with 10164 rather than checked, so writers of one
// subject must not pipeline expectations.
package jetstream
