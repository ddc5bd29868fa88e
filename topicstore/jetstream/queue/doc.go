// Package queue is the cluster store's shared consumers
// (topicstore.SharedStore, implemented by topicstore/jetstream's Store
// through it): message locks, acknowledgements, delivery counts and dead
// letters, with the embedded store's semantics. The decisions are the
// shared core's (topicstore/sharedcore), the state lives in the stream
// (the records, below; folded by fold/shared.go) and every change is a
// step (plan.Step) that the store's committer plans with the commits
// (plan/shared.go) into an atomic batch.
//
// It owns:
//
//   - the calls (acquire.go, actions.go): Acquire and AcquireAsync, which
//     hand out what the step locked, from the consumer's cache where it
//     holds the messages, and take the step again when its locks ended
//     before it was stored; SharedAction and SharedActionAsync, the
//     releases (ReleaseSession, ReleaseUndelivered) and SharedStats;
//     Acks, which makes a commit's acknowledgements steps of its request;
//   - the run of a step (queue.go: run): the consumer's window loaded,
//     the bodies of the messages it will likely move to the dead-letter
//     queue read ahead (movesAhead), and the step sent again with those
//     the plan asks for (plan.NeedBodiesError); the dead-letter moves that
//     lock expiry left waiting for their bodies (finishMoves);
//   - the fill (window.go): the metadata of each partition's window
//     (written_at, delay, group, size: the core needs them, the fold does
//     not have them) and, up to plan.BodyCache, the messages themselves,
//     scanned into this gateway's caches (plan.SharedCaches) before a step.
//     The cache is the gateway's own, and only a cache: a gateway that
//     starts rebuilds it from the stream.
//
// The records:
//
//   - Per (topic, shared consumer, partition) one state subject
//     <prefix>.s.<topicID>.<consumerHex>.<partition> holds the
//     partition's window state (fold.SharedState: first unfinished
//     offset, per message its state, delivery count, lock holder and
//     deadline, and the counters) in its last message's Tg-Shared header.
//     Every state message is a rollup of its subject (Nats-Rollup: sub),
//     so the stream keeps one per partition, like a KV bucket, and the
//     fold, which reads headers only, always has every partition's state
//     without fetching anything. A header rather than the payload: the
//     fold gets it for free, and a window of at most
//     sharedcore.DefaultWindow entries encodes in a few KB (20 KB with
//     every message locked), far below a message's limit.
//   - Tg-Gen names the consumer's generation: the catalog sequence of the
//     record that made it a shared consumer. A consumer dropped (or turned
//     into a streaming one) and created again starts over: the fold
//     ignores a state of another generation, but keeps its sequence, which
//     the next state message must expect. Tg-Freed marks a state message
//     whose step may have made a message available (sharedcore.Core.Freed,
//     or the window moved on while full): the fold, which sees every
//     gateway's messages, wakes the consumer's waiters on every gateway
//     then (no polling).
//
// What a gateway keeps is a cache: a gateway that dies leaves its locks in
// the cluster's state with their deadlines, and any gateway hands the
// messages out again once those have passed; delivery counts, finished
// states, dead-letter moves and the counters survive any gateway. A call
// returns once its state message is stored on a quorum (its Wait has
// nothing left to wait for, Acquire's dead-letter moves aside).
//
// Differences with the embedded store, by design: lock deadlines are
// compared with each gateway's own clock (keep the gateways' clocks in
// sync, as for any lease); the counters of SharedPartitionStats count
// since the consumer was created, cluster-wide, not since this process
// loaded it; a lock survives a gateway's restart (it expires at its
// deadline) where the embedded store's locks are in memory.
//
// What it needs of the store is its Host: the store's lock, under which
// the fold's state (Config.Fold) and the consumers' caches (Config.Caches)
// are read and changed, whether the store is closed, its Scan, its window
// and its committer (a request, handed over and waited for), so that
// every step goes through the commit protocol's planning and cluster I/O
// (and in the store's simulation through its scheduler).
//
// Invariants: the package changes the consumers' state only through the
// committer's steps, each conditional on the state subjects' last
// sequences; it reads the fold's state and changes the caches only under
// the host's lock, which it never holds across a Scan or a step; a
// message is handed out only under a lock the stream stored and that has
// not ended by this gateway's clock; what it caches is only a cache, which
// the fold resets when a consumer's generation changes or its topic goes.
package queue
