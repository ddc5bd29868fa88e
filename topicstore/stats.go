package topicstore

import dto "github.com/prometheus/client_model/go"

// EngineStats are the storage engine's own figures, for operators: how much
// the LSM holds, how much work it has done and still owes. They are a
// snapshot; the counters only grow while the store is open.
type EngineStats struct {
	DiskBytes           uint64 // on-disk size: tables, WAL, manifests
	MemtableBytes       uint64 // memory held by memtables
	L0Files             int64  // files in level 0 (see the thresholds in Open)
	L0Sublevels         int32  // overlapping layers in level 0: a read's extra seeks
	Flushes             int64  // memtables flushed since open
	Compactions         int64  // compactions since open, of every kind
	DeleteOnly          int64  // compactions that dropped whole files without reading them
	CompactionDebtBytes uint64 // estimated bytes compactions still have to rewrite
	CacheBytes          int64  // block cache in use
	CacheHits           int64
	CacheMisses         int64
	WALSyncs            uint64  // fsyncs of the write-ahead log since open
	WALSyncSeconds      float64 // time spent in those fsyncs
	CommitGroups        int64   // batches the committer wrote (one per group commit)
	CommitRequests      int64   // requests those batches carried: / CommitGroups is the group size
}

// EngineStatter is implemented by stores that can report EngineStats. It is
// not part of Store so that a backend without an LSM need not fake one.
type EngineStatter interface {
	EngineStats() EngineStats
}

// EngineStats reports Pebble's metrics.
func (s *PebbleStore) EngineStats() EngineStats {
	m := s.db.Metrics()
	es := EngineStats{
		DiskBytes:           m.DiskSpaceUsage(),
		MemtableBytes:       m.MemTable.Size,
		L0Files:             m.Levels[0].NumFiles,
		L0Sublevels:         m.Levels[0].Sublevels,
		Flushes:             m.Flush.Count,
		Compactions:         m.Compact.Count,
		DeleteOnly:          m.Compact.DeleteOnlyCount,
		CompactionDebtBytes: m.Compact.EstimatedDebt,
		CacheBytes:          m.BlockCache.Size,
		CacheHits:           m.BlockCache.Hits,
		CacheMisses:         m.BlockCache.Misses,
		CommitGroups:        s.groups.Load(),
		CommitRequests:      s.groupedOps.Load(),
	}
	if h := m.LogWriter.FsyncLatency; h != nil {
		var pm dto.Metric
		if h.Write(&pm) == nil && pm.Histogram != nil {
			es.WALSyncs = pm.Histogram.GetSampleCount()
			es.WALSyncSeconds = pm.Histogram.GetSampleSum() / 1e9 // observed in nanoseconds
		}
	}
	return es
}
