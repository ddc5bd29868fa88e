package topicstore

import (
	"encoding/json"
	"time"
)

// The write meter auto-partitioning decides by
// (docs/dialect/auto-partitioning.md), the same arithmetic in every
// backend: a partition's payload bytes in a ring of MeterBuckets buckets
// spanning the topic's stabilization window. It reads no clock: the caller
// passes the time of each write.

// MeterBuckets is how many buckets a window is metered in.
const MeterBuckets = 60

// WriteMeter is one partition's write meter.
type WriteMeter struct {
	Window  time.Duration
	width   time.Duration // Window / MeterBuckets
	Since   time.Time     // metering began (or the window changed)
	LastCum int64         // the partition's cumulative bytes last seen
	idx     [MeterBuckets]int64
	bytes   [MeterBuckets]int64
}

// NewWriteMeter starts a meter at now whose partition has written cum
// bytes so far (they are not counted).
func NewWriteMeter(window time.Duration, now time.Time, cum int64) *WriteMeter {
	return &WriteMeter{Window: window, width: max(window/MeterBuckets, time.Millisecond), Since: now, LastCum: cum}
}

// Add counts n bytes written at now.
func (m *WriteMeter) Add(now time.Time, n int64) {
	i := now.UnixNano() / int64(m.width)
	b := i % MeterBuckets
	if m.idx[b] != i {
		m.idx[b], m.bytes[b] = i, 0
	}
	m.bytes[b] += n
}

// Observe counts what the partition wrote since the last call, given its
// cumulative bytes cum at now.
func (m *WriteMeter) Observe(now time.Time, cum int64) {
	if d := cum - m.LastCum; d > 0 {
		m.Add(now, d)
	}
	m.LastCum = cum
}

// Rate is the mean rate in bytes/s over the window ending at now.
func (m *WriteMeter) Rate(now time.Time) float64 {
	cur := now.UnixNano() / int64(m.width)
	var sum int64
	for b := range m.idx {
		if m.idx[b] > cur-MeterBuckets && m.idx[b] <= cur {
			sum += m.bytes[b]
		}
	}
	return float64(sum) / m.Window.Seconds()
}

// Full reports whether the meter has seen a whole window.
func (m *WriteMeter) Full(now time.Time) bool { return now.Sub(m.Since) >= m.Window }

// SplitDue reports whether a partition metered by m should split at now:
// a 'scale_up' topic, metered for a whole window, its mean rate at least
// the topic's threshold.
func SplitDue(cfg *TopicConfig, m *WriteMeter, now time.Time) bool {
	return cfg.AutoPartitioningStrategy == "scale_up" && m != nil && m.Full(now) && m.Rate(now) >= SplitThreshold(cfg)
}

// meterJSON is a WriteMeter's whole state, for a store that snapshots it.
type meterJSON struct {
	Window  time.Duration       `json:"window"`
	Width   time.Duration       `json:"width"`
	Since   time.Time           `json:"since"`
	LastCum int64               `json:"last_cum"`
	Idx     [MeterBuckets]int64 `json:"idx"`
	Bytes   [MeterBuckets]int64 `json:"bytes"`
}

// MarshalJSON encodes the meter's whole state (a snapshot of the fold
// keeps it: the jetstream store).
func (m *WriteMeter) MarshalJSON() ([]byte, error) {
	return json.Marshal(meterJSON{m.Window, m.width, m.Since, m.LastCum, m.idx, m.bytes})
}

// UnmarshalJSON restores what MarshalJSON encoded.
func (m *WriteMeter) UnmarshalJSON(b []byte) error {
	var j meterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = WriteMeter{Window: j.Window, width: j.Width, Since: j.Since, LastCum: j.LastCum, idx: j.Idx, bytes: j.Bytes}
	return nil
}
