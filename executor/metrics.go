package executor

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"topicgate/topicstore"
)

// metrics are the engine's counters, exported in Prometheus text format.
type metrics struct {
	commits      atomic.Int64 // transaction commits (explicit and implicit)
	rollbacks    atomic.Int64 // explicit ROLLBACKs and aborted transactions
	conflicts    atomic.Int64 // commits failed with 40001
	commitErrors atomic.Int64 // commits failed otherwise
}

func (m *metrics) commitFailed(err error) {
	if errors.Is(err, topicstore.ErrPositionConflict) || errors.Is(err, topicstore.ErrConsumerNotFound) {
		m.conflicts.Add(1)
		return
	}
	m.commitErrors.Add(1)
}

// WriteMetrics writes the engine's metrics in Prometheus text exposition
// format: transaction counters, sessions, and per-partition gauges.
func (e *Engine) WriteMetrics(w io.Writer) {
	metric := func(kind, name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, kind, name, v)
	}
	counter := func(name, help string, v int64) { metric("counter", name, help, v) }
	gauge := func(name, help string, v int64) { metric("gauge", name, help, v) }
	counter("topicgate_txn_commits_total", "Transactions committed.", e.metrics.commits.Load())
	counter("topicgate_txn_rollbacks_total", "Transactions rolled back by ROLLBACK.", e.metrics.rollbacks.Load())
	counter("topicgate_txn_conflicts_total", "Commits that failed with SQLSTATE 40001.", e.metrics.conflicts.Load())
	counter("topicgate_txn_commit_errors_total", "Commits that failed with another error.", e.metrics.commitErrors.Load())
	sessions := 0
	e.sessions.Range(func(_, _ any) bool { sessions++; return true })
	gauge("topicgate_sessions", "Open client sessions.", int64(sessions))
	if st, ok := e.store.(topicstore.EngineStatter); ok {
		es := st.EngineStats()
		gauge("topicgate_store_disk_bytes", "On-disk size of the store.", int64(es.DiskBytes))
		gauge("topicgate_store_memtable_bytes", "Memory held by memtables.", int64(es.MemtableBytes))
		gauge("topicgate_store_l0_files", "Files in LSM level 0.", es.L0Files)
		gauge("topicgate_store_l0_sublevels", "Overlapping layers in LSM level 0.", int64(es.L0Sublevels))
		counter("topicgate_store_flushes_total", "Memtables flushed.", es.Flushes)
		counter("topicgate_store_compactions_total", "LSM compactions of every kind.", es.Compactions)
		counter("topicgate_store_delete_only_compactions_total", "Compactions that dropped whole files without reading them.", es.DeleteOnly)
		gauge("topicgate_store_compaction_debt_bytes", "Estimated bytes compactions still have to rewrite.", int64(es.CompactionDebtBytes))
		gauge("topicgate_store_block_cache_bytes", "Block cache in use.", es.CacheBytes)
		counter("topicgate_store_block_cache_hits_total", "Block cache hits.", es.CacheHits)
		counter("topicgate_store_block_cache_misses_total", "Block cache misses.", es.CacheMisses)
		counter("topicgate_store_wal_syncs_total", "Fsyncs of the write-ahead log.", int64(es.WALSyncs))
		fmt.Fprintf(w, "# HELP %[1]s Time spent in fsyncs of the write-ahead log.\n# TYPE %[1]s counter\n%[1]s %g\n",
			"topicgate_store_wal_sync_seconds_total", es.WALSyncSeconds)
		counter("topicgate_store_commit_groups_total", "Batches written by group commit.", es.CommitGroups)
		counter("topicgate_store_commit_requests_total", "Requests carried by those batches.", es.CommitRequests)
		counter("topicgate_store_reclaims_total", "Dropped topics' key ranges compacted away.", es.Reclaims)
	}
	fmt.Fprintf(w, "# HELP topicgate_partition_end_offset Next offset to be assigned.\n# TYPE topicgate_partition_end_offset gauge\n")
	topics := e.store.Topics()
	for _, t := range topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(w, "topicgate_partition_end_offset{topic=%q,partition=\"%d\"} %d\n", t.Config.Name, p.ID, p.EndOffset)
		}
	}
	fmt.Fprintf(w, "# HELP topicgate_partition_bytes Stored bytes of retained messages.\n# TYPE topicgate_partition_bytes gauge\n")
	for _, t := range topics {
		for _, p := range t.Partitions {
			fmt.Fprintf(w, "topicgate_partition_bytes{topic=%q,partition=\"%d\"} %d\n", t.Config.Name, p.ID, p.Bytes)
		}
	}
	fmt.Fprintf(w, "# HELP topicgate_topic_throttled_seconds_total Write-speed delay imposed on the topic's writes, summed over writes.\n# TYPE topicgate_topic_throttled_seconds_total counter\n")
	for _, t := range topics {
		fmt.Fprintf(w, "topicgate_topic_throttled_seconds_total{topic=%q} %g\n", t.Config.Name, t.Throttled.Seconds())
	}
}
