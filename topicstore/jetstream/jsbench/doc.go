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
// Measured on the shared 2-core machine (3 nodes and the clients on it,
// other engineers' builds alongside, so quote ranges): single publishes
// 3.0k-7.4k msgs/s (p50 1.9-4.5ms), atomic batches of 100 50k-64k msgs/s
// (p50 20-27ms); -direct (each client on its stream leader's node) 3.6k-5.0k
// and 42k-76k. The first figures, ~11k single publishes/s and ~94k msgs/s
// in atomic batches of 100 (3 local nodes, R3, 16 clients), were taken on
// a quieter machine: compare topicgate with the ceiling of the same run,
// never with these.
//
// Run it as `go run ./cmd/tg-cluster bench` (a fresh 3-node cluster, or
// -store URLS for a running one) or as the Go benchmarks of this package.
package jsbench
