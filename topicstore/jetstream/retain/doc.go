// Package retain is the cluster store's retention (topicstore/jetstream):
// what topicstore.Store's RunRetention does to the partitions, moving
// each one's start past what its topic no longer keeps and purging what
// is below it from the stream.
//
// It owns:
//
//   - the cut (retain.go: Run, cutOf): for each partition, under the
//     host's lock, the first record batch to keep, which is the first
//     written within the topic's retention period and, with
//     retention_storage_mb, the first of the newest batches that fit in
//     it; never past an important consumer's position, nor past what a
//     consumer with an availability period has not committed while that
//     period lasts;
//   - the move (apply): one atomic batch of the partition's new start, a
//     rollup conditional on the start subject's last sequence, and a
//     guard for each position the cut was decided from, conditional on
//     that position's subject's last sequence, so that a consumer that
//     rewinds meanwhile wins and the next run decides again; once the
//     fold applied it, the purge of the partition's record batches below
//     the new start and the deletion of the staged chunks only they
//     referenced;
//   - the choice of the inactive partitions that retention emptied and
//     every consumer read to their end (Drained), which the store marks
//     deleted by a catalog change.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state (Config.Fold) is read, and its cluster I/O (publish an
// atomic batch, wait until the fold applied it, purge a subject, delete a
// message), the same path the commit protocol takes, so that the store's
// simulation could drive it through its scheduler.
//
// Invariants: the package changes the fold's state only through the
// stream; a partition's start only moves forward, and only by a publish
// that fails if its start or any position it was decided from changed
// since it was read; the last record batch of a partition is never purged
// (its subject's last sequence keeps appends contiguous), so a start at
// the end makes the partition empty rather than gone; nothing is purged
// before the fold applied the start that hides it. Any gateway may run
// it: purging what is below a start twice is harmless.
package retain
