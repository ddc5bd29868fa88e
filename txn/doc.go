// Package txn owns the lifecycle of a client transaction: its state
// (idle, open, failed), the topic writes it stages and the single commit
// request that publishes them.
//
// Invariants:
//   - Staged writes are invisible to every reader, the transaction itself
//     included (no read-your-own-writes for topics, as in YDB): they live in
//     the Txn, outside the partitions, until Commit hands them to the store
//     as one atomic, synced CommitRequest.
//   - A transaction either publishes all it staged or nothing: Rollback,
//     a failed commit and a dropped connection discard the staging.
//   - A statement error inside BEGIN ... COMMIT moves the transaction to
//     the failed state; only ROLLBACK (or COMMIT, which then rolls back)
//     leaves it, as in PostgreSQL (SQLSTATE 25P02).
//   - The staging is bounded (MaxStagedBytes); exceeding it is SQLSTATE
//     54000 and leaves the server unharmed.
//
// The package parses no SQL and knows no Pebble keys.
package txn
