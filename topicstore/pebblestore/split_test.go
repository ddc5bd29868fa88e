package pebblestore

import (
	"testing"
	"time"

	"topicgate/topicstore"
)

// activeParts returns the IDs of a topic's active partitions.
func activeParts(t testing.TB, s *PebbleStore, topic string) []int32 {
	t.Helper()
	info, err := s.Topic(topic)
	must(t, err)
	var out []int32
	for _, p := range info.Partitions {
		if p.Active {
			out = append(out, p.ID)
		}
	}
	return out
}

// TestAutoSplitMeter drives the write meter with an injected clock: a
// partition splits only after a whole stabilization window above the
// threshold (90% of 1000 B/s here), 'paused' stops splitting, and
// max_active_partitions caps it.
func TestAutoSplitMeter(t *testing.T) {
	clk := newTestClock()
	s := openTest(t, t.TempDir(), clk)
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up", MaxActivePartitions: 3,
		PartitionWriteSpeedBytes: 1000, AutoPartitioningWindow: 10 * time.Second}))
	body := make([]byte, 200)
	// write sends n 200-byte messages to partition 0's key space, one
	// per 100 ms of clock.
	write := func(n int, part int32) {
		for range n {
			commit(t, s, "t", topicstore.Message{Partition: part, Body: body})
			clk.Advance(100 * time.Millisecond)
		}
	}
	// 2000 B/s, but for less than a window: no split.
	write(90, 0)
	eq(t, activeParts(t, s, "t"), []int32{0})
	// A whole window above the threshold: split.
	write(15, 0)
	eq(t, activeParts(t, s, "t"), []int32{1, 2})
	rates, err := s.WriteRates("t")
	must(t, err)
	eq(t, rates[0], float64(0)) // the parent's meter stopped
	// Below the threshold (4 stored messages of ~180 bytes a second, <
	// 900 B/s) for a window: no split.
	for range 120 {
		commit(t, s, "t", topicstore.Message{Partition: 1, Body: body[:150]})
		clk.Advance(250 * time.Millisecond)
	}
	eq(t, activeParts(t, s, "t"), []int32{1, 2})
	// Paused: no split however hot.
	must(t, s.AlterTopic(ctx, "t", func(c *topicstore.TopicConfig) error { c.AutoPartitioningStrategy = "paused"; return nil }))
	write(200, 1)
	eq(t, activeParts(t, s, "t"), []int32{1, 2})
	// Resumed: partition 1 splits (it was metered while paused), then the
	// cap of 3 active partitions holds.
	must(t, s.AlterTopic(ctx, "t", func(c *topicstore.TopicConfig) error { c.AutoPartitioningStrategy = "scale_up"; return nil }))
	write(10, 1)
	eq(t, activeParts(t, s, "t"), []int32{2, 3, 4})
	write(300, 2)
	eq(t, activeParts(t, s, "t"), []int32{2, 3, 4})
}
