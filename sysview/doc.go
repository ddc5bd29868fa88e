// Package sysview makes the rows of the sys schema's views: sys.topics,
// sys.partitions, sys.consumers, sys.consumer_options, sys.producers
// (and sys.kafka_producers, the Kafka door's read back through package
// kafka/kproducer's names), sys.kafka_groups (the Kafka door's groups,
// handed in with SetKafkaGroups: kafka.go),
// sys.sessions, sys.transactions and sys.cluster, each materialized from
// the store's state and this process's when it is read (Views.Rows). It
// also computes every consumer partition's position and lag once for both
// sys.consumers and /metrics (ConsumerStates), and asks a cluster store
// for its state within a bound (ClusterStats) for sys.cluster and
// /metrics.
//
// Package planner/catalog declares the views (their columns and OIDs);
// this package produces their rows, which the executor hands to rowexec
// as a view scan's. The pg_catalog tables are package pgcatalog's (they
// mimic PostgreSQL's catalog; these show topicgate's own state), and the
// Prometheus exposition is package metrics' (it reads ConsumerStates and
// ClusterStats from here).
//
// What only the executor knows it hands in through Local: this process's
// sessions (their published state and the partitions their read sessions
// hold) and which read session holds a streaming consumer's partition.
// What only the Kafka door knows the process that runs it hands in as
// functions, so that neither package imports the other: its groups
// (SetKafkaGroups: sys.kafka_groups, and sys.consumers.kafka_member, the
// member assigned a partition) and its connections (SetKafkaSessions:
// sys.sessions rows with protocol 'kafka' and a negative pid, KafkaPID).
// On a store several gateways share (topicstore.Gatherer), sys.sessions
// and sys.transactions show every live gateway's sessions, each gateway
// answering for its own, and sys.consumers names the gateway and session
// reading a partition wherever it runs. FindSession finds one session by
// pid for a signal: it asks a gateway that missed the gathering alone,
// and reports an outcome it cannot know as an error, not as "none".
//
// Files:
//   - views.go: Views, Local, Rows (the one switch over the views),
//     sys.topics' and sys.partitions' rows.
//   - consumers.go: ConsumerStates, sys.consumers and
//     sys.consumer_options.
//   - sessions.go: SessionView (what one gateway sends another as JSON),
//     sys.sessions and sys.transactions, the gathering across gateways.
//   - cluster.go: sys.cluster and ClusterStats.
//   - kafka.go: the Kafka door's groups and connections as handed in.
//
// Invariants: every row has its view's columns (catalog.SysViews), in
// order, or Rows fails with an internal error; nothing here runs on a
// statement's path but a read of a view (or a /metrics scrape); the
// package reads the store and what Local returns, never writes, and
// never imports the executor.
package sysview
