// Package prom writes the Prometheus text exposition format (version
// 0.0.4) and keeps lock-free latency histograms for it. It is the one
// place both of topicgate's doors put their figures into that format:
// package metrics (the engine: statements, transactions, the store) and
// package kafka (the Kafka door's requests by API), so neither imports
// the other and /metrics shows both in one text.
//
// Invariants: a Writer writes each family's HELP and TYPE lines before
// its samples and escapes help text and label values; a Histogram's
// Observe is a few atomic adds (never a lock, never an allocation), and
// its buckets are cumulated only when written.
package prom
