// Package topicstore is the store contract: the interface through which
// the rest of topicgate stores topics (partitioned, append-only message
// logs, the YDB topic model), and the promises every backend keeps. It
// knows nothing of SQL and nothing of any storage engine: it imports no
// backend (go list -deps topicgate/topicstore names no Pebble and no NATS
// package), so executor, txn and planner depend on it alone.
//
// Backends: topicstore/pebblestore (embedded, one process, the default)
// and topicstore/jetstream (a NATS JetStream cluster: docs/cluster/).
// Both run the contract suite topicstore/storetest, which states the
// promises below as tests, and both claim every optional part of it
// (storetest.Run). What a commit decides (a producer's dedup and binding,
// where a message goes, whether a position may move, and the words of
// every refusal) is written once, in topicstore/decide, which both call;
// what a shared consumer decides, once in topicstore/sharedcore.
//
// # What the package holds, and why
//
// One line per file:
//
//   - doc.go: this overview and the promises every backend keeps.
//   - api.go: Store, the optional Stager, Readier, ReadBarrier and EngineStatter; types, errors, defaults.
//   - shared_api.go: SharedStore, a shared consumer's acquire, ack, release and reject, and their types.
//   - groups.go: the optional GroupCoordinator, through which gateways divide a streaming consumer's partitions.
//   - gather.go: the optional Gatherer: a question every live gateway answers (sys.sessions), and cancels.
//   - documents.go: the optional Documents: small named documents replaced by compare-and-set (Kafka groups' membership).
//   - cluster_stats.go: the optional ClusterStatter and ClusterStats, a cluster store's figures for /metrics.
//   - config.go: what a valid TopicConfig is and what its fields mean (NormalizeConfig, SplitThreshold, ...).
//   - layout.go: a topic's partition layout, its splits, and KeyHash, which routes a key to a partition.
//   - meter.go: the write meter auto-partitioning splits by (WriteMeter, SplitDue): arithmetic only.
//   - throttle.go: the write-speed token bucket (WriteBucket, ThrottleLimits, MaxThrottle): arithmetic only.
//   - codec.go: the message codecs (ParseCodec, Compress, Decompress); readers decompress with Message.Decode.
//   - lzo1x.go: an LZO1X-1 compressor for the lzop codec (github.com/anchore/go-lzo decompresses).
//   - record.go: the record-batch format (header, message entries with their Kafka keys and headers, reference records, CRC32C) and its decoder.
//   - message.go: a message's size as MaxMessageSize limits it, the checks every backend applies to it, Message.Clone and CloneIn (bodies copied into a shared arena).
//   - chunks.go: a message's stored form (EncodeTail) and the Chunker that cuts a staging into StagedChunks.
//   - refs.go: ScanRefs and ReadRefs, which read the messages a shared consumer picked, one Scan per partition.
//
// Why these are here and not in a backend: each is a contract type, or
// code that keeps no backend state and reads no clock (ScanRefs reads
// only through the Store's own Scan), that both backends must apply the
// same way, so there is one copy. Every backend must refuse the
// same configs with the same errors (config.go); a key must land in the
// same partition whichever backend holds the topic (layout.go); a
// partition must split at the same rate and be throttled by the same
// debt (meter.go, throttle.go: the caller passes the time); the store
// compresses on write and readers decompress, so both sides need the
// codecs; the Pebble backend stores one record batch per key, and the
// JetStream one (one stream message per batch) reuses the format, its
// checksums and the staged chunks rather than inventing others. The
// optional interfaces are found by type assertion (a backend that lacks
// one need not fake it), and EngineStats and ClusterStats are here
// although only an LSM, or only a cluster store, fills them: the executor
// asks any store for them and must not import a backend to name the type.
// The meters and buckets themselves, like everything else with backend
// state (keys, batches in flight, goroutines, caches, the shared-consumer
// windows), live in the backend.
//
// # What every backend promises
//
// Topics. A topic has partitions 0..n-1 (MinActivePartitions, default 1);
// partition IDs are never reused. CreateTopic of an existing name gives
// ErrTopicExists; every operation on a missing topic gives
// ErrTopicNotFound. AlterTopic applies its callback to a copy and stores
// the result atomically (the name cannot change); partitions are added by
// raising MinActivePartitions and never removed (ErrPartitionsDecrease).
// DropTopic deletes the topic and everything of it; a topic re-created
// with the same name gets a new ID and starts empty. After Close, writes,
// scans, DDL and shared-consumer operations give ErrClosed (Close itself
// may be called again).
//
// Commits. A CommitRequest is validated whole before anything is written
// (topic, partition, codec in supported_codecs, body, Kafka key
// and headers at most MaxMessageSize together, a null body without
// bytes, position updates, acks) and is then applied atomically
// and durably: its writes, its position updates and its acknowledgements
// all happen or none does, and once Commit returns nil nothing of it is
// ever lost. A partition's offsets are contiguous from its start; a
// request's messages for one partition get consecutive offsets, in order.
// Readers never see a commit in part, a gap that later fills, or data
// that could still be lost. A failed Commit says what was stored:
// ErrUnavailable only when nothing of it was, ErrOutcomeUnknown when the
// store could not learn in time whether it was (it is then stored whole
// or not at all, never in part).
//
// Producers. A message with a producer_id and a seqno at or below the
// producer's max seqno is a duplicate: skipped, counted in
// WriteResult.Duplicates. One without seqno gets max+1. Dedup state is
// written atomically with the data it admits. A new producer is bound to a
// partition (the explicit partition of its first message, else its key's
// partition in a keyed layout, else round robin) and stays there while the
// partition is active; a message naming another partition fails the
// request with ProducerPartitionError. A producer without writes for its
// topic's TopicConfig.ProducerExpiry (producer_inactivity_period; else the
// store's, DefaultProducerExpiry) is forgotten: binding and seqnos; a
// retention run removes what the store kept of it.
// The messages of one commit group (every TopicWrite of every request a
// store commits together) that name no partition and have no key (no
// producer and, in a keyed layout, no message group) share one partition
// per topic, chosen round robin.
//
// Positions. A consumer's committed offset is the next offset it reads.
// A PositionUpdate with Expect >= 0 fails the request with
// ErrPositionConflict unless the committed offset equals Expect (updates
// of one request see the earlier ones); an offset outside [0, end] fails
// with ErrOffsetOutOfRange, and SetPosition requires [start, end]. A
// position below the partition's start reads as the start. A consumer
// added with read_from starts at OffsetForTime(read_from); changing
// read_from repositions it; dropping it deletes its positions; partitions
// added later start at 0 for every consumer. StoredPositions lists only
// the positions a consumer has of its own (committed, or read_from's
// initial ones; a committed 0 is one), and a PositionUpdate with Forget
// forgets one: the partition reads from its start and StoredPositions
// omits it until the next commit (Kafka's OffsetFetch answers -1 there).
//
// Reads. Scan returns the visible messages of a range in offset order,
// clamped to [start, end), each with its Kafka key, headers and null body
// as written (a nil key or header value told apart from an empty one;
// the store keeps the key and does not route by it); MinWrittenAt leaves out exactly the messages
// written before it. written_at never goes backwards within a partition,
// and OffsetForTime(t) is, per partition, the first offset written at or
// after t (the end if none). Changed's channel closes when new messages of
// the topic become visible (and at DropTopic and Close).
//
// Shared consumers. A message is handed out to one session at a time,
// under a lock until a deadline; acks, archives, dead-letter moves and
// delivery counts are durable before they are confirmed or shown.
// Releases, expired locks and the dead-letter policy, delays
// (max(message delay, receive_message_delay)) and keep_messages_order
// behave as SharedStore documents; acquisitions are fair across partitions
// and, within one, across message groups.
//
// Retention. RunRetention deletes from a partition's start what is older
// than retention_period or beyond retention_storage_mb, unless an
// important consumer has not committed it or a consumer with an
// availability_period has not committed it and it is younger than that
// period. A backend may keep more than that (Pebble deletes whole record
// batches), never less. An emptied partition keeps its offsets. An
// inactive partition emptied by retention, with no consumer behind its
// end, is marked Deleted.
//
// Auto-partitioning. In a keyed layout (auto_partitioning_strategy
// 'scale_up' or 'paused') a producer's messages, else a message group's,
// go to the active partition owning KeyHash of the key; SplitPartition
// turns an active partition into two children owning the halves of its
// range, in one atomic change; a write naming the inactive parent goes to
// the child continuing it, and a producer bound to it follows its key. A
// 'scale_up' partition written at SplitThreshold or more for a whole
// StabilizationWindow splits by itself, up to max_active_partitions.
// WriteRates reports each partition's rate over that window.
//
// Staging (Stager, optional). Staged messages are validated like a
// commit's and invisible until a commit names their StagedBatch; they then
// join with the commit's atomicity, before the write's own messages, each
// batch once. DiscardStaged drops what a transaction staged and did not
// commit.
//
// Write speed. A topic that sets partition_write_speed_bytes_per_second
// explicitly has a token bucket per partition (throttle.go; the default
// speed is only auto-partitioning's reference, and
// partition_write_burst_bytes alone throttles nothing); a commit past it
// is never delayed in the store but returns in CommitResult.Throttle how
// long the caller must hold its acknowledgement back.
package topicstore
