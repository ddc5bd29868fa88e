// Package chain is the cluster store's bookkeeping of its batches in
// doubt (topicstore/jetstream): which batches this gateway published
// without yet knowing whether the stream stored them, by which message
// (the witness) the fold will tell, and how each message the fold applies
// decides them.
//
// It owns:
//
//   - the doubts (Doubt, State.Doubts): one per batch from its plan until
//     the store settles it, numbered in this process (Tg-Commit), each
//     with its witness's subject, the sequence the witness expected on
//     it and its place in the batch;
//   - registering a batch (State.Marker, State.Witness): its witness is
//     its first record batch when it has one, marked with the gateway and
//     the batch's number, else a marker put first in the batch on the
//     gateway's chain, naming its predecessor (Tg-Prev) and published
//     expecting it;
//   - deciding them as the fold applies the stream (State.Witnessed for
//     a watched subject, State.Linked for a link of this gateway's
//     chain, both called from the store's fold hooks): the first message
//     after a doubt's expected sequence is its witness (stored at At) or
//     something else (Dead: never stored); one the fold missed leaves it
//     Lost (unknown for ever). The store also marks a doubt Dead itself
//     when its resolution was stored.
//
// Publishing a batch, resolving a doubt whose answer never came (a
// resolution expecting the same sequence) and settling what a decided
// doubt staged are the store's (topicstore/jetstream's chain.go, which
// tells the whole protocol), on its lock and cluster I/O.
//
// Invariants: a State is read and changed only under the store's lock,
// and holds no cluster connection; a doubt is decided once (At, Dead or
// Lost) and never undecided; only one message can follow a given sequence
// on a subject, so a doubt is stored if and only if its witness is the
// message the fold applied right after the sequence it expected; a doubt
// leaves the State once the store answered its requests from what it
// learned itself (Forget), or settled a decided one it had answered
// ErrOutcomeUnknown; a decided doubt leaves Watch at the next message on
// its subject.
package chain
