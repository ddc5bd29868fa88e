package sysview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"topicgate/topicstore"
)

// ClusterStatsTimeout bounds the request for the stream's state a scrape
// or a read of sys.cluster makes on a cluster, so that a cluster without
// a leader slows it by at most this.
const ClusterStatsTimeout = 2 * time.Second

// ClusterStats asks a cluster store for its state, the stream's as its
// leader answers it within ClusterStatsTimeout (sys.cluster, /metrics).
func ClusterStats(st topicstore.ClusterStatter) topicstore.ClusterStats {
	ctx, cancel := context.WithTimeout(context.Background(), ClusterStatsTimeout)
	defer cancel()
	return st.ClusterStats(ctx)
}

// clusterRows is sys.cluster: the cluster store as this gateway sees it.
// The stream's row (its last sequence; alive when its leader answered),
// one per node (the leader, then the replicas with how many operations
// they are behind), one per gateway alive (this one with its fold's
// sequence and lag, and what its maintenance did last; the lease holder
// named). The embedded store has no rows.
func (v *Views) clusterRows() [][]any {
	st, ok := v.store.(topicstore.ClusterStatter)
	if !ok {
		return nil
	}
	cs := ClusterStats(st)
	var rows [][]any
	var detail string
	if cs.StreamErr != nil {
		detail = cs.StreamErr.Error()
	} else {
		detail = fmt.Sprintf("%d messages, %d bytes", cs.Messages, cs.Bytes)
	}
	rows = append(rows, []any{"stream", cs.Stream, nil, cs.StreamErr == nil, nil, nullSeq(cs.LastSeq), detail})
	if cs.Leader != "" {
		rows = append(rows, []any{"node", cs.Leader, "leader", true, int64(0), nil, nodeDetail(cs, cs.Leader, "")})
	}
	for _, r := range cs.Replicas {
		var d string
		if r.Offline {
			d = "offline"
		}
		rows = append(rows, []any{"node", r.Name, "replica", r.Current && !r.Offline, int64(r.Lag), nil, nodeDetail(cs, r.Name, d)})
	}
	for _, g := range cs.Gateways {
		name := g.ID
		if g.Name != "" {
			name += " (" + g.Name + ")"
		}
		var roles []string
		if g.Self {
			roles = append(roles, "this gateway")
		}
		if g.ID == cs.LeaseHolder {
			roles = append(roles, "maintenance lease")
		}
		row := []any{"gateway", name, nullText(strings.Join(roles, ", ")), true, nil, nil, nil}
		if g.Self {
			if cs.StreamErr == nil && cs.LastSeq >= cs.Applied {
				row[4] = int64(cs.LastSeq - cs.Applied)
			}
			row[5] = int64(cs.Applied)
			var d []string
			if !cs.LastRetention.IsZero() {
				d = append(d, "retention "+cs.LastRetention.UTC().Format(time.RFC3339))
			}
			if !cs.LastSweep.IsZero() {
				d = append(d, "sweep "+cs.LastSweep.UTC().Format(time.RFC3339))
			}
			if cs.SnapshotSeq > 0 {
				d = append(d, fmt.Sprintf("snapshot at sequence %d, %s", cs.SnapshotSeq, cs.SnapshotAt.UTC().Format(time.RFC3339)))
			}
			if cs.SnapshotFrom > 0 {
				d = append(d, fmt.Sprintf("started from the snapshot at sequence %d", cs.SnapshotFrom))
			}
			if cs.SnapshotMismatches > 0 {
				d = append(d, fmt.Sprintf("%d snapshot digests differed from this gateway's state", cs.SnapshotMismatches))
			}
			if cs.MaintenanceErrors > 0 {
				d = append(d, fmt.Sprintf("%d maintenance failures, the last: %s", cs.MaintenanceErrors, cs.LastMaintenanceError))
			}
			if cs.DoubtsUnknown > 0 {
				d = append(d, fmt.Sprintf("%d commits answered 08007", cs.DoubtsUnknown))
			}
			row[6] = nullText(strings.Join(d, "; "))
		} else {
			row[6] = "heartbeat until " + g.Until.UTC().Format(time.RFC3339)
		}
		rows = append(rows, row)
	}
	return rows
}

// nodeDetail is a node row's detail: what is given, and how often the
// node syncs to disk when the gateway could read it (--nats-monitor).
func nodeDetail(cs topicstore.ClusterStats, server, detail string) any {
	for _, nd := range cs.Durability {
		if nd.Server != server || !nd.Checked {
			continue
		}
		sync := "syncs every write"
		if !nd.SyncAlways {
			sync = fmt.Sprintf("syncs every %v, not every write: acknowledged commits can be lost to a power loss", nd.SyncInterval)
		}
		if detail != "" {
			detail += "; "
		}
		detail += sync
	}
	return nullText(detail)
}

func nullSeq(v uint64) any {
	if v == 0 {
		return nil
	}
	return int64(v)
}
