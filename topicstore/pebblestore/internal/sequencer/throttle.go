package sequencer

import (
	"math"
	"sync"
	"time"

	"topicgate/topicstore"
)

// Write-speed limits: a topic that sets partition_write_speed_bytes_per_second
// explicitly (TopicConfig.PartitionWriteSpeedBytes > 0) has a token bucket per
// partition, of capacity partition_write_burst_bytes (default: one second of
// the speed) refilled at the speed. A topic left at the default speed is not
// throttled: the default only serves auto-partitioning as its reference
// (docs/dialect/write-speed-limits.md). partition_write_burst_bytes alone
// throttles nothing.
//
// The model is Kafka's quota "debt": a commit is never held back in the store.
// The core charges the bytes each request appended to each throttled partition
// (the stored, encoded bytes, as sys.partitions counts them) to that
// partition's bucket, which may go negative; the request's acknowledgement is
// then delayed by the time the most indebted of its partitions needs to refill
// to zero (CommitResult.Throttle). The caller waits that delay outside the
// store, so a group commit is never stalled and writers of other partitions
// never wait for a throttled one; and since the next write of a waiting
// producer finds the bucket at zero, the sustained rate it sees is the limit.
//
// The arithmetic is deterministic: it reads no clock (the committer passes
// the group's time), so throttle_test.go drives it with an injected one.
//
// Ownership: a Throttle belongs to one topic and outlives its catalog
// entries (ALTER TOPIC replaces the topic struct and hands the throttle on,
// so the counters are cumulative for the life of the process). The committer
// goroutine charges and reconfigures it; sys.partitions and /metrics read its
// counters; mu guards everything in it. Counters are in memory only and start
// at zero when the process starts.

// bucket is one partition's token bucket (the leaf's arithmetic).
type bucket = topicstore.WriteBucket

// Throttle is a topic's write-speed state: its limits and one bucket per
// partition (grown on first use, so partitions added later need no step).
type Throttle struct {
	mu    sync.Mutex
	rate  float64 // bytes/s; 0: not throttled (buckets idle, counters kept)
	burst float64
	parts []bucket
}

// Reconfigure applies new limits at now: what the buckets refilled at the old
// Rate until now is kept (capped at the new burst), debt is kept and paid
// back at the new rate. Turning throttling off forgets the buckets (a later
// limit starts them full) but keeps the counters.
func (tt *Throttle) Reconfigure(now time.Time, rate, burst float64) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for i := range tt.parts {
		b := &tt.parts[i]
		if rate == 0 || tt.rate == 0 {
			b.Tokens, b.At = 0, time.Time{}
			continue
		}
		if !b.At.IsZero() {
			b.Refill(now, tt.rate, tt.burst)
			b.Tokens = math.Min(b.Tokens, burst)
		}
	}
	tt.rate, tt.burst = rate, burst
}

// charge takes n bytes from partition part at now and returns the delay.
func (tt *Throttle) charge(now time.Time, part int32, n int64) time.Duration {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.rate == 0 || part < 0 {
		return 0
	}
	if int(part) >= len(tt.parts) {
		tt.parts = append(tt.parts, make([]bucket, int(part)+1-len(tt.parts))...)
	}
	return tt.parts[part].Charge(now, tt.rate, tt.burst, n)
}

// Fill copies the throttled-time counters into ti (nil tt: all zero).
func (tt *Throttle) Fill(ti *topicstore.TopicInfo) {
	if tt == nil {
		return
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for i := range ti.Partitions {
		p := &ti.Partitions[i]
		if int(p.ID) < len(tt.parts) && p.ID >= 0 {
			p.Throttled = tt.parts[p.ID].Throttled
			if limit := time.Duration(math.MaxInt64 - ti.Throttled); p.Throttled < limit {
				ti.Throttled += p.Throttled
			} else {
				ti.Throttled = math.MaxInt64 // saturates, never wraps
			}
		}
	}
}

// throttleTally collects what the core's current request appends to
// throttled partitions; settle charges it when the request is done. It is
// owned by the committer (State.thr).
type throttleTally struct {
	entries []tallyEntry
}

type tallyEntry struct {
	tt    *Throttle
	part  int32
	bytes int64
}

// note adds n bytes written to partition part of a throttled topic.
func (t *throttleTally) note(tt *Throttle, part int32, n int) {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if e := &t.entries[i]; e.tt == tt && e.part == part {
			e.bytes += int64(n)
			return
		}
	}
	t.entries = append(t.entries, tallyEntry{tt, part, int64(n)})
}

// settle charges the noted bytes at now, empties the tally and returns the
// longest delay: the request's acknowledgement waits for its most indebted
// partition.
func (t *throttleTally) settle(now time.Time) time.Duration {
	var d time.Duration
	for _, e := range t.entries {
		d = max(d, e.tt.charge(now, e.part, e.bytes))
	}
	t.entries = t.entries[:0]
	return d
}
