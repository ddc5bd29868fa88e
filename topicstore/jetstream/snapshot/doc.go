// Package snapshot is the cluster store's snapshots of its fold
// (topicstore/jetstream): what lets a gateway start in bounded time on a
// stream that holds millions of retained record batches.
//
// It owns:
//
//   - writing one (write.go: Maybe, Write): by the maintenance lease
//     holder once the stream has grown enough since the last, a point
//     message on the snapshot subject, the encoding of what record
//     batches made of the fold at that point (captured by the fold hook
//     Point, under the store's lock, so it is of that sequence exactly),
//     the object TG_SNAP_<stream>/fold that holds it, and a done message
//     naming the point and the writer's digest;
//   - checking it: every gateway that folds a done message compares its
//     own digest at the point, and Mismatch counts and logs a
//     difference;
//   - starting from one (start.go: Start): reading and checking the
//     newest object, replaying every message up to its point but record
//     batches with an ordered consumer of its own, and installing it, so
//     that the store's fold goes on from the next message.
//
// The snapshots' format, digest and installation are the subpackage
// fold's (fold/snapshot.go); this package does the I/O around them. What
// it needs of the store is its Host: the store's lock, under which the
// fold and the sequence it applied are read and changed, the store's way
// of applying one message and of waiting for the fold, its judgement of
// a cluster error, and its JetStream handles.
//
// Invariants:
//
//   - Only the capture under the store's lock reads the fold for a
//     snapshot: the encoding and the digest are of the same sequence.
//   - A snapshot that cannot be read, does not decode, is of another
//     stream of that name or does not fit what the catalog says at its
//     point is not used: the gateway replays the whole stream, with a
//     warning. A snapshot is an optimisation, never a source of truth.
//   - Writing one changes nothing of the fold's state but the snapshot
//     subject's: the point and done messages roll that subject up.
package snapshot
