package sequencer

import (
	"testing"
	"time"

	"topicgate/topicstore"
)

// Tests of the write-speed limits (throttle.go): the bucket arithmetic with
// an injected clock and the core's attribution of bytes to partitions (the
// store's side is pebblestore's throttle_test.go). No real time passes in
// any of them.

var t0 = time.Unix(1000, 0)

// TestBucketArithmetic drives one topic's buckets through scripted steps:
// each step advances the clock, optionally reconfigures, then charges bytes
// to a partition and checks the delay.
func TestBucketArithmetic(t *testing.T) {
	type step struct {
		at          time.Duration // since t0
		rate, burst float64       // > 0: reconfigure before the charge; rate < 0: turn off
		part        int32
		bytes       int64
		want        time.Duration
	}
	cases := []struct {
		name        string
		rate, burst float64
		steps       []step
	}{
		{"burst passes free, then debt", 1000, 1000, []step{
			{at: 0, bytes: 1000, want: 0},                     // the full bucket pays
			{at: 0, bytes: 500, want: 500 * time.Millisecond}, // 500 bytes of debt at 1000 B/s
			{at: 0, bytes: 500, want: time.Second},            // debt accumulates
		}},
		{"refill pays back debt", 1000, 1000, []step{
			{at: 0, bytes: 1500, want: 500 * time.Millisecond},
			{at: 500 * time.Millisecond, bytes: 100, want: 100 * time.Millisecond}, // back at 0, then 100 of debt
		}},
		{"refill caps at burst", 1000, 2000, []step{
			{at: 0, bytes: 2000, want: 0},
			{at: 10 * time.Second, bytes: 2500, want: 500 * time.Millisecond}, // only 2000 refilled, not 10000
		}},
		{"write larger than the burst", 100, 100, []step{
			{at: 0, bytes: 1100, want: 10 * time.Second},
		}},
		{"sustained rate equals the limit", 1000, 1000, []step{
			{at: 0, bytes: 1000, want: 0},
			{at: 0, bytes: 250, want: 250 * time.Millisecond},
			{at: 250 * time.Millisecond, bytes: 250, want: 250 * time.Millisecond},
			{at: 500 * time.Millisecond, bytes: 250, want: 250 * time.Millisecond},
		}},
		{"partitions have their own buckets", 1000, 1000, []step{
			{at: 0, part: 0, bytes: 2000, want: time.Second},
			{at: 0, part: 1, bytes: 1000, want: 0},
			{at: 0, part: 7, bytes: 1000, want: 0}, // grown on first use
			{at: 0, part: 7, bytes: 100, want: 100 * time.Millisecond},
			{at: 0, part: 0, bytes: 100, want: 1100 * time.Millisecond},
		}},
		{"ALTER to a higher rate pays the debt back faster", 1000, 1000, []step{
			{at: 0, bytes: 2000, want: time.Second},
			{at: 500 * time.Millisecond, rate: 10000, burst: 10000, bytes: 0, want: 50 * time.Millisecond}, // 500 left at 10000 B/s
			{at: time.Second, bytes: 4500, want: 0},                                                        // refilled 5000 at the new rate since the ALTER
		}},
		{"ALTER to a smaller burst clamps the tokens", 1000, 5000, []step{
			{at: 0, rate: 1000, burst: 1000, bytes: 1500, want: 500 * time.Millisecond},
		}},
		{"turning the limit off and on starts full", 1000, 1000, []step{
			{at: 0, bytes: 3000, want: 2 * time.Second},
			{at: 0, rate: -1, bytes: 1 << 30, want: 0}, // not throttled
			{at: 0, rate: 1000, burst: 1000, bytes: 1000, want: 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tt := &Throttle{}
			tt.Reconfigure(t0, c.rate, c.burst)
			for i, s := range c.steps {
				now := t0.Add(s.at)
				switch {
				case s.rate > 0:
					tt.Reconfigure(now, s.rate, s.burst)
				case s.rate < 0:
					tt.Reconfigure(now, 0, 0)
				}
				if got := tt.charge(now, s.part, s.bytes); got != s.want {
					t.Fatalf("step %d: delay %v, want %v", i, got, s.want)
				}
			}
		})
	}
}

// TestCoreThrottle checks that the core charges each request for the bytes
// it appended to each partition of a throttled topic, and nothing for an
// unthrottled topic or for skipped duplicates.
func TestCoreThrottle(t *testing.T) {
	s := newCore(2, 1)
	tt := &Throttle{}
	body := msg("p#1:x").Tail // every message below has a tail of this size
	n := float64(len(body))
	tt.Reconfigure(t0, n*10, n*2) // 10 messages/s, burst of 2
	s.Topics[1].Throttle = tt
	out := s.Apply([]Request{
		{Writes: []Write{write(1, "p#1:x", "p#2:x")}},     // the burst
		{Writes: []Write{write(1, "p#3:x")}},              // one over: 100 ms
		{Writes: []Write{write(1, "p#3:x")}},              // duplicate: no bytes
		{Writes: []Write{write(1, "q#1:x@1", "q#2:x@1")}}, // partition 1 has its own bucket
		{Writes: []Write{write(2, "a", "b", "c", "d")}},   // topic 2 is not throttled
		{Writes: []Write{write(1, "p#4:x"), write(2, "e")}},
	}, t0)
	var got []time.Duration
	for _, o := range out.Outcomes {
		must(t, o.Err)
		got = append(got, o.Result.Throttle)
	}
	ms := time.Millisecond
	eq(t, got, []time.Duration{0, 100 * ms, 0, 0, 0, 200 * ms})
	ti := topicstore.TopicInfo{Partitions: []topicstore.PartitionInfo{{ID: 0}, {ID: 1}}}
	tt.Fill(&ti)
	eq(t, ti.Partitions[0].Throttled, 300*ms)
	eq(t, ti.Partitions[1].Throttled, time.Duration(0))
	eq(t, ti.Throttled, 300*ms)
}

// TestBucketHugeDebt: a debt beyond any sensible wait is capped per write
// and never wraps the counters.
func TestBucketHugeDebt(t *testing.T) {
	tt := &Throttle{}
	tt.Reconfigure(t0, 1, 1)
	for range 3 {
		eq(t, tt.charge(t0, 0, 1<<40), topicstore.MaxThrottle)
	}
	ti := topicstore.TopicInfo{Partitions: []topicstore.PartitionInfo{{ID: 0}}}
	tt.Fill(&ti)
	eq(t, ti.Throttled, 3*topicstore.MaxThrottle)
}

// BenchmarkCoreApplyThrottle measures the core's cost per message of a
// group of 1000-message requests, for a topic without a limit (the hook is
// one nil check) and for a throttled one (a tally entry per request).
func BenchmarkCoreApplyThrottle(b *testing.B) {
	for _, limited := range []bool{false, true} {
		b.Run(map[bool]string{false: "unthrottled", true: "throttled"}[limited], func(b *testing.B) {
			s := newCore(4)
			if limited {
				tt := &Throttle{}
				tt.Reconfigure(t0, 1e12, 1e12)
				s.Topics[1].Throttle = tt
			}
			specs := make([]string, 1000)
			for i := range specs {
				specs[i] = "0123456789012345678901234567890123456789"
			}
			reqs := []Request{{Writes: []Write{write(1, specs...)}}}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Apply(reqs, t0)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(specs)), "ns/msg")
		})
	}
}
