// Package sharedcore is the deterministic core of shared consumers (queue
// semantics: YDB shared consumers, Kafka share groups, SQS), used by every
// store backend: per (topic, shared consumer) a Core holds, per
// partition, an acquisition window of message states (available,
// acquired by a Holder until a deadline, pending, acknowledged,
// archived), delivery counts, lock deadlines, delays, keep_messages_order
// groups (also across partition splits: Tree) and the dead-letter policy's
// decisions.
//
// Everything here is a pure function of the state and the time it is
// given: no I/O, no clock, no locks. A backend loads the state (its
// window fills from the log, its persisted states and counts), runs a step
// (Pick, Act, Expire, ReleaseSession, ...), persists what the step's
// Effects name and wakes its waiters when Core.Freed says a message may
// have become available. pebblestore keeps the state in memory and
// persists finished states and delivery counts; the jetstream store
// rebuilds a Core from the cluster's state before each step and publishes
// the result conditionally (see each package's doc).
package sharedcore
