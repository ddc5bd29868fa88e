// Package pebblestore is the embedded backend of the store contract
// (topicstore.Store, topicstore.Stager, topicstore.EngineStatter,
// topicstore.RoleStore): it keeps topics, and the role catalog, in one
// Pebble database in one directory, fsynced before every acknowledgement. It owns the key layout (built by internal/keys), the
// committer and its group commit, the in-memory sequencer state (offsets,
// producers, positions, write meters and write-speed buckets; the state and
// the group commit's deterministic core are internal/sequencer), the
// shared-consumer windows (their records' format is internal/sharedrec;
// each window's body cache, shared_bodies.go, keeps the messages its fill
// read until an acquisition takes them, at most 2 MiB a consumer),
// retention, the splitting of partitions, staging by reference (the open
// stagings and their staged data: internal/staging) and the
// reclaiming of dropped topics' disk space (the reclaimer is
// internal/reclaim), and the file system it hands
// Pebble (sizedfs.go: write-ahead logs preallocated with their size set, so
// a commit's fdatasync does not also journal a new file size; tables being
// written go out 256 KiB at a time), and a cache of the batches short reads
// stop in (batchcache.go). What it
// promises is the
// contract's (topicstore's doc.go), checked by TestContract with
// topicstore/storetest; this page says how it keeps those promises. It uses
// the contract's pure parts as they are: the codecs, the partition layout
// and KeyHash, and the record-batch format (topicstore/record.go).
// cmd/topicgate opens it (Open); nothing else names it.
//
// # Key layout
//
// Integers are big-endian (so keys sort numerically); "/" after the prefix
// letter is literal, the rest is fixed-width binary; internal/keys builds
// every key the store writes. Data keys use the topic's ID, never its name,
// so DROP TOPIC is a DeleteRange over the ID and a topic re-created with
// the same name starts empty. The reclaimer goroutine (internal/reclaim) then
// compacts that range so the space returns; it never writes a key, and
// Close waits for it before it closes Pebble.
//
//	c/<topic name>                         catalog: JSON {Config, ID, CreatedAt, Partitions}
//	k/<topicID u64><consumer>\x00<partition u32>[<offset u64>] shared consumer: start offset (uvarint),
//	                                       or a finished message (acked/archived), or an
//	                                       unfinished message's delivery count; see internal/sharedrec
//	m/<topicID u64><partition u32><base u64> record batch, or reference record (topicstore/record.go)
//	o/<topicID u64><partition u32><consumer> consumer committed offset (uvarint)
//	p/<topicID u64><producer id>           producer: partition, max seqno, last write
//	r/<stageID u64>                        committed staging still referenced: uvarint n,
//	                                       n × (topic ID, partition, end offset) uvarints
//	t/<stageID u64><seq u64>               staged record batch payload of a transaction
//	u/roles                                the role catalog: version (u64), then the
//	                                       document (opaque; roles.go)
//	d/<key>                                a document (topicstore.Documents): version
//	                                       (u64), then the document (documents.go)
//	x/next_topic_id                        next topic ID (u64)
//	x/next_document_version                the next version a document change gets (u64)
//
// Planned prefixes (not written yet):
//
//	a/<topicID><partition u32>                      partition metadata (auto-partitioning:
//	                                                parent/children, active flag)
//
// A partition's batches are one contiguous key range: a read is a range
// scan and retention is a DeleteRange of whole batches below an offset.
//
// # Record batches
//
// What one group commit appends to one partition is stored under one key
// (split at ~32 KiB so that a read inside a batch stays cheap): a fixed
// header (base offset, count, written_at, cumulative bytes before the
// batch, CRC32C of the payload) followed by varint-encoded messages. A
// partition's byte size is its last batch's end cumulative minus its first
// batch's start cumulative, so neither startup nor sys.partitions scans
// data. A read seeks to the batch at or before its start offset (SeekLT on
// the base offset) and iterates; decoding reuses one Message, Body points
// into Pebble's buffer, and strings are allocated only when they differ from
// the previous message's.
//
// # Large transactions: staging and commit by reference
//
// A transaction that stages more than a few MiB (txn.Txn spills past its
// SpillBytes) calls StageBatch (internal/staging): its messages are validated,
// compressed and encoded on the caller's goroutine into record-batch
// payloads of ~32 KiB, one per (explicit partition, producer id) group, and
// written unsynced under t/<stageID><seq>. The stage ID is the store's, not
// the caller's transaction ID (which restarts with the process): Open
// starts numbering above every stage ID on disk. The caller keeps a small
// StagedBatch descriptor: per chunk its seq, count, bytes, CRC, codecs,
// explicit partition, producer and seqno summary (min, max, strictly
// increasing).
//
// At commit (TopicWrite.Staged, applied before the write's Messages) the
// core gives each chunk the next Count offsets of its partition — explicit
// partition, else the producer's binding (a new one round robin or on the
// explicit partition), else the group's single round-robin partition for the topic,
// exactly as for in-memory messages — and writes a reference record at
// m/<topic><partition><base>: the batch header (version byte 2: base,
// count, written_at, cumulative bytes before, CRC of the staged payload)
// followed by stage ID, seq and payload bytes. No data is copied: a commit
// writes ~60 bytes per 32 KiB staged. The partition's open inline batch is
// closed first, so offsets stay contiguous and a request's messages for a
// partition stay one run (no other writer lands inside a transaction).
// Dedup: a producer chunk whose seqnos strictly increase and start above
// the producer's max seqno (or whose producer is new) joins by reference
// and sets the max seqno to the chunk's max; otherwise (duplicates, or
// messages without seqno) the committer reads that chunk and copies its
// admitted messages inline like an ordinary write (memory: one chunk), and
// deletes the staged key in the commit batch. The commit batch also sets
// r/<stageID>: the (topic, partition, end offset) of every partition that
// references the staging. Staged writes are unsynced, but the commit's
// fsync of Pebble's sequential WAL makes them durable with it.
//
// Readers follow references transparently: Scan Gets the staged key (the
// inline path is unchanged), and finding it gone means retention or DROP
// TOPIC removed it since the scan began (skipped; anything else is
// ErrCorrupt); startup, OffsetForTime and retention only read headers,
// which reference records have too.
//
// Garbage: DiscardStaged (rollback, failed commit) deletes a transaction's
// t/ range; at Open every t/ range without an r/ record (a transaction open
// at a crash or close) is deleted. Committed staged data is deleted as a
// whole, with its r/ record, in the batch where retention cuts the last
// referencing partition past the transaction's end offset there, or where
// DROP TOPIC drops the last referencing topic; until then a partly expired
// transaction's staged data stays on disk in full.
//
// # Commit pipeline
//
//  1. Commit (caller's goroutine) validates everything — topic, partition,
//     codec in supported_codecs, body size — then compresses and encodes
//     the messages. Nothing is enqueued if any check fails.
//  2. One committer goroutine drains all queued requests (a group; when it
//     finds only one, it first yields once so that sessions already
//     runnable can join it) and runs
//     the deterministic core (internal/sequencer, State.Apply): offsets, and
//     the decisions of topicstore/decide (producer bindings, round robin on
//     first use, expiring after ProducerExpiry without writes; seqno dedup);
//     out come the batches and producer records of the group.
//  3. The committer applies the group as one Pebble batch with
//     ApplyNoSyncWait(Sync) and moves on to the next group while a second
//     goroutine (the syncer) waits for the fsync, in FIFO order.
//  4. After the sync the syncer advances each partition's visible end and
//     answers the callers. Options.PlainSync waits for the fsync in the
//     committer instead (simpler, slower).
//
// DDL (create, alter, drop, the role catalog's changes) and retention
// deletions also run on the committer goroutine, between groups, each as
// its own synced batch.
//
// # Role catalog
//
// topicstore.RoleStore's document is one record, u/roles, rewritten whole
// by each change (roles.go). The store keeps it and its version in memory
// (read at Open); SetRoles checks the version it expects, writes the
// record (the version plus one) in a synced batch on the committer
// goroutine and only then changes the memory, so Roles never shows a
// version a crash could lose. Topics' owners and access lists are part of
// their catalog records (c/), changed with them.
//
// # Write-speed limits
//
// A topic with an explicit partition_write_speed_bytes_per_second has a token
// bucket per partition (internal/sequencer's Throttle; capacity
// partition_write_burst_bytes, default one second of the speed); the default
// speed throttles nothing. The core charges the stored bytes each request
// appended to each such partition and returns, in CommitResult.Throttle, how
// long the request's most indebted partition needs to refill to zero (Kafka's
// quota debt). The commit itself is never delayed: the caller waits outside
// the store, so no group and no other partition's writer waits for a throttled
// one. The core's hook is a nil check per message (sequencer.Topic.Throttle is
// nil unless the topic is throttled); install (create, alter) and Open give a
// topic its throttle, handed on from the catalog entry it replaces so that
// ALTER keeps buckets and the cumulative throttled time
// (PartitionInfo.Throttled, TopicInfo.Throttled; in memory, zero at start).
//
// # Partition layout and auto-partitioning
//
// A topic's catalog record holds its layout (topicstore/layout.go): per
// partition, active or inactive (split; deleted once retention emptied it and
// no consumer is behind its end, retention.go), its parent and children, and
// in a keyed layout (auto-partitioning enabled) the range of the 64-bit key
// hash it owns. The core routes a keyed message (producer_id, else
// message_group_id) to the active owner of its hash, a producer keeps its
// binding while that partition is active, a write naming an inactive partition
// goes to the descendant continuing it, and the commit's check refuses an
// explicit partition that contradicts an active binding
// (ProducerPartitionError). The committer meters each partition's written
// bytes over the topic's stabilization window (split.go, with
// internal/sequencer's Meter) and, after a group, splits a 'scale_up'
// partition whose mean rate over a whole window reached the threshold: one
// synced catalog change (relayout, ddl.go), so a crash leaves the old layout
// or the new one and no group commits between. SplitPartition is the same
// change on request.
//
// # Consumer positions
//
// A consumer's committed offset per partition is the next offset it reads.
// The committer keeps all of them in memory (loaded at startup) and a
// CommitRequest's PositionUpdates are checked and applied by the core in
// the same batch as the request's writes: an update whose Expect differs
// from the current offset (counting earlier updates of the group) fails the
// whole request with ErrPositionConflict; an offset beyond the partition's
// end before the request's own writes fails with ErrOffsetOutOfRange.
// Positions reads the committer's state (it may include a commit whose
// fsync is in progress). A partition without a stored offset reads as its
// start, and so does a stored offset below the start (retention deleted what
// it pointed at). A consumer added with read_from starts at the first batch
// written at or after it (OffsetForTime, stored in the DDL batch); changing
// read_from repositions it the same way; dropping a consumer or the topic
// deletes its records; partitions added later start at 0 for everyone. A
// record is a stored position (StoredPositions): in memory a partition
// without one is sequencer.NoPosition (-1), so a committed (or read_from)
// 0 is told from none; a Forget deletes the record in the commit's batch.
//
// # Retention
//
// RunRetention (a background loop every Options.RetentionInterval) deletes
// whole batches from a partition's start: see retention.go for the rules. A
// deletion is one DeleteRange over the batch keys below the cut, applied on
// the committer with sync; the start and byte counters then derive from the
// first remaining batch header, and a fully emptied partition keeps a
// count-0 batch at its start so that a reopen recovers offsets and bytes.
// written_at never goes backwards within a process (the committer clamps its
// clock), which lets OffsetForTime and retention binary-search batch
// headers instead of reading a partition.
//
// # Notifications
//
// Changed hands out one lazily created channel per topic; the syncer closes
// it when it publishes new messages of the topic (after the fsync), and
// DropTopic closes it too. A shared consumer's manager has its own wake
// channel, closed when a step may have freed a message (a release, a lock
// handed back, an acknowledgement that lets an ordered group or a full
// window move on) or the consumer changed; AcquireAsync with Watch hands
// out both channels and the time until the earliest lock deadline or end
// of a delay, so that waiting readers never poll (shared.go).
//
// # Shared-consumer durability
//
// Acknowledgements, archives and delivery counts are per-message records under
// k/ (their format: internal/sharedrec; written by shared_persist.go). An
// acquisition's batch (its new counts) is applied with a sync requested at
// once and waited for before its rows reach the client; acknowledgements are
// applied without a sync and synced once at the caller's durability barrier
// (syncTo: a ticket per deferred batch, one empty synced WAL record covers
// every batch applied before it), so a pipeline of them shares one fsync.
//
// # Invariants
//
// Besides the contract's (contiguous offsets, all-or-nothing requests,
// durable acknowledgements):
//
//   - Scan never reads beyond the visible end, which only moves forward,
//     after the data is synced, in commit order: that is how readers never
//     see unsynced data or a gap that later fills.
//   - Dedup state is written in the same Pebble batch as the data it admits.
//   - A failed Pebble write is fatal: every waiter gets the error and the
//     store refuses further work (the in-memory state is ahead of the disk).
//   - Only this package knows Pebble keys; internal/keys builds them.
//
// Startup reads the catalog, the first and last batch header of each
// partition, the producer records (expired ones are skipped), the
// consumer positions, the role catalog, the r/ records and one seek per staged transaction
// (deleting the uncommitted ones): its cost does not depend on the amount
// of data.
package pebblestore
