// Package sharedrec is the persistence format of pebblestore's shared
// consumers: the records under k/<topicID><consumer>\x00 (keys from
// internal/keys) that make a shared consumer's progress durable, and the
// functions that load them and write a step's changes to them. What the
// records mean, and when they must be synced, is topicstore/sharedcore's
// and pebblestore's (shared.go, shared_persist.go).
//
// Per partition, a start record (<partition u32> → uvarint offset: every
// message below it is finished) and per message from the start on at most
// one record (<partition u32><offset u64>): a finished state (one byte,
// acked or archived), or, for a message delivered but not finished, its
// delivery count (the available state byte, then a uvarint).
//
// # Invariants
//
//   - Load rebuilds exactly what the Write functions wrote: a partition's
//     start, and the finished states and delivery counts from the start
//     on; a message record below the start is queued for deletion, never
//     loaded.
//   - Records below a partition's start are deleted together, by one
//     range deletion from where the last one ended (from 0 after a load)
//     once the partition has StaleBatch of them, so each partition
//     keeps fewer than StaleBatch of them after each step, across
//     crashes too.
//   - A step writes only what changed: a batch is created on the first
//     record it sets or deletes (Batch), and an entry's Stored flag says
//     whether it has a record to delete when it is handed back.
//   - A record that does not decode is topicstore.ErrCorrupt, never
//     skipped.
package sharedrec
