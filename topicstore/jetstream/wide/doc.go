// Package wide is the cluster store's wide transactions
// (topicstore/jetstream): a commit too large for one atomic batch (more
// than jsext.MaxBatchMsgs messages: thousands of producers, positions
// over thousands of partitions, a staging of thousands of chunks), the
// aborts of those that lost their way, and the retirement of their
// decisions, so that the stream does not keep one message for every wide
// transaction ever decided.
//
// A wide transaction's messages are published as intents, in as many
// batches as they take, then decided by one message (txn.go:
// Transactions.Run). An intent is the message the commit would have
// published, on its own subject and with its own expectation, and a
// header Tg-Txn naming the transaction ("<gateway> <number>"). The fold
// holds an intent aside: the subject's state does not change, but the
// intent is the subject's last message, so no commit planned on the state
// before it can land on that subject any more. While a transaction has
// intents and no decision it holds the topics they are on: a gateway
// plans no commit that touches them (the plan puts them off as
// Batch.Locked) until the decision, and such requests wait in the
// committer. Each batch of a transaction is linked to its gateway's chain
// and resolved through it when its answer never comes (jetstream/chain).
//
// The decision is a message on the transaction's own subject,
// <prefix>.x.<gateway>.<number>, published expecting that subject to be
// empty, so exactly one decision is ever stored: "commit", in a batch with
// the commit's catalog guards and a marker on the gateway's chain, or
// "abort", which anybody may publish. When the fold applies the decision
// it applies the transaction's intents in stream order (commit) or only
// takes their sequences as the subjects' last ones (abort), and releases
// the topics. Readers never see an intent before its decision.
//
// Who aborts (abort.go): the gateway itself, when one of its intent
// batches is refused (another commit changed a subject first), when its
// decision batch is refused, or to learn the decision of a batch in doubt
// (an abort either lands or finds the decision there); a gateway whose
// requests wait for the topics of a transaction whose gateway's heartbeat
// expired (Transactions.AbortOrphans); and the maintenance lease holder,
// for every such transaction, before it sweeps that gateway's staged
// chunks (Transactions.AbortDead). An abort published by another gateway
// carries a link on the owner's chain too (expecting its last link as
// folded), so an intent batch the owner publishes after it is refused. A
// request of this gateway answered ErrOutcomeUnknown has its
// transaction's stagings settled once the fold has the decision, which an
// abort takes when there is none (Transactions.Settle).
//
// A transaction that aborts is planned again, with a new number, like any
// refused commit; its intents stay in the stream as the subjects' last
// messages until the next commit there (or retention) replaces them.
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
// hook, Transactions.RetiredLate). Only a record batch intent folded that
// far behind can leave such a fold failing at the partition's next batch,
// and a restart mends it.
//
// The decision's subject is empty again after the marker expires; an
// abort published later for the same transaction (by a gateway that
// missed all of it) carries a link expecting the owner's chain as it
// folded it, which the owner's decision batch moved, so it is refused.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state (Config.Fold), the chain's doubts and this gateway's
// own transactions are read and changed, whether the store is closed,
// its clock for deadlines, its cluster I/O (publish, alone or as an
// atomic batch, conditionally as a message's headers say; purge a
// subject; wait until the fold applied a sequence), the committer's
// back-off and batch limit, and the settling of stagings, the same path
// the commit protocol takes, so that the store's deterministic
// simulation drives wide transactions through its scheduler; and its
// Commit, the commit protocol's part: what it does with a batch the
// stream stored and with a request whose transaction committed.
//
// Invariants: the package changes the fold's state only through the
// stream; every publish of it is conditional on its subject's last
// sequence (an intent as its commit would have been; a decision expects
// its subject empty; a plain state published again expects the intent
// still last; the marker expects the decision still last), so a write,
// a decision or a retirement by another gateway meanwhile wins and the
// next try decides again; a transaction's request is answered committed
// only once its decision is, and ErrOutcomeUnknown when that is not
// known by its deadline, and its stagings are settled only from a
// decision the fold applied; no decision is retired while an intent of
// its transaction is in the stream, nor before it is Hold old and
// behind every snapshot a gateway may start from. Only the holder of
// the maintenance lease retires decisions and aborts every dead
// gateway's transactions (maintain's Jobs), tests and the simulation
// aside.
package wide
