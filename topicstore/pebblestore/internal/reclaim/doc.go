// Package reclaim is pebblestore's reclaimer: it gives the disk space of
// dropped topics back. A DROP TOPIC deletes a topic's messages with one
// range tombstone, which frees nothing until a compaction reads the data
// it covers; the reclaimer runs that compaction at once, over each
// dropped topic's message range, one range at a time (reclaim.go says
// why Pebble's own compactions are not enough).
//
// It owns the queue of key ranges to compact (Topic: a dropped topic's;
// Unknown: at Open, the ranges of topic IDs the catalog does not know,
// topics dropped before a crash or a shutdown let their compaction run),
// the loop that compacts them (Run), and the count of ranges compacted
// (Done, the store's EngineStats). What it needs of the store is its
// Host: a manual compaction of a key range. Key ranges are built by
// internal/keys.
//
// # Invariants
//
//   - It never writes a key: a compaction only drops data a tombstone
//     already deleted (and rewrites live data sharing its files).
//   - Run returns when quit is closed, after the compaction in progress;
//     the store waits for it before it closes Pebble, so Compact never
//     runs on a closed DB. What is left in the queue is found again by
//     Unknown at the next start (an already reclaimed range finds no
//     files and costs nothing).
package reclaim
