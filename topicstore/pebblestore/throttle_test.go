package pebblestore

import (
	"context"
	"testing"
	"time"

	"topicgate/topicstore"
)

// Tests of the write-speed limits as the store applies them (the buckets
// and the core's side are internal/sequencer's throttle_test.go): the
// limits a config asks for, the store's CommitResult.Throttle and
// counters, ALTER included. No real time passes in any of them.

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
		r, b := topicstore.ThrottleLimits(&topicstore.TopicConfig{PartitionWriteSpeedBytes: c.speed, PartitionWriteBurstBytes: c.burst})
		if r != c.wantRate || b != c.wantBur {
			t.Errorf("speed %d burst %d: rate %v burst %v, want %v %v", c.speed, c.burst, r, b, c.wantRate, c.wantBur)
		}
	}
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
