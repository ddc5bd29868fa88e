// Package jsbench measures the engine's own ceiling: the shared bench's
// messages (100 random bytes, 4 partitions, 16 clients with a connection
// each) published straight to JetStream, as single synchronous publishes or
// as atomic batches of 100, one R3 file stream per partition. topicgate on
// the cluster is judged against these figures (issue 15: ingest-1 at least
// half the single rate, ingest-batch and rpw at least half the batch rate).
//
// It owns only its own streams (TGBENCH_<p>, subjects tgbench.<p>), which a
// run deletes before it starts and when it ends. Payloads come from a seeded
// generator, the same bytes every run. Throughput is acknowledged messages
// over the time from the first publish to the last acknowledgement;
// latencies are per operation (a publish, or a whole batch).
//
// Run it as `go run ./cmd/tg-cluster bench` (a fresh 3-node cluster, or
// -store URLS for a running one) or as the Go benchmarks of this package.
package jsbench
