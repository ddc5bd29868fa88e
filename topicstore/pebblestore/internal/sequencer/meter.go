package sequencer

import (
	"sync"
	"time"
	"topicgate/topicstore"
)

// Meter holds the partitions' write meters (topicstore.WriteMeter, the
// leaf's arithmetic), which feed auto-partitioning's splits and
// sys.partitions. The committer adds to it; the store reads rates from any
// goroutine.
type Meter struct {
	mu    sync.Mutex
	parts map[PartKey]*topicstore.WriteMeter
}

// Observe records that partition k's cumulative bytes reached cum at now
// and returns its meter (created on first sight: the bytes before are not
// counted). window is the topic's stabilization window.
func (w *Meter) Observe(k PartKey, cum int64, now time.Time, window time.Duration) *topicstore.WriteMeter {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.parts[k]
	if m == nil || m.Window != window {
		if w.parts == nil {
			w.parts = map[PartKey]*topicstore.WriteMeter{}
		}
		last := cum
		if m != nil {
			last = m.LastCum
		}
		m = topicstore.NewWriteMeter(window, now, last)
		w.parts[k] = m
	}
	m.Observe(now, cum)
	return m
}

// Rate returns partition k's write rate over its window (0 if unmetered).
func (w *Meter) Rate(k PartKey, now time.Time) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m := w.parts[k]; m != nil {
		return m.Rate(now)
	}
	return 0
}

// Forget drops the meters of a topic (dropped) or of one partition.
func (w *Meter) Forget(topic uint64, part int32, all bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.parts {
		if k.Topic == topic && (all || k.Part == part) {
			delete(w.parts, k)
		}
	}
}
