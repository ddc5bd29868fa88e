// Package staging is pebblestore's staging by reference
// (topicstore.Stager): the stagings of large transactions that are open
// on this store, and their staged data on disk. It owns:
//
//   - the registry of open stagings by the caller's transaction ID, each
//     with the staging ID the store gave it (sid) and its next chunk
//     number, and the claim a commit holds on it (Claim, Settle);
//   - writing a transaction's chunks (Stage: validated with Commit's
//     check, which the Host gives, encoded into record-batch payloads of
//     ~32 KiB and written unsynced under t/<sid><seq>) and deleting them
//     (Discard);
//   - reading a chunk back for the committer's dedup fallback (the load
//     it gives the core, sequencer.State.Load);
//   - Open's recovery (Recover): the r/ records loaded into the core's
//     references, and the t/ ranges no r/ record names (transactions
//     open at a crash or close) deleted;
//   - the deletions that follow the core's release of references
//     (Release: rewritten r/ records, and a staging's t/ range and r/
//     record once no partition references it).
//
// The keys are internal/keys'; which partition references which staging
// is the core's (internal/sequencer, core_staged.go); the format of
// staging and of the reference records is described in pebblestore's
// doc.go (# Large transactions). What it needs of the store is its Host:
// the store's failure (ErrClosed once closed) and the check Commit
// applies to a message of a topic.
//
// # Invariants
//
//   - Staging IDs never repeat: Recover starts numbering above every sid
//     on disk, whatever the caller's transaction IDs (which restart with
//     the process) are.
//   - A claimed staging is touched by nothing but its commit: Discard
//     leaves it, a second commit naming it is refused, and Settle either
//     forgets it (committed: its data is the partitions' now) or makes it
//     discardable again.
//   - Staged writes are unsynced; the commit batch that references them is
//     synced, and Pebble's write-ahead log is sequential, so its fsync
//     makes them durable too.
//   - Stage and Discard never use a closed DB: they hold Stagings' use
//     lock while they do, and Close takes it before closing the DB.
package staging
