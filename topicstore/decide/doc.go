// Package decide is the one decision core of a commit, which both stores
// call: the embedded store's committer (pebblestore/internal/sequencer)
// and the cluster store's planner (package jetstream/plan). It decides, for each
// message of a commit, whether it is a duplicate of its producer's (the
// exactly-once rule: a seqno at or below the producer's last accepted
// one), which partition it goes to (a producer's binding, a partition it
// names continued past a split, the owner of its key in a keyed topic,
// else the group's sticky round-robin partition), whether the partitions
// a write names agree with its producers' bindings, and whether a
// position update may move; and it words every refusal, so both stores
// give the same errors for the same commit.
//
// It owns no state and does no I/O: each store keeps its producers,
// positions and layouts in its own form (Pebble records; the fold of the
// stream) and hands the core what a decision needs. The contract suite
// (topicstore/storetest), which both stores pass, states the promises
// these decisions make; decide_test.go tests the rules one by one.
//
// Invariants: a producer stays in the partition it is bound to until that
// partition splits, then follows its key into the child; a message a
// decision refuses changes nothing; the same inputs give the same
// decision in every store.
package decide
