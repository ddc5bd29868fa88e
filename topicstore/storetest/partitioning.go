package storetest

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var partitioningTests = []subtest{
	{"SplitLayout", needs(Splits, testSplitLayout)},
	{"SplitErrors", needs(Splits, testSplitErrors)},
	{"KeyedRouting", needs(Splits, testKeyedRouting)},
	{"ProducerFollowsKey", needs(Splits, testProducerFollowsKey)},
	{"AlterKeysAndSplits", needs(Splits, testAlterKeys)},
	{"WriteRates", needs(AutoSplit, testWriteRates)},
	{"AutoSplit", needs(AutoSplit, testAutoSplit)},
}

// requireTiled checks that the active partitions of a keyed topic own
// disjoint key ranges that together cover the whole hash space.
func requireTiled(e *env, name string) {
	e.t.Helper()
	var act []topicstore.PartitionInfo
	for _, p := range e.info(name).Partitions {
		require.True(e.t, p.Keyed, "partition %d is keyed", p.ID)
		if p.Active {
			act = append(act, p)
		}
	}
	slices.SortFunc(act, func(a, b topicstore.PartitionInfo) int {
		if a.KeyLo < b.KeyLo {
			return -1
		}
		return 1
	})
	require.NotEmpty(e.t, act)
	require.Zero(e.t, act[0].KeyLo)
	for i := 1; i < len(act); i++ {
		require.Equal(e.t, act[i-1].KeyHi+1, act[i].KeyLo, "partitions %d and %d", act[i-1].ID, act[i].ID)
	}
	require.Equal(e.t, uint64(math.MaxUint64), act[len(act)-1].KeyHi)
}

// owner returns the active partition of topic name owning key's hash.
func (e *env) owner(name, key string) int32 {
	e.t.Helper()
	h := topicstore.KeyHash(key)
	for _, p := range e.info(name).Partitions {
		if p.Active && p.KeyLo <= h && h <= p.KeyHi {
			return p.ID
		}
	}
	e.t.Fatalf("no active partition of %q owns key %q", name, key)
	return -1
}

func (e *env) active(name string) []int32 {
	e.t.Helper()
	var out []int32
	for _, p := range e.info(name).Partitions {
		if p.Active {
			out = append(out, p.ID)
		}
	}
	return out
}

func testSplitLayout(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up"})
	require.Equal(t, []topicstore.PartitionInfo{{ID: 0, Active: true, Parent: -1, Keyed: true, KeyLo: 0, KeyHi: math.MaxUint64}}, e.info("t").Partitions)
	e.commit("t", body("before"))
	require.NoError(t, e.s.SplitPartition(ctx, "t", 0))
	ps := e.info("t").Partitions
	require.Len(t, ps, 3)
	require.Equal(t, []any{false, []int32{1, 2}, int64(1)}, []any{ps[0].Active, ps[0].Children, ps[0].EndOffset}, "the parent: inactive, readable")
	mid := uint64(math.MaxUint64) / 2
	for i, want := range [][2]uint64{{0, mid}, {mid + 1, math.MaxUint64}} {
		p := ps[i+1]
		require.Equal(t, []any{true, int32(0), want[0], want[1], int64(0)}, []any{p.Active, p.Parent, p.KeyLo, p.KeyHi, p.EndOffset}, "child %d", p.ID)
	}
	requireTiled(e, "t")
	require.Equal(t, []string{"0:before"}, e.scan("t", part(0)))
}

func testSplitErrors(e *env) {
	t := e.t
	e.create("flat", 2)
	e.createCfg(topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up", MaxActivePartitions: 3})
	require.ErrorIs(t, e.s.SplitPartition(ctx, "flat", 0), topicstore.ErrAutoPartitioning, "a flat topic has no key ranges")
	require.ErrorIs(t, e.s.SplitPartition(ctx, "nope", 0), topicstore.ErrTopicNotFound)
	require.ErrorIs(t, e.s.SplitPartition(ctx, "t", 1), topicstore.ErrPartitionNotFound)
	require.NoError(t, e.s.SplitPartition(ctx, "t", 0))
	require.ErrorIs(t, e.s.SplitPartition(ctx, "t", 0), topicstore.ErrPartitionInactive)
	require.NoError(t, e.s.SplitPartition(ctx, "t", 1))
	require.Equal(t, []int32{2, 3, 4}, e.active("t"))
	require.ErrorIs(t, e.s.SplitPartition(ctx, "t", 2), topicstore.ErrAutoPartitioning, "max_active_partitions")
	require.Equal(t, []int32{2, 3, 4}, e.active("t"))
	requireTiled(e, "t")
}

// testKeyedRouting: in a keyed topic a producer's messages, else a
// message group's, go to the active partition owning the key's hash; a
// write naming a split partition goes to the child continuing it.
func testKeyedRouting(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up", MinActivePartitions: 2})
	requireTiled(e, "t")
	for i := range 8 {
		id := fmt.Sprintf("prod-%d", i)
		e.commit("t", pmsg(id, 1, id))
		p, ok := e.s.Producer("t", id)
		require.True(t, ok)
		require.Equal(t, e.owner("t", id), p.Partition, "producer %s", id)
	}
	require.NoError(t, e.s.SplitPartition(ctx, "t", 0))
	for i := range 8 {
		g := fmt.Sprintf("group-%d", i)
		e.commit("t", grouped(g, g))
		last := e.scanMsgs("t", part(e.owner("t", g)))
		require.Equal(t, g, string(last[len(last)-1].Body), "group %s", g)
	}
	// Naming the split partition 0: a keyed message goes to the child
	// owning its key, one without key to a child of 0.
	p0 := e.info("t").Partitions[0]
	key := ""
	for i := 0; key == ""; i++ {
		if h := topicstore.KeyHash(fmt.Sprint("k", i)); p0.KeyLo <= h && h <= p0.KeyHi {
			key = fmt.Sprint("k", i)
		}
	}
	before := e.ends("t")
	m := grouped(key, "named")
	m.Partition = 0
	e.commit("t", m)
	require.Contains(t, p0.Children, e.owner("t", key))
	last := e.scanMsgs("t", part(e.owner("t", key)))
	require.Equal(t, "named", string(last[len(last)-1].Body))
	e.commit("t", at(0, body("keyless"))...)
	after := e.ends("t")
	require.Equal(t, before[0], after[0], "nothing is written to an inactive partition")
	n := 0
	for _, c := range e.info("t").Partitions[0].Children {
		n += int(after[c] - before[c])
	}
	require.Equal(t, 2, n, "both went to children of partition 0")
}

// testProducerFollowsKey: a producer bound to a partition that splits
// follows its key into the child owning it, keeping its seqnos.
func testProducerFollowsKey(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up"})
	e.commit("t", pmsg("p", 1, "p1"), pmsg("p", 2, "p2"))
	require.NoError(t, e.s.SplitPartition(ctx, "t", 0))
	p, ok := e.s.Producer("t", "p")
	require.True(t, ok, "still known")
	require.Equal(t, int32(-1), p.Partition, "its partition split: unbound until its next write")
	require.Equal(t, int64(2), p.MaxSeqNo)
	require.Equal(t, topicstore.WriteResult{Written: 1, Duplicates: 1}, e.commit("t", pmsg("p", 2, "dup"), pmsg("p", 3, "p3")))
	child := e.owner("t", "p")
	p, _ = e.s.Producer("t", "p")
	require.Equal(t, child, p.Partition)
	require.Equal(t, []string{"0:p3"}, e.scan("t", part(child)))
	require.Equal(t, []string{"0:p1", "1:p2"}, e.scan("t", part(0)))
}

// testAlterKeys: enabling auto-partitioning keys a flat topic's
// partitions; raising min_active_partitions of a keyed topic splits.
func testAlterKeys(e *env) {
	t := e.t
	e.create("t", 2)
	require.False(t, e.info("t").Partitions[0].Keyed)
	e.alter("t", func(c *topicstore.TopicConfig) { c.AutoPartitioningStrategy = "scale_up" })
	requireTiled(e, "t")
	require.Equal(t, []int32{0, 1}, e.active("t"))
	e.alter("t", func(c *topicstore.TopicConfig) { c.MinActivePartitions = 4 })
	require.Len(t, e.active("t"), 4)
	requireTiled(e, "t")
	for _, p := range e.info("t").Partitions {
		if !p.Active {
			require.Len(t, p.Children, 2, "an inactive partition %d was split", p.ID)
		}
	}
}

// testWriteRates: each partition's rate is the bytes written over the
// stabilization window, by the store's clock.
func testWriteRates(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, AutoPartitioningWindow: 10 * time.Second})
	for range 10 {
		e.commit("t", topicstore.Message{Partition: 0, Body: make([]byte, 100)})
		e.clk.Advance(500 * time.Millisecond)
	}
	rates, err := e.s.WriteRates("t")
	require.NoError(t, err)
	require.Len(t, rates, 2)
	written := float64(e.info("t").Partitions[0].WrittenBytes)
	require.Greater(t, rates[0], written/10/2, "at least half of what was written, per second of the window")
	require.LessOrEqual(t, rates[0], written/10)
	require.Zero(t, rates[1])
	e.clk.Advance(20 * time.Second)
	rates, err = e.s.WriteRates("t")
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0}, rates, "nothing written in the last window")
	_, err = e.s.WriteRates("nope")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}

// testAutoSplit: a 'scale_up' partition written above its threshold
// (90% of partition_write_speed_bytes_per_second) for a whole
// stabilization window splits; 'paused' stops that; max_active_partitions
// caps it.
func testAutoSplit(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up", MaxActivePartitions: 3,
		PartitionWriteSpeedBytes: 1000, PartitionWriteBurstBytes: 1 << 30, AutoPartitioningWindow: 10 * time.Second})
	payload := make([]byte, 200)
	// 2000 B/s against a threshold of 900 B/s: one message per 100 ms of the clock.
	write := func(n int, part int32) {
		for range n {
			e.commit("t", topicstore.Message{Partition: part, Body: payload})
			e.clk.Advance(100 * time.Millisecond)
		}
	}
	write(90, 0)
	require.Equal(t, []int32{0}, e.active("t"), "less than a window: no split yet")
	write(15, 0)
	require.Eventually(t, func() bool { return slices.Equal(e.active("t"), []int32{1, 2}) }, 10*time.Second, 10*time.Millisecond,
		"a whole window over the threshold splits: %v", e.active("t"))
	e.alter("t", func(c *topicstore.TopicConfig) { c.AutoPartitioningStrategy = "paused" })
	write(120, 1)
	require.Equal(t, []int32{1, 2}, e.active("t"), "paused: no split however hot")
	e.alter("t", func(c *topicstore.TopicConfig) { c.AutoPartitioningStrategy = "scale_up" })
	write(10, 1)
	require.Eventually(t, func() bool { return slices.Equal(e.active("t"), []int32{2, 3, 4}) }, 10*time.Second, 10*time.Millisecond,
		"resumed: %v", e.active("t"))
	write(120, 2)
	require.Equal(t, []int32{2, 3, 4}, e.active("t"), "max_active_partitions holds")
}
