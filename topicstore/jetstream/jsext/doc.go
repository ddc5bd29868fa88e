// Package jsext holds the JetStream primitives the cluster store
// (topicstore/jetstream) stands on that nats.go does not give:
//
//   - PublishAtomic: an atomic batch publish (ADR-50) over plain nats.go:
//     Nats-Batch-Id, Nats-Batch-Sequence and Nats-Batch-Commit headers, every
//     message but the last published without a reply, the last a request
//     whose answer is the batch's ack, so a batch costs one round trip
//     (orbit.go's jetstreamext.PublishMsgBatch waits for an ack of the first
//     message too; nats.go has no batch API); ErrBatchNotSent marks one
//     that failed before its commit went out (nothing stored);
//   - ErrorCode and the ErrCode* constants, to tell JetStream refusals
//     apart, and WrongLast, the sequence a 10071 refusal names;
//   - Connect and Check: refuse, with a message that says what to fix, an
//     unreachable cluster (the URLs named, passwords redacted), refused
//     credentials, a TLS failure, a server without JetStream, and one older
//     than 2.12 (VersionAtLeast, RedactURLs).
//
// It knows nothing of topics: the facts it relies on are verified against
// real nodes by topicstore/jetstream/jstest, and check_test.go runs Connect
// and Check against real clusters.
package jsext
