package pebblestore

import (
	"github.com/cockroachdb/pebble"
	dto "github.com/prometheus/client_model/go"

	"topicgate/topicstore"
)

// EngineStats reports Pebble's metrics.
func (s *PebbleStore) EngineStats() topicstore.EngineStats {
	m := s.db.Metrics()
	es := topicstore.EngineStats{
		DiskBytes:           diskUsage(m),
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
	es.Reclaims = s.reclaim.Done()
	if h := m.LogWriter.FsyncLatency; h != nil {
		var pm dto.Metric
		if h.Write(&pm) == nil && pm.Histogram != nil {
			es.WALSyncs = pm.Histogram.GetSampleCount()
			es.WALSyncSeconds = pm.Histogram.GetSampleSum() / 1e9 // observed in nanoseconds
		}
	}
	return es
}

// diskUsage is Metrics.DiskSpaceUsage without its underflow: in Pebble
// v1.1 the obsolete-table byte count can drop below zero (as a uint64: near
// 2^64) after a large compaction's files are deleted (cockroachdb/pebble
// issue 4811, fixed in v2), which /metrics showed as -462 MB after a
// dropped topic was reclaimed. A wrapped counter is taken as zero.
func diskUsage(m *pebble.Metrics) uint64 {
	sane := func(v uint64) uint64 {
		if v > 1<<62 {
			return 0
		}
		return v
	}
	n := m.WAL.PhysicalSize + m.WAL.ObsoletePhysicalSize
	for _, l := range m.Levels {
		n += uint64(max(l.Size, 0))
	}
	n += sane(m.Table.ObsoleteSize) + sane(m.Table.ZombieSize)
	if m.Compact.InProgressBytes > 0 {
		n += uint64(m.Compact.InProgressBytes)
	}
	return n
}
