package topicstore

import (
	"math"
	"time"
)

// Write-speed limits, the arithmetic every backend applies the same way.
// A topic that sets partition_write_speed_bytes_per_second explicitly
// (TopicConfig.PartitionWriteSpeedBytes > 0) has a token bucket per
// partition, of capacity partition_write_burst_bytes (default: one second
// of the speed) refilled at the speed; a commit charges the stored bytes
// it appended and may take the bucket into debt, and its acknowledgement
// waits until the most indebted of its partitions is out of debt
// (CommitResult.Throttle), Kafka's quota model. The arithmetic reads no
// clock: the caller passes the time.

// WriteBucket is one partition's token bucket. The zero value is full.
type WriteBucket struct {
	Tokens    float64   // bytes available; negative: debt to pay back
	At        time.Time // when Tokens was last settled; zero: never used (full)
	Throttled time.Duration
}

// MaxThrottle bounds one write's delay, so that absurd debts (1 byte/s and
// a 1 GiB transaction: 34 years) neither overflow a time.Duration nor the
// counters; the debt itself is kept.
const MaxThrottle = 24 * time.Hour

// Refill settles b at now at rate bytes/s, capped at burst.
func (b *WriteBucket) Refill(now time.Time, rate, burst float64) {
	if b.At.IsZero() {
		b.Tokens, b.At = burst, now
		return
	}
	if el := now.Sub(b.At); el > 0 {
		b.Tokens = math.Min(burst, b.Tokens+rate*el.Seconds())
		b.At = now
	}
}

// Charge takes n bytes at now and returns how long the write must wait for
// the bucket to be out of debt again (0 when it is not in debt); the delay
// is added to Throttled.
func (b *WriteBucket) Charge(now time.Time, rate, burst float64, n int64) time.Duration {
	b.Refill(now, rate, burst)
	b.Tokens -= float64(n)
	d := b.Debt(rate)
	b.Throttled = min(b.Throttled+d, math.MaxInt64-MaxThrottle) // saturates, never wraps
	return d
}

// Debt is how long the bucket, as last settled, needs to be out of debt.
func (b *WriteBucket) Debt(rate float64) time.Duration {
	if b.Tokens >= 0 || rate <= 0 {
		return 0
	}
	if s := -b.Tokens / rate; s < MaxThrottle.Seconds() {
		return time.Duration(math.Ceil(s * float64(time.Second)))
	}
	return MaxThrottle
}

// ThrottleLimits returns the rate and burst cfg asks for; rate 0 means the
// topic is not throttled (the default speed only serves auto-partitioning
// as its reference; partition_write_burst_bytes alone throttles nothing).
func ThrottleLimits(cfg *TopicConfig) (rate, burst float64) {
	if cfg.PartitionWriteSpeedBytes <= 0 {
		return 0, 0
	}
	rate, burst = float64(cfg.PartitionWriteSpeedBytes), float64(cfg.PartitionWriteBurstBytes)
	if burst <= 0 {
		burst = rate // default: one second of the speed
	}
	return rate, burst
}
