// Package plan is the cluster store's commit planning (topicstore/
// jetstream): given a gateway's fold state and a group of requests, it
// decides what each request gets and builds the one atomic batch that
// carries the group, every message of it conditional on its subject's
// last sequence.
//
// It owns:
//
//   - the request (request.go): a commit, or a shared-consumer step, as
//     the committer hands it over (Request, Write, Msg), and its answer
//     (Outcome);
//   - the plan of a group (plan.go: Planner.Plan, Batch): each request
//     checked against the fold and the requests before it in the group,
//     then taken into the batch; a group too large for one batch is cut to
//     its first request, which, alone and still too large, is a wide
//     transaction; requests put off (the batch was full, Later) or held
//     by a wide transaction's topics (Locked) go back to the committer;
//   - the checks and the routing (check.go) on topicstore/decide: a
//     producer's dedup and binding, a partition split, the position
//     checks, the round-robin partition of unbound writes (the gateways
//     writing a topic share its partitions);
//   - the group's view of the partitions, producers and positions it
//     changes, and the batch's messages (build.go): guards on keyed
//     topics' catalog subjects, producers' dedup states, positions,
//     shared-consumer states and record batches (records.go, at most
//     512 KiB each, the first expecting the partition's last sequence);
//   - shared consumers' steps (shared.go): each (topic, consumer) a group
//     touches gets a sharedcore.Core rebuilt from the fold and this
//     gateway's cache of its window (cache.go: SharedCaches), the steps run
//     on it in order, and each partition whose state changed gets one
//     state message; dead-letter moves are writes of the same batch.
//
// What it leaves to the store: publishing the batch, waiting for its
// outcome and the committer goroutine; registering a batch on the
// gateway's chain of commit markers (Batch.Mark and WitnessIndex say how:
// jetstream/chain); filling the shared consumers' caches from the
// stream (a Scan, before a step).
//
// Invariants: a plan does no I/O, starts no goroutine and takes no lock;
// its owner serializes every call, as it does the fold's. A plan reads
// the fold state and changes nothing that the fold decides by: only the
// gateway's own round-robin cursors (fold.Topic.Rr), the empty entries a
// shared consumer's lookup creates (fold.State.SharedTopicOf), and of the
// caches what they keep for the next plan (a window's entries, the shared
// round-robin cursor); so the same fold, cursors, requests and clock give
// the same batch.
// Every message of a batch expects its subject's last sequence as the
// fold has it (a guard, a catalog subject's; a position written beside a
// shared state, none: the state carries the check), so a batch planned on
// a stale fold is refused whole. A request refused at planning is not in
// the batch; Plan and Batch.Settle answer a request on its Out channel,
// which is buffered, and nothing else does in this package.
package plan
