// Package fold is the gateway state that the cluster store's stream
// (topicstore/jetstream) folds into, and the functions that apply one
// message to it. Every gateway folds the same messages in the same stream
// order, so every gateway holds the same State; a gateway that starts
// rebuilds it, from the stream's first message or from a snapshot of it.
//
// It owns:
//
//   - the names of the headers topicgate's messages carry (layout.go) and
//     the stream's subjects, each of a kind (c, d, p, ...: subjects.go): the
//     fold reads them, the store writes them, and only this package spells
//     them;
//   - the state (state.go): the catalog (Topic, by name and by ID, with
//     each catalog subject's last sequence and the dropped topics not yet
//     purged, Leftover), each partition's index of record batches (Part,
//     Rec: offsets, counters, the write-speed bucket and meter charged at
//     each batch's written_at), producers (Producer), committed positions
//     (Position), the maintenance lease (Lease) and the role catalog
//     (Roles, roles.go: a document folded from its parts, its last
//     part's sequence its version);
//   - State.Apply (apply.go), which routes a message by its subject's kind
//     to what folds it: a catalog record, a record batch, a producer, a
//     position, a retention start, an expiry notice, a part of the role
//     catalog's document;
//   - staged chunks and sweep fences as folded (sweep.go), wide
//     transactions' intents held aside and their decisions (wide.go),
//     shared consumers' window states (shared.go, encoded by codec.go) and
//     read-session groups (groups.go);
//   - snapshots (snapshot.go): the digest every gateway computes at a
//     snapshot point, and the encoding, decoding and installing of what
//     record batches made of the state.
//
// What a message means to the gateway that holds the state, not to the
// state (its own batches in doubt decided, its wide transactions decided,
// the snapshot it captures, its caches to empty, what to report), the
// fold tells it through Hooks, from inside Apply.
//
// Invariants: the state changes only by Apply, one message at a time, in
// stream order, and by what the store repairs from the stream itself (a
// producer's entry read back after a refusal, a dropped topic forgotten);
// Apply depends on nothing but the message (subject, headers, sequence,
// time) and the state, except the clock the State was made with, which
// stands for the time of a message that carries none (and the wall time
// it notes for operators when a snapshot's notice comes, Snap.LastAt,
// which nothing decides by); the package starts
// no goroutine, holds no connection and takes no lock: a State is not
// safe for concurrent use, and its owner serializes every call and read.
// A message it cannot apply is an error, and the owner must stop
// answering from the state rather than go on with a wrong view.
package fold
