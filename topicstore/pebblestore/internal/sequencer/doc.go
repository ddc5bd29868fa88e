// Package sequencer is the deterministic core of pebblestore's committer:
// the state the committer owns (per topic the partitions' start, end and
// cumulative bytes, the producers' bindings and dedup state, the
// consumers' committed offsets, the staged data each partition references,
// the write-speed buckets) and what a group commit does to it. Given a
// group of requests, State.Apply assigns offsets, resolves producer
// bindings and routing through topicstore/decide, applies seqno dedup,
// checks and applies position updates, places staged batches by reference,
// charges throttled partitions, and returns the Pebble writes (KV, keys
// from internal/keys), each request's result and the partitions' new ends
// (Published). The store applies the writes, syncs and publishes.
//
//   - core.go: Apply and its per-group work; the producer record.
//   - core_pos.go: consumer positions (PosUpdate), checked against the
//     group's earlier requests and the request's own earlier updates.
//   - core_staged.go: staged batches (Staged) joining by reference, the
//     references kept per staging ID (State.Refs, the r/ records) and per
//     partition, and ReleaseRefs for retention and DROP TOPIC.
//   - throttle.go: the write-speed token buckets (Throttle) the core
//     charges; meter.go: the write meters (Meter) that drive splits.
//   - state.go: what the store asks of the state outside a group
//     (producer info, recovery, producer expiry, retention's checks).
//   - input.go: building the core's input (Msg, Staged) from a commit
//     request on the caller's goroutine.
//
// # Invariants
//
//   - No I/O, no goroutines, no clock: the caller passes the group's time,
//     and a staged batch's payload is read through State.Load. The core is
//     unit tested directly (core_test.go, positions_test.go,
//     throttle_test.go).
//   - One writer: only the store's committer goroutine changes the state
//     (Open fills it before the committer starts). Apply mutates it in
//     place, which is safe because a failed Pebble write is fatal for the
//     store. Other goroutines read it under the store's lock, which the
//     committer holds while it applies a group.
//   - A request whose checks fail (topic or partition gone, a binding
//     contradicted, a position conflict or out of range) changes nothing
//     and writes nothing; the others of its group go on.
//   - Offsets are contiguous: each partition's new messages and staged
//     batches get the next offsets from its end, in request order.
//   - Producer records are written in the same group as the data they
//     admit.
package sequencer
