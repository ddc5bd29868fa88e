// Package chain is the cluster store's outcomes in doubt
// (topicstore/jetstream): which batches this gateway published without
// yet knowing whether the stream stored them, by which message (the
// witness) the fold will tell, how each message the fold applies decides
// them, and how the gateway learns, when the answer never came, and
// settles what they staged.
//
// A batch is in doubt from the moment its commit message left until the
// gateway knows whether the stream stored it (the ack was lost, came too
// late, or the connection dropped after the commit message went out; a
// stopped leader may even store it later). Every batch has a witness: a
// message of it on a subject where JetStream's compare-and-set makes the
// order decidable. It is the batch's first record batch when it has one
// (published expecting the partition's last sequence, marked Tg-Commit),
// else its first shared-consumer state, else a marker put first in the
// batch on the gateway's chain, <prefix>.f.<gateway>, whose links each
// name their predecessor (Tg-Prev) and are published expecting it. Only
// one message can ever follow a given sequence on the witness's subject:
// the first published expecting it. So the batch is stored if and only if
// its witness follows the sequence it expected, and to learn which, the
// gateway publishes a resolution on that subject expecting the same
// sequence and changing nothing (an empty record batch, a state of no
// generation, a chain link). Either the resolution is stored, and the
// batch never can be (its expectation fails from then on), or it is
// refused with the sequence of what does follow, and once the fold has
// applied that sequence it knows whether that was the witness. A fold
// that finds after the expected sequence a message expecting another
// (the one that followed was rolled up before this fold got it) marks the
// batch lost: unknown for ever. The witness costs a header, not a
// message (a marker cost 13% of the batches a single record makes: raw
// atomic batches of one and two messages, 8.6k and 7.5k a second here).
//
// Nothing in doubt is ever discarded: a batch whose outcome stays unknown
// past its requests' deadlines is answered with ErrOutcomeUnknown (08007),
// its stagings are kept, and the committer resolves it in the background
// or the fold settles it when the next write to the witness's subject
// arrives.
//
// The sweep's fences on a dead gateway's chain (jetstream/maintain) and
// the aborts of its wide transactions (jetstream/wide) are links of the
// chain too, so a marked batch of a gateway taken for dead that wakes up
// is refused. Nothing rolls the chain up: a gateway purges its own chain
// below the links it no longer needs (Chain.Purge).
//
// It owns:
//
//   - the doubts (chain.go: Doubt, State.Doubts): one per batch from its
//     plan until the store settles it, numbered in this process
//     (Tg-Commit), each with its witness's subject, the sequence the
//     witness expected on it and its place in the batch;
//   - registering a batch (State.Marker, Chain.Mark, State.Witness): its
//     witness is its first record batch when it has one, marked with the
//     gateway and the batch's number, else a marker put first in the
//     batch on the gateway's chain, naming its predecessor (Tg-Prev) and
//     published expecting it;
//   - deciding them as the fold applies the stream (State.Witnessed for
//     a watched subject, State.Linked for a link of this gateway's
//     chain, both called from the store's fold hooks): the first message
//     after a doubt's expected sequence is its witness (stored at At) or
//     something else (Dead: never stored); one the fold missed leaves it
//     Lost (unknown for ever);
//   - publishing a batch and resolving it (resolve.go:
//     Chain.PublishResolved): what became of it (Outcome), from its ack,
//     its refusal, or resolutions published until its requests' deadline
//     (a doubt is marked Dead when its resolution was stored), and the
//     answer to requests left in doubt (Chain.ErrOutcome);
//   - settling (settle.go): the stagings of the doubts answered
//     ErrOutcomeUnknown that the fold decided since (Chain.Settle,
//     resolving the undecided first when asked), and the purge of this
//     gateway's chain below the links it no longer needs (Chain.Purge).
//
// What it needs of the store is its Host: the store's lock, whether the
// store is closed, its clock for deadlines, its cluster I/O (publish,
// alone or as an atomic batch, conditionally as a message's headers say;
// wait until the fold applied a sequence; purge a subject), the
// committer's back-off, and the settling of stagings, the same path the
// commit protocol takes, so that the store's simulation drives it
// through its scheduler.
//
// Invariants: a State is read and changed only under the host's lock,
// which is never held across a request to the cluster; a doubt is
// decided once (At, Dead or Lost) and never undecided; only one message
// can follow a given sequence on a subject, so a doubt is stored if and
// only if its witness is the message the fold applied right after the
// sequence it expected; a resolution changes nothing but the sequence it
// takes; a doubt leaves the State once the store answered its requests
// from what it learned itself (Forget, Chain.SettleOwn), or settled a
// decided one it had answered ErrOutcomeUnknown, and not before: no
// staging is deleted while a commit naming it is in doubt; a decided
// doubt leaves Watch at the next message on its subject.
package chain
