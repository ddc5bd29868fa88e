package metrics

import (
	"topicgate/internal/prom"

	"topicgate/sysview"
	"topicgate/topicstore"
)

// writeClusterStats writes a cluster store's figures: the stream's state
// as its leader answers it within sysview.ClusterStatsTimeout (the same on
// every gateway: take it from any one), and this gateway's connection,
// fold and commits (sum those over the gateways).
func writeClusterStats(p *prom.Writer, st topicstore.ClusterStatter) {
	cs := sysview.ClusterStats(st)
	up := 0.0
	if cs.StreamErr == nil {
		up = 1
	}
	p.Family("topicgate_cluster_stream_up", "gauge", "1 when the stream's leader answered this scrape; 0 when it did not (no leader, no quorum, timeout): the stream's figures are then left out.")
	p.Sample("topicgate_cluster_stream_up", up, "stream", cs.Stream)
	if cs.StreamErr == nil {
		p.Family("topicgate_cluster_stream_messages", "gauge", "Messages in the stream (record batches, catalog, positions, windows, ...), as its leader reports.")
		p.Sample("topicgate_cluster_stream_messages", float64(cs.Messages), "stream", cs.Stream)
		p.Family("topicgate_cluster_stream_bytes", "gauge", "Bytes stored in the stream, per replica, as its leader reports.")
		p.Sample("topicgate_cluster_stream_bytes", float64(cs.Bytes), "stream", cs.Stream)
		p.Family("topicgate_cluster_stream_last_sequence", "gauge", "The stream's last sequence; minus topicgate_cluster_fold_sequence, how far this gateway's fold is behind.")
		p.Sample("topicgate_cluster_stream_last_sequence", float64(cs.LastSeq), "stream", cs.Stream)
		if cs.Leader != "" {
			p.Family("topicgate_cluster_stream_leader", "gauge", "1 for the node that leads the stream.")
			p.Sample("topicgate_cluster_stream_leader", 1, "stream", cs.Stream, "server", cs.Leader)
		}
		if len(cs.Replicas) > 0 {
			p.Family("topicgate_cluster_replica_current", "gauge", "1 for a replica of the stream caught up with its leader, 0 for one behind or offline.")
			for _, r := range cs.Replicas {
				cur := 0.0
				if r.Current && !r.Offline {
					cur = 1
				}
				p.Sample("topicgate_cluster_replica_current", cur, "stream", cs.Stream, "server", r.Name)
			}
			p.Family("topicgate_cluster_replica_lag_operations", "gauge", "Operations a replica of the stream is behind its leader.")
			for _, r := range cs.Replicas {
				p.Sample("topicgate_cluster_replica_lag_operations", float64(r.Lag), "stream", cs.Stream, "server", r.Name)
			}
		}
	}
	var synced []topicstore.NodeDurability
	for _, nd := range cs.Durability {
		if nd.Checked {
			synced = append(synced, nd)
		}
	}
	if len(synced) > 0 {
		p.Family("topicgate_cluster_node_sync_always", "gauge", "1 for a node that writes every acknowledged write to disk before acknowledging it (sync_interval: always), 0 for one that syncs every topicgate_cluster_node_sync_interval_seconds (commits it acknowledged can be lost to a power loss); read from the nodes' --nats-monitor endpoints.")
		for _, nd := range synced {
			v := 0.0
			if nd.SyncAlways {
				v = 1
			}
			p.Sample("topicgate_cluster_node_sync_always", v, "server", nd.Server)
		}
		p.Family("topicgate_cluster_node_sync_interval_seconds", "gauge", "How often a node that does not sync every write syncs to disk (nats-server's default: 120).")
		for _, nd := range synced {
			p.Sample("topicgate_cluster_node_sync_interval_seconds", nd.SyncInterval.Seconds(), "server", nd.Server)
		}
	}
	p.Family("topicgate_cluster_fold_sequence", "gauge", "The highest stream sequence this gateway's fold applied.")
	p.Sample("topicgate_cluster_fold_sequence", float64(cs.Applied), "stream", cs.Stream)
	connected := 0.0
	if cs.Server != "" {
		connected = 1
	}
	p.Family("topicgate_cluster_connected", "gauge", "1 while this gateway is connected to a node of the cluster (server names it).")
	p.Sample("topicgate_cluster_connected", connected, "server", cs.Server)
	p.Single("topicgate_cluster_reconnects_total", "counter", "Times this gateway reconnected to the cluster.", float64(cs.Reconnects))
	p.Single("topicgate_store_commit_groups_total", "counter", "Batches written by group commit (on a cluster: atomic batches this gateway published).", float64(cs.CommitGroups))
	p.Single("topicgate_store_commit_requests_total", "counter", "Requests carried by those batches.", float64(cs.CommitRequests))
	p.Single("topicgate_cluster_read_barrier_misses_total", "counter", "Statements that found no stream leader for their read point within --nats-timeout and read this gateway's view as it was.", float64(cs.BarrierMisses))
	p.Single("topicgate_cluster_record_cache_hits_total", "counter", "Record batch reads this gateway answered from its cache of what it wrote or read.", float64(cs.CacheHits))
	p.Single("topicgate_cluster_record_cache_misses_total", "counter", "Record batch reads that went to the cluster (a direct get).", float64(cs.CacheMisses))
	p.Single("topicgate_cluster_record_cache_bytes", "gauge", "Bytes in this gateway's record cache (--nats-cache-mib bounds them).", float64(cs.CacheBytes))
	p.Single("topicgate_cluster_commit_held_total", "counter", "Groups this gateway's committer held back, up to --commit-delay, for sessions that commit steadily and had not joined yet.", float64(cs.CommitHeld))
	p.Single("topicgate_cluster_commit_replans_total", "counter", "Atomic batches the cluster refused because a concurrent write to the same subjects came first, planned again.", float64(cs.Replans))
	p.Single("topicgate_cluster_commit_doubts_total", "counter", "Atomic batches whose answer never came (a lost ack, a timeout, a connection dropped after the commit message left), resolved by asking the stream.", float64(cs.Doubts))
	p.Single("topicgate_cluster_commit_unknown_total", "counter", "Commits still in doubt at their deadline, answered 08007 (stored whole or not at all; settled later).", float64(cs.DoubtsUnknown))
	p.Single("topicgate_cluster_wide_transactions_total", "counter", "Commits too large for one atomic batch, committed as wide transactions (intents, then one decision).", float64(cs.WideTxns))
	held := 0.0
	if cs.LeaseHeld {
		held = 1
	}
	p.Single("topicgate_cluster_maintenance_lease_held", "gauge", "1 while this gateway holds the maintenance lease (retention, the sweep of dead gateways' stagings).", held)
	p.Single("topicgate_cluster_expired_producers_total", "counter", "Producers idle for their topic's producer_inactivity_period that this gateway's maintenance removed from the stream.", float64(cs.ExpiredProducers))
	p.Single("topicgate_cluster_expired_acquires_total", "counter", "Acquires taken again because their locks ended before the commit taking them was stored (an election longer than the processing timeout).", float64(cs.ExpiredAcquires))
	p.Single("topicgate_cluster_cas_broken_total", "counter", "Shared-consumer states the fold saw stored over a state they did not expect: the stream broke its compare-and-set (each is logged). Should stay 0.", float64(cs.CASBroken))
	p.Single("topicgate_cluster_maintenance_errors_total", "counter", "Maintenance runs of this gateway that failed (the lease, retention, the sweep); each is logged.", float64(cs.MaintenanceErrors))
	p.Single("topicgate_cluster_snapshot_sequence", "gauge", "The stream sequence the newest snapshot of the fold covers (0: none); a gateway starts from it.", float64(cs.SnapshotSeq))
	p.Single("topicgate_cluster_snapshots_written_total", "counter", "Snapshots of the fold this gateway wrote (as the maintenance lease holder).", float64(cs.SnapshotsWritten))
	p.Single("topicgate_cluster_snapshot_mismatches_total", "counter", "Snapshots whose writer's state differed from this gateway's at the same stream sequence: the gateways disagree on what the stream holds (each is logged). Should stay 0.", float64(cs.SnapshotMismatches))
	if !cs.LastRetention.IsZero() {
		p.Single("topicgate_cluster_last_retention_seconds", "gauge", "When retention last completed on this gateway (unix seconds).", float64(cs.LastRetention.UnixMilli())/1000)
	}
	if !cs.LastSweep.IsZero() {
		p.Single("topicgate_cluster_last_sweep_seconds", "gauge", "When the sweep of dead gateways' staged chunks last completed on this gateway (unix seconds).", float64(cs.LastSweep.UnixMilli())/1000)
	}
}
