package pebblestore

import (
	"context"
	"testing"
	"time"

	"topicgate/topicstore"
)

// Tests of the write-speed limits (throttle.go): the bucket arithmetic with
// an injected clock, the core's attribution of bytes to partitions, and the
// store's CommitResult.Throttle and counters, ALTER included. No real time
// passes in any of them.

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
			tt := &topicThrottle{}
			tt.reconfigure(t0, c.rate, c.burst)
			for i, s := range c.steps {
				now := t0.Add(s.at)
				switch {
				case s.rate > 0:
					tt.reconfigure(now, s.rate, s.burst)
				case s.rate < 0:
					tt.reconfigure(now, 0, 0)
				}
				if got := tt.charge(now, s.part, s.bytes); got != s.want {
					t.Fatalf("step %d: delay %v, want %v", i, got, s.want)
				}
			}
		})
	}
}

func TestThrottleLimits(t *testing.T) {
	for _, c := range []struct {
		speed, burst      int64
		wantRate, wantBur float64
	}{
		{0, 0, 0, 0},
		{0, 4096, 0, 0}, // a burst alone throttles nothing
		{1000, 0, 1000, 1000},
		{1000, 50, 1000, 50},
	} {
		r, b := throttleLimits(&topicstore.TopicConfig{PartitionWriteSpeedBytes: c.speed, PartitionWriteBurstBytes: c.burst})
		if r != c.wantRate || b != c.wantBur {
			t.Errorf("speed %d burst %d: rate %v burst %v, want %v %v", c.speed, c.burst, r, b, c.wantRate, c.wantBur)
		}
	}
}

// TestCoreThrottle checks that the core charges each request for the bytes
// it appended to each partition of a throttled topic, and nothing for an
// unthrottled topic or for skipped duplicates.
func TestCoreThrottle(t *testing.T) {
	s := newCore(2, 1)
	tt := &topicThrottle{}
	body := msg("p#1:x").Tail // every message below has a tail of this size
	n := float64(len(body))
	tt.reconfigure(t0, n*10, n*2) // 10 messages/s, burst of 2
	s.Topics[1].Throttle = tt
	out := s.apply([]coreReq{
		{Writes: []pendingWrite{write(1, "p#1:x", "p#2:x")}},     // the burst
		{Writes: []pendingWrite{write(1, "p#3:x")}},              // one over: 100 ms
		{Writes: []pendingWrite{write(1, "p#3:x")}},              // duplicate: no bytes
		{Writes: []pendingWrite{write(1, "q#1:x@1", "q#2:x@1")}}, // partition 1 has its own bucket
		{Writes: []pendingWrite{write(2, "a", "b", "c", "d")}},   // topic 2 is not throttled
		{Writes: []pendingWrite{write(1, "p#4:x"), write(2, "e")}},
	}, t0)
	var got []time.Duration
	for _, o := range out.Outcomes {
		must(t, o.Err)
		got = append(got, o.Result.Throttle)
	}
	ms := time.Millisecond
	eq(t, got, []time.Duration{0, 100 * ms, 0, 0, 0, 200 * ms})
	ti := topicstore.TopicInfo{Partitions: []topicstore.PartitionInfo{{ID: 0}, {ID: 1}}}
	tt.fill(&ti)
	eq(t, ti.Partitions[0].Throttled, 300*ms)
	eq(t, ti.Partitions[1].Throttled, time.Duration(0))
	eq(t, ti.Throttled, 300*ms)
}

// TestStoreThrottle goes through the store: CREATE with a limit, the delays
// commits report, the counters in Topic(), ALTER SET and RESET taking effect
// for the next write, a default topic never throttled, and counters kept
// across ALTER.
func TestStoreThrottle(t *testing.T) {
	clk := newTestClock()
	s := newStore(t, clk)
	ctx := context.Background()
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "slow", MinActivePartitions: 2,
		PartitionWriteSpeedBytes: 1000, PartitionWriteBurstBytes: 1000}))
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "fast", PartitionWriteBurstBytes: 10}))
	body := make([]byte, 1000)
	commit := func(topic string, part int32) time.Duration {
		t.Helper()
		res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic,
			Messages: []topicstore.Message{{Partition: part, Body: body}}}}})
		must(t, err)
		return res.Throttle
	}
	// The stored size of one message is a little over 1000 bytes: the
	// first fills the burst and owes a few bytes.
	d := commit("slow", 0)
	check(t, d > 0 && d < 100*time.Millisecond, "first write: ", d)
	d2 := commit("slow", 0)
	check(t, d2 > time.Second && d2 < 1100*time.Millisecond, "second write: ", d2)
	eq(t, commit("slow", 1), d, "partition 1 has its own bucket")
	for range 3 {
		eq(t, commit("fast", 0), time.Duration(0), "the default speed does not throttle")
	}
	ti, err := s.Topic("slow")
	must(t, err)
	eq(t, ti.Partitions[0].Throttled, d+d2)
	eq(t, ti.Throttled, 2*d+d2)
	clk.Advance(d2) // paid back

	// ALTER to a higher speed: the next write pays at once at the new rate.
	must(t, s.AlterTopic(ctx, "slow", func(c *topicstore.TopicConfig) error {
		c.PartitionWriteSpeedBytes, c.PartitionWriteBurstBytes = 1e6, 0
		return nil
	}))
	// At the old speed 10 ms would refill 10 bytes (a write would wait
	// about a second); at the new one it refills 10000.
	clk.Advance(10 * time.Millisecond)
	eq(t, commit("slow", 0), time.Duration(0), "after ALTER SET the new speed refills")
	// RESET: not throttled; the counters stay.
	must(t, s.AlterTopic(ctx, "slow", func(c *topicstore.TopicConfig) error { c.PartitionWriteSpeedBytes = 0; return nil }))
	for range 5 {
		eq(t, commit("slow", 0), time.Duration(0))
	}
	ti, err = s.Topic("slow")
	must(t, err)
	eq(t, ti.Throttled, 2*d+d2, "counters survive ALTER")
	// Setting a speed on a topic created without one throttles it.
	must(t, s.AlterTopic(ctx, "fast", func(c *topicstore.TopicConfig) error { c.PartitionWriteSpeedBytes = 100; return nil }))
	check(t, commit("fast", 0) > 0, "ALTER SET on an unthrottled topic")
	for _, ti := range s.Topics() {
		check(t, ti.Config.Name != "fast" || ti.Throttled > 0, "Topics() reports the counter")
	}
}

// TestBucketHugeDebt: a debt beyond any sensible wait is capped per write
// and never wraps the counters.
func TestBucketHugeDebt(t *testing.T) {
	tt := &topicThrottle{}
	tt.reconfigure(t0, 1, 1)
	for range 3 {
		eq(t, tt.charge(t0, 0, 1<<40), topicstore.MaxThrottle)
	}
	ti := topicstore.TopicInfo{Partitions: []topicstore.PartitionInfo{{ID: 0}}}
	tt.fill(&ti)
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
				tt := &topicThrottle{}
				tt.reconfigure(t0, 1e12, 1e12)
				s.Topics[1].Throttle = tt
			}
			specs := make([]string, 1000)
			for i := range specs {
				specs[i] = "0123456789012345678901234567890123456789"
			}
			reqs := []coreReq{{Writes: []pendingWrite{write(1, specs...)}}}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.apply(reqs, t0)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(specs)), "ns/msg")
		})
	}
}
