// Package keys is pebblestore's key layout: the prefixes, the functions
// that build every key the store writes, and the parsing of position
// records (key and uvarint value), which both the committer and DDL
// write, and of the role catalog's one record (EncodeRoles, ParseRoles:
// its version, then the document). The layout itself, with what each
// record holds, is described in pebblestore's doc.go (# Key layout); this
// package is its one implementation.
//
// # Invariants
//
//   - Only pebblestore and its internal packages know Pebble keys; this
//     package is internal to it.
//   - Integers are big-endian and fixed-width after the prefix, so keys
//     sort numerically: a partition's batches are one contiguous range
//     (Partition(id, p) up to Batch(id, p, offset)), and a topic's or a
//     staging ID's records of one kind lie between Topic(prefix, id) and
//     Topic(prefix, id+1).
//   - Data keys use the topic's ID, never its name: DROP TOPIC deletes an
//     ID's ranges and a topic re-created with the same name starts empty.
package keys
