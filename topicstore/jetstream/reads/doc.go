// Package reads is the cluster store's reads (topicstore/jetstream): what
// a gateway answers of topicstore.Store from its fold's state and the
// record batches that state indexes, without a commit.
//
// It owns:
//
//   - Scan (scan.go): the batches of a range found in the fold's index,
//     which it copies a slice at a time (RecsFrom, ScanSlice) so that a
//     read at the head of a long backlog copies what it reads, each batch
//     then fetched (Record) outside the lock, a staged chunk it references
//     joined in, its CRC checked and its entries decoded;
//   - the record cache (cache.go): the record batches and staged chunks
//     this gateway wrote or read, by stream sequence, up to a byte budget
//     (Options.CacheBytes), least recently used out first; Record fills it
//     with what it fetches, and the store's committer with the record
//     batches of every batch the stream acknowledged (Reads.Cache);
//   - the lookups (lookups.go): producers, positions, offsets for a time
//     and the channel a topic's next change closes, each read whole under
//     the host's lock.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state (Config.Fold) is read, whether the store is closed, and
// the store's cluster I/O for a record batch the cache lacks (GetRecord:
// in a gateway a direct get, then the stream's leader, asked again while
// the stream cannot answer; in the store's simulation its scheduler's), so
// that the simulation drives the reads as it drives the commits.
//
// Invariants: the fold's state is only read here, and only under the
// host's lock, which is never held across a fetch; a cached message is
// never stale, because a stream sequence names one message for the
// stream's life and a message never changes (one that retention or a
// sweep removed is no longer indexed, so never asked for, and ages out);
// the cache's slices are shared and never modified; nothing is cached
// that the cluster did not return or acknowledge.
package reads
