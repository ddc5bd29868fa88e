// Package metrics owns the engine's Prometheus metrics: the counters and
// latency histograms the statement path keeps (Metrics: a few atomic adds
// per statement, by statement kind, KindOf) and their exposition in the
// Prometheus text format (Write), with what is read from the store when
// /metrics is scraped: the transaction counters, the store's LSM or
// cluster figures, per-topic traffic, per-partition offsets and every
// consumer partition's position and lag.
//
// It is its own package, not sysview's, because it is kept on the
// statement path and written in another format; what it shares with the
// sys views (every consumer partition's state, a cluster store's state)
// it reads from package sysview, so both show the same figures.
//
// Files:
//   - metrics.go: Metrics, the per-topic read and dedup counters, the
//     statement kinds and their latency histograms (internal/prom's
//     lock-free Histogram).
//   - write.go: Scrape (what the executor hands a scrape) and Write, in
//     the exposition format internal/prom writes (each family once, HELP
//     and TYPE first, label values escaped).
//   - cluster.go: a cluster store's figures (stream, replicas, nodes'
//     sync policy, this gateway's fold, commits and maintenance).
//
// Invariants: observing a statement never blocks and allocates nothing
// but a topic's counters on their first use; everything derived from the
// store is computed at scrape, never maintained on the statement path;
// counters of dropped topics are forgotten at the next scrape. The
// package never imports the executor.
package metrics
