package topicstore

import (
	"context"
	"time"
)

// ClusterStats is what a store on a cluster reports for /metrics: the
// stream's state as its leader answers it (the same whichever gateway
// asks), and this gateway's own connection, fold and commits.
type ClusterStats struct {
	// Stream is the stream's name. StreamErr is set when its leader did
	// not answer (no leader, no quorum, timeout): the stream's figures
	// below are then zero.
	Stream    string
	StreamErr error
	// Leader is the server name of the stream's leader; Replicas are the
	// others as the leader sees them.
	Leader   string
	Replicas []ReplicaStats
	// Messages, Bytes and LastSeq are the stream's.
	Messages, Bytes, LastSeq uint64

	// This gateway's: the highest stream sequence its fold applied (so
	// LastSeq-Applied is how far it is behind), the node it is connected
	// to ("" when it is not), how often it reconnected, and its commits:
	// atomic batches published, the requests they carried, and publishes
	// refused for a concurrent write to the same subjects and planned
	// again.
	Applied                               uint64
	Server                                string
	Reconnects                            uint64
	CommitGroups, CommitRequests, Replans int64
	// CommitHeld counts groups the committer held back for sessions
	// expected to join them (jetstream's CommitDelay).
	CommitHeld int64
	// BarrierMisses counts read barriers that found no leader in time,
	// whose statements read this gateway's view as it was.
	BarrierMisses int64
	// The gateway's cache of record batches: reads it answered, reads
	// that went to the cluster, and the bytes it holds.
	CacheHits, CacheMisses, CacheBytes int64
	// Commits in doubt: batches whose answer never came (resolved or
	// not), and those still unknown at their deadline (answered 08007);
	// wide transactions begun.
	Doubts, DoubtsUnknown, WideTxns int64
	// Maintenance: the gateway holding the lease ("" none), whether this
	// one does, when retention and the sweep of dead gateways' stagings
	// last completed on this gateway (zero: never), and the maintenance
	// runs that failed here, the last failure's text.
	LeaseHolder              string
	LeaseHeld                bool
	LastRetention, LastSweep time.Time
	MaintenanceErrors        int64
	// ExpiredProducers counts the producers this gateway's maintenance
	// removed; ExpiredAcquires the acquires whose locks ended before the
	// commit taking them was stored (taken again); CASBroken the
	// shared-consumer states the fold saw stored over a state they did
	// not expect (the stream broke its compare-and-set: logged).
	ExpiredProducers, ExpiredAcquires, CASBroken int64
	LastMaintenanceError                         string
	// Snapshots of the fold: the stream sequence the newest covers (0:
	// none) and when this gateway folded its notice, the one this gateway
	// started from (0: it replayed the stream), those it wrote, and the
	// times its state differed from a snapshot writer's at the same
	// sequence (logged: the gateways disagree).
	SnapshotSeq, SnapshotFrom            uint64
	SnapshotAt                           time.Time
	SnapshotsWritten, SnapshotMismatches int64
	// Gateways are those whose heartbeat this gateway folded and that
	// have not expired, this one included.
	Gateways []GatewayStats
	// Durability is each node's sync setting, as the last reading of its
	// monitoring endpoint found it (none when the gateway was given no
	// endpoints).
	Durability []NodeDurability
}

// NodeDurability is whether a node writes each acknowledged write to
// disk before acknowledging it.
type NodeDurability struct {
	Monitor string // the node's monitoring endpoint
	Server  string // its server_name
	// Checked: the node answered; SyncAlways: it syncs every write,
	// else every SyncInterval. Err says why it could not be asked.
	Checked      bool
	SyncAlways   bool
	SyncInterval time.Duration
	Err          string
}

// GatewayStats is a gateway as the stream shows it.
type GatewayStats struct {
	ID    string    // the gateway's id in the stream's subjects
	Name  string    // what it calls itself (its host and listen address)
	Until time.Time // its heartbeat's expiry
	Self  bool      // the gateway answering
}

// ReplicaStats is one replica of the stream other than its leader.
type ReplicaStats struct {
	Name    string
	Current bool   // caught up with the leader
	Offline bool   // not reachable
	Lag     uint64 // operations behind the leader
}

// ClusterStatter is implemented by stores on a cluster; like
// EngineStatter it is not part of Store. ClusterStats asks the cluster
// (bounded by ctx) and always returns what it knows.
type ClusterStatter interface {
	ClusterStats(ctx context.Context) ClusterStats
}
