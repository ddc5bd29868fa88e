// Package txn owns the lifecycle of a client transaction: its state
// (idle, open, failed), the topic writes it stages and the single commit
// request that publishes them.
//
// Invariants:
//
//   - Staged writes are invisible to every reader, the transaction itself
//     included (no read-your-own-writes for topics, as in YDB): they live in
//     the Txn (or, spilled, in the store's staging area), outside the
//     partitions, until Commit hands them to the store as one atomic,
//     synced CommitRequest.
//
//   - A transaction either publishes all it staged or nothing: Rollback,
//     a failed commit and a dropped connection discard the staging.
//
//   - A statement error inside BEGIN ... COMMIT moves the transaction to
//     the failed state; only ROLLBACK (or COMMIT, which then rolls back)
//     leaves it, as in PostgreSQL (SQLSTATE 25P02).
//
//   - The staging is bounded: a transaction stages at most maxStaged bytes
//     (Begin's argument; DefaultMaxStagedBytes, 1 GiB, when 0; a message
//     counts its body + 64 bytes); exceeding it is SQLSTATE 54000 and
//     leaves the server unharmed. topicgate serve passes --max-txn-mib.
//
//   - Memory stays bounded whatever the transaction's size: messages are
//     held in memory only up to SpillBytes (DefaultSpillBytes, 8 MiB);
//     beyond, Stage spills them to the store's Stager (encoded record
//     batches under the store's staging keys, unsynced) and keeps small
//     descriptors. Commit sends the in-memory messages and the descriptors
//     in one CommitRequest: the store links the staged batches into the
//     partitions by reference, so commit cost does not grow with the
//     staged data. Rollback, a failed commit and a dropped connection call
//     DiscardStaged; what a crash leaves behind the store deletes at start.
//
//   - Mark and RollbackTo (savepoint.go) serve SAVEPOINT and ROLLBACK TO:
//     what was staged and read after the mark is dropped and the failed
//     state cleared; a mark older than a spill is refused (0A000), since a
//     spilled batch cannot be taken apart, and the transaction stays as it
//     was.
//
//   - Admit (dedup.go) counts what an INSERT in the block will write, as
//     PostgreSQL's ON CONFLICT DO NOTHING counts what it inserted: a
//     (producer_id, seqno) already stored or already staged by the block
//     is not counted. The store decides dedup again at commit and is the
//     authority; the seqnos staged are part of a Mark.
//
// The package parses no SQL and knows no Pebble keys.
package txn
