package metrics

import (
	"io"
	"strconv"

	"topicgate/internal/prom"
	"topicgate/sysview"
	"topicgate/topicstore"
	"topicgate/txn"
)

func partLabel(id int32) string { return strconv.FormatInt(int64(id), 10) }

// Scrape is what a scrape reads besides the counters: the transaction
// manager's counters, the open sessions, the store, and every consumer
// partition's state (sysview.Views.ConsumerStates), all read now.
type Scrape struct {
	Txn       txn.Stats
	Sessions  int
	Store     topicstore.Store
	Consumers func(topics []topicstore.TopicInfo) []sysview.ConsumerState
}

// Write writes the engine's metrics in Prometheus text exposition format:
// transaction counters and statement latencies, the store's LSM figures,
// per-topic traffic, per-partition offsets and per consumer and partition
// its position, lag and (shared consumers) queue state. The per-partition
// figures are computed now, from the store.
func (m *Metrics) Write(w io.Writer, sc Scrape) {
	p := prom.NewWriter(w)
	defer p.Flush()
	ts := sc.Txn
	p.Single("topicgate_txn_commits_total", "counter", "Transactions committed: blocks, and autocommit statements that published, moved a position or acknowledged.", float64(ts.Commits))
	p.Single("topicgate_txn_rollbacks_total", "counter", "Transactions that ended without committing: ROLLBACK, COMMIT of a failed block, a failed implicit transaction (multi-statement query, pipeline, autocommit statement), a commit that failed (conflicts included), a session closed inside a block.", float64(ts.Rollbacks))
	p.Single("topicgate_txn_conflicts_total", "counter", "Commits that failed with SQLSTATE 40001.", float64(ts.Conflicts))
	p.Single("topicgate_txn_commit_errors_total", "counter", "Commits that failed with another error.", float64(ts.CommitErrors))
	p.Single("topicgate_sessions", "gauge", "Open client sessions.", float64(sc.Sessions))
	m.writeLatency(p)
	if st, ok := sc.Store.(topicstore.EngineStatter); ok {
		writeEngineStats(p, st.EngineStats())
	}
	if st, ok := sc.Store.(topicstore.ClusterStatter); ok {
		writeClusterStats(p, st)
	}
	topics := sc.Store.Topics()
	m.writeTopics(p, topics)
	p.Family("topicgate_partition_end_offset", "gauge", "Next offset to be assigned.")
	for _, t := range topics {
		for _, pt := range t.Partitions {
			p.Sample("topicgate_partition_end_offset", float64(pt.EndOffset), "topic", t.Config.Name, "partition", partLabel(pt.ID))
		}
	}
	p.Family("topicgate_partition_bytes", "gauge", "Stored bytes of retained messages.")
	for _, t := range topics {
		for _, pt := range t.Partitions {
			p.Sample("topicgate_partition_bytes", float64(pt.Bytes), "topic", t.Config.Name, "partition", partLabel(pt.ID))
		}
	}
	writeConsumers(p, sc.Consumers(topics))
}

func writeEngineStats(p *prom.Writer, es topicstore.EngineStats) {
	p.Single("topicgate_store_disk_bytes", "gauge", "On-disk size of the store.", float64(es.DiskBytes))
	p.Single("topicgate_store_memtable_bytes", "gauge", "Memory held by memtables.", float64(es.MemtableBytes))
	p.Single("topicgate_store_l0_files", "gauge", "Files in LSM level 0.", float64(es.L0Files))
	p.Single("topicgate_store_l0_sublevels", "gauge", "Overlapping layers in LSM level 0.", float64(es.L0Sublevels))
	p.Single("topicgate_store_flushes_total", "counter", "Memtables flushed.", float64(es.Flushes))
	p.Single("topicgate_store_compactions_total", "counter", "LSM compactions of every kind.", float64(es.Compactions))
	p.Single("topicgate_store_delete_only_compactions_total", "counter", "Compactions that dropped whole files without reading them.", float64(es.DeleteOnly))
	p.Single("topicgate_store_compaction_debt_bytes", "gauge", "Estimated bytes compactions still have to rewrite.", float64(es.CompactionDebtBytes))
	p.Single("topicgate_store_block_cache_bytes", "gauge", "Block cache in use.", float64(es.CacheBytes))
	p.Single("topicgate_store_block_cache_hits_total", "counter", "Block cache hits.", float64(es.CacheHits))
	p.Single("topicgate_store_block_cache_misses_total", "counter", "Block cache misses.", float64(es.CacheMisses))
	p.Single("topicgate_store_wal_syncs_total", "counter", "Fsyncs of the write-ahead log.", float64(es.WALSyncs))
	p.Single("topicgate_store_wal_sync_seconds_total", "counter", "Time spent in fsyncs of the write-ahead log.", es.WALSyncSeconds)
	p.Single("topicgate_store_commit_groups_total", "counter", "Batches written by group commit.", float64(es.CommitGroups))
	p.Single("topicgate_store_commit_requests_total", "counter", "Requests carried by those batches.", float64(es.CommitRequests))
	p.Single("topicgate_store_reclaims_total", "counter", "Dropped topics' key ranges compacted away.", float64(es.Reclaims))
}

// writeLatency writes the statement latency histograms, one series per
// statement kind.
func (m *Metrics) writeLatency(p *prom.Writer) {
	const name = "topicgate_statement_duration_seconds"
	p.Family(name, "histogram", "Statement latency by kind, from Execute to completion (a deferred pipeline INSERT to its commit; commit: a transaction block's commit).")
	for k := KindInsert; k < numKinds; k++ {
		m.latency[k].Write(p, name, "kind", kindNames[k])
	}
}

// writeTopics writes the per-topic traffic counters. Messages and bytes
// written come from the store (every partition's end offset and
// cumulative bytes: they survive restarts); reads and duplicates are the
// engine's counters since it started. Counters of dropped topics are
// forgotten here.
func (m *Metrics) writeTopics(p *prom.Writer, topics []topicstore.TopicInfo) {
	live := make(map[string]bool, len(topics))
	for _, t := range topics {
		live[t.Config.Name] = true
	}
	m.topics.Range(func(k, _ any) bool {
		if !live[k.(string)] {
			m.topics.Delete(k)
		}
		return true
	})
	counters := func(name string) *topicCounters {
		if v, ok := m.topics.Load(name); ok {
			return v.(*topicCounters)
		}
		return &topicCounters{}
	}
	type fam struct {
		name, help string
		value      func(t topicstore.TopicInfo, c *topicCounters) int64
	}
	sum := func(f func(topicstore.PartitionInfo) int64) func(topicstore.TopicInfo, *topicCounters) int64 {
		return func(t topicstore.TopicInfo, _ *topicCounters) int64 {
			var n int64
			for _, pt := range t.Partitions {
				n += f(pt)
			}
			return n
		}
	}
	fams := []fam{
		{"topicgate_topic_messages_written_total", "Messages ever written to the topic (the sum of its partitions' end offsets).",
			sum(func(pt topicstore.PartitionInfo) int64 { return pt.EndOffset })},
		{"topicgate_topic_bytes_written_total", "Stored bytes ever written to the topic (encoded and compressed, as on disk).",
			sum(func(pt topicstore.PartitionInfo) int64 { return pt.WrittenBytes })},
		{"topicgate_topic_messages_read_total", "Messages read from the topic by SELECT, consumer reads and shared-consumer acquires.",
			func(_ topicstore.TopicInfo, c *topicCounters) int64 { return c.readMsgs.Load() }},
		{"topicgate_topic_bytes_read_total", "Body bytes of the messages read from the topic, as stored (compressed if their codec compresses).",
			func(_ topicstore.TopicInfo, c *topicCounters) int64 { return c.readBytes.Load() }},
		{"topicgate_topic_duplicates_skipped_total", "Messages skipped by producer seqno dedup.",
			func(_ topicstore.TopicInfo, c *topicCounters) int64 { return c.dups.Load() }},
	}
	for _, f := range fams {
		p.Family(f.name, "counter", f.help)
		for _, t := range topics {
			p.Sample(f.name, float64(f.value(t, counters(t.Config.Name))), "topic", t.Config.Name)
		}
	}
	const throttled = "topicgate_topic_throttled_seconds_total"
	p.Family(throttled, "counter", "Write-speed delay imposed on the topic's writes since the server started, summed over writes.")
	for _, t := range topics {
		p.Sample(throttled, t.Throttled.Seconds(), "topic", t.Config.Name)
	}
}

// writeConsumers writes each consumer partition's position and lag, and
// for shared consumers the state of the acquisition window and the
// dead-letter counters.
func writeConsumers(p *prom.Writer, states []sysview.ConsumerState) {
	type fam struct {
		name, kind, help string
		shared           bool
		value            func(cs *sysview.ConsumerState) float64
	}
	fams := []fam{
		{"topicgate_consumer_committed_offset", "gauge", "The consumer's committed offset: the next offset it reads (shared: the first unfinished message).", false,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Committed) }},
		{"topicgate_consumer_lag_messages", "gauge", "Messages between the committed offset and the partition's end.", false,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.End - cs.Committed) }},
		{"topicgate_consumer_lag_seconds", "gauge", "Age of the oldest uncommitted (shared: unfinished) message; 0 when there is none.", false,
			func(cs *sysview.ConsumerState) float64 { return cs.LagTime.Seconds() }},
		{"topicgate_shared_available_messages", "gauge", "Messages of the shared consumer's window that can be acquired now.", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.Available) }},
		{"topicgate_shared_acquired_messages", "gauge", "Messages locked by a session (or held for a commit or a dead-letter move).", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.Acquired) }},
		{"topicgate_shared_delayed_messages", "gauge", "Messages not handed out yet because of their delay or receive_message_delay.", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.Delayed) }},
		{"topicgate_shared_archived_messages", "gauge", "Archived messages still inside the window (behind an unfinished one).", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.Archived) }},
		{"topicgate_shared_archived_total", "counter", "Messages finished without an ack: rejected, out of attempts (delete policy) or moved to the dead-letter queue.", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.ArchivedTotal) }},
		{"topicgate_shared_dead_lettered_total", "counter", "Messages moved to the consumer's dead_letter_queue.", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.DeadLettered) }},
		{"topicgate_shared_dead_letter_failures_total", "counter", "Dead-letter moves that failed (the message stayed in the queue), e.g. because the dead_letter_queue does not exist.", true,
			func(cs *sysview.ConsumerState) float64 { return float64(cs.Shared.DeadLetterFailures) }},
	}
	for _, f := range fams {
		p.Family(f.name, f.kind, f.help)
		for i := range states {
			cs := &states[i]
			if f.shared && cs.Shared == nil {
				continue
			}
			p.Sample(f.name, f.value(cs), "topic", cs.Topic, "consumer", cs.Consumer, "partition", partLabel(cs.Partition))
		}
	}
}
