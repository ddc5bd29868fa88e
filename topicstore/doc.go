// Package topicstore stores topics (partitioned, append-only message logs)
// in Pebble. It owns the key layout, partitions and their offsets, producer
// dedup state, codecs and, later, consumers, shared-consumer state,
// retention and auto-partitioning. It knows nothing of SQL; the rest of
// topicgate uses the Store interface of api.go and never sees a Pebble key.
//
// # Key layout
//
// Integers are big-endian (so keys sort numerically); "/" after the prefix
// letter is literal, the rest is fixed-width binary. Data keys use the
// topic's ID, never its name, so DROP TOPIC is a DeleteRange over the ID
// and a topic re-created with the same name starts empty.
//
//	c/<topic name>                         catalog: JSON {Config, ID, CreatedAt, Partitions}
//	m/<topicID u64><partition u32><base u64> record batch (see record.go)
//	p/<topicID u64><producer id>           producer: partition, max seqno, last write
//	x/next_topic_id                        next topic ID (u64)
//
// Planned prefixes (not written yet):
//
//	o/<topicID><consumer name>\x00<partition u32>   consumer committed position
//	s/<topicID><consumer>\x00<partition><offset>    shared-consumer per-message state
//	                                                (lock deadline, delivery count)
//	t/<txnID u64><seq u64>                          staged transaction record batches
//	a/<topicID><partition u32>                      partition metadata (auto-partitioning:
//	                                                parent/children, active flag)
//
// A partition's batches are one contiguous key range: a read is a range
// scan and retention will be a DeleteRange of whole batches below an offset.
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
// # Commit pipeline
//
//  1. Commit (caller's goroutine) validates everything — topic, partition,
//     codec in supported_codecs, body size — then compresses and encodes
//     the messages. Nothing is enqueued if any check fails.
//  2. One committer goroutine drains all queued requests (a group) and runs
//     the deterministic core (core.go): offsets, producer bindings (round
//     robin on first use, expiring after ProducerExpiry without writes),
//     seqno dedup; out come the batches and producer records of the group.
//  3. The committer applies the group as one Pebble batch with
//     ApplyNoSyncWait(Sync) and moves on to the next group while a second
//     goroutine (the syncer) waits for the fsync, in FIFO order.
//  4. After the sync the syncer advances each partition's visible end and
//     answers the callers. Options.PlainSync waits for the fsync in the
//     committer instead (simpler, slower).
//
// DDL (create, alter, drop) also runs on the committer goroutine, between
// groups, as its own synced batch.
//
// # Invariants
//
//   - Offsets of a partition are contiguous from its start; a request's
//     messages for one partition get consecutive offsets, in order.
//   - Scan never reads beyond the visible end, which only moves forward,
//     after the data is synced, in commit order: readers never see
//     unsynced data or a gap that later fills.
//   - Dedup state is written in the same batch as the data it admits.
//   - A request is all-or-nothing; a failed Pebble write is fatal: every
//     waiter gets the error and the store refuses further work.
//   - Only this package knows Pebble keys.
//
// Startup reads the catalog, the first and last batch header of each
// partition and the producer records (expired ones are skipped): its cost
// does not depend on the amount of data.
package topicstore
