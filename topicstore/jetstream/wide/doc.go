// Package wide is the retirement of wide transactions' decisions in the
// cluster store (topicstore/jetstream), so that the stream does not keep
// one message for every wide transaction ever decided. The rest of wide
// transactions (their intents, their decision, the aborts of those that
// lost their way) is the store's own (jetstream's wide.go and
// wide_abort.go, which say what a wide transaction is).
//
// A decision is needed by every fold that holds the transaction's intents
// aside: a gateway that replays the stream, or starts from a snapshot
// taken while the transaction was open, or whose fold is behind. So the
// maintenance lease holder retires one (retire.go: Retirement.Run) only
// when:
//
//  1. it was taken at least Config.Hold (the store's
//     Options.DecisionHold) ago (a fold further behind than that is the
//     one case left: see below);
//  2. a snapshot of the fold covers a point after it, or none was ever
//     written (so no gateway starts from a snapshot in which the
//     transaction is open);
//  3. none of its intents is left in the stream. The lease holder makes
//     them go: an intent on a subject that has a later message is purged
//     below that message; a committed producer or position intent that is
//     still its subject's last message is published again as a plain
//     state message rolling its subject up; a record batch intent goes
//     with retention (purged below the partition's first retained batch);
//     an aborted intent still its subject's last message, or a record
//     batch still retained, waits.
//
// It then publishes a marker on the decision's subject that rolls it up
// (the decision goes) and says the outcome, with a Nats-TTL of Hold:
// every fold forgets the transaction; a fold that still holds its intents
// (it fell behind by more than Hold) applies the outcome to those whose
// subjects it has folded nothing later on (the store logs it: a fold
// hook). Only a record batch intent folded that far behind can leave such
// a fold failing at the partition's next batch, and a restart mends it.
//
// The decision's subject is empty again after the marker expires; an
// abort published later for the same transaction (by a gateway that
// missed all of it) carries a link expecting the owner's chain as it
// folded it, which the owner's decision batch moved, so it is refused.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state (Config.Fold) is read, and its cluster I/O (publish,
// conditionally as a message's headers say; purge a subject), the same
// path the commit protocol takes, so that the store's deterministic
// simulation drives the retirement through its scheduler.
//
// Invariants: the package changes the fold's state only through the
// stream; every publish of it is conditional on its subject's last
// sequence (a plain state published again expects the intent still
// last; the marker expects the decision still last), so a write or a
// retirement by another gateway meanwhile wins and the next run decides
// again; no decision is retired while an intent of its transaction is in
// the stream, nor before it is Hold old and behind every snapshot a
// gateway may start from. Only the holder of the maintenance lease runs
// it (maintain's Jobs), tests and the simulation aside.
package wide
