// Package txn is the transaction manager: it owns every transaction of
// every session, its lifecycle and failed state, the topic writes it
// stages, the shared-consumer messages it holds, the one commit path and
// the one mapping of store errors to SQLSTATEs.
//
// The pieces, CockroachDB connExecutor style:
//
//   - Manager (manager.go) is engine-wide: it numbers transactions,
//     counts commits, rollbacks, conflicts and commit errors (/metrics),
//     and reaches the store only through Committer, a narrow interface
//     that any topicstore.Store satisfies (the executor passes its store
//     to NewManager). Of its methods the package calls Commit (the one
//     commit path, and commitEach's one-by-one position commits of an
//     at-least-once read), ReleaseSession and ReleaseUndelivered (held.go's
//     release, their one caller); it never calls
//     Committer.Producer: Admit takes its producer lookup as an argument
//     (ProducerLookup; the executor passes its store's Producer). If the
//     store is also a topicstore.Stager (NewManager asks by type
//     assertion), large transactions spill to it; otherwise everything
//     staged stays in memory.
//   - Conn (conn.go) is one session's state machine: Autocommit,
//     ImplicitBlock (a multi-statement query or a pipeline, up to Sync) or
//     ExplicitBlock (BEGIN ... COMMIT/ROLLBACK). Every statement runs in a
//     transaction: the block's, or in autocommit one of its own
//     (Statement), so an autocommit INSERT, an INSERT ... SELECT from a
//     consumer, a COPY and an autocommit consumer read commit exactly as a
//     block does, through commit, the one path every transaction that
//     publishes, moves a position or acknowledges ends in. Guard is the
//     failed-state check (25P02); End commits or rolls back a block; a
//     COMMIT of a failed block rolls back.
//     The session that owns a Conn gives it a Listener (Manager.Conn): the
//     Conn asks it before every commit reaches the store (CheckCommit: the
//     executor's check that the partitions read are still the session's)
//     and tells it once when each transaction is over, committed or rolled
//     back (Ended), so the executor never compares transactions to learn
//     that one ended.
//   - held.go: the shared-consumer messages an explicit block (or an
//     autocommit INSERT ... SELECT) acquired; COMMIT acknowledges them in
//     the same CommitRequest, ROLLBACK releases them, ROLLBACK TO
//     SAVEPOINT releases those acquired since the savepoint. It is also
//     the one place any message a session acquired goes back to the queue
//     (release): a rollback's, a savepoint's, the executor's for rows that
//     never reached the client (Conn.Release: the first ones as delivery
//     attempts, the rest undelivered), and every lock of the session on
//     each shared consumer it acquired from (Acquiring) when it closes.
//   - errors.go: StoreError and CommitError, the one mapping of store
//     errors to SQLSTATEs, used by planner and executor too: a commit the
//     store did not store is 57P03 (retry), one it could not say about is
//     08007 (stored whole or not at all).
//
// What is not a transaction, on purpose: topic DDL and UPDATE
// sys.consumers act at once and refuse to run inside a block (25001);
// shared-consumer actions on messages the block did not acquire (ack,
// release, reject, extend) act at once, as in Kafka share groups and SQS,
// with per-message outcomes.
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
//   - A transaction is over when commit returns, whatever it returned:
//     nothing of it can be committed twice, and a commit of a failed
//     transaction is ErrFailed, never a silent success.
//
//   - An autocommit consumer read whose rows reached the client commits
//     at least once (Txn.AtLeastOnce): a position another session moved
//     since the read keeps the other's value; the rest move.
//
//   - A statement error inside BEGIN ... COMMIT moves the transaction to
//     the failed state; only ROLLBACK (or COMMIT, which then rolls back)
//     leaves it, as in PostgreSQL (SQLSTATE 25P02).
//
//   - The staging is bounded: a transaction stages at most maxStaged bytes
//     (Begin's argument; DefaultMaxStagedBytes, 16 GiB, when 0; a message
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
//     DiscardStaged, except a commit whose outcome the store could not
//     learn (ErrOutcomeUnknown, 08007): what it staged is the store's
//     until it learns; what a crash leaves behind the store deletes at
//     start.
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
