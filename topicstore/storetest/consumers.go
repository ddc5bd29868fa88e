package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var consumerTests = []subtest{
	{"OffsetForTime", testOffsetForTime},
	{"ReadFromAndAlter", testReadFrom},
	{"DropConsumer", testDropConsumer},
	{"Changed", testChanged},
}

// threeHours writes topic "t" (2 partitions): p0 offsets 0-1 at Start, 2
// at +1h, 3 at +2h; p1 offset 0 at +1h. The clock ends at +2h.
func threeHours(e *env, consumers ...topicstore.ConsumerConfig) {
	e.create("t", 2, consumers...)
	e.commit("t", at(0, body("a"), body("b"))...)
	e.clk.Advance(time.Hour)
	e.commit("t", at(0, body("c"))...)
	e.commit("t", at(1, body("d"))...)
	e.clk.Advance(time.Hour)
	e.commit("t", at(0, body("e"))...)
}

func testOffsetForTime(e *env) {
	t := e.t
	threeHours(e)
	for _, c := range []struct {
		at   time.Duration
		want map[int32]int64
	}{
		{-time.Hour, map[int32]int64{0: 0, 1: 0}},
		{0, map[int32]int64{0: 0, 1: 0}},
		{30 * time.Minute, map[int32]int64{0: 2, 1: 0}},
		{time.Hour, map[int32]int64{0: 2, 1: 0}},
		{time.Hour + time.Second, map[int32]int64{0: 3, 1: 1}},
		{3 * time.Hour, map[int32]int64{0: 4, 1: 1}}, // nothing that late: the end
	} {
		got, err := e.s.OffsetForTime("t", Start.Add(c.at))
		require.NoError(t, err)
		require.Equal(t, c.want, got, "at %v", c.at)
	}
	_, err := e.s.OffsetForTime("nope", Start)
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}

// testReadFrom: a consumer with read_from starts at OffsetForTime, one
// without at the start; changing read_from repositions, other changes do
// not; partitions added later start at 0 for everyone.
func testReadFrom(e *env) {
	t := e.t
	// Created before the data: read_from finds nothing written yet.
	threeHours(e, topicstore.ConsumerConfig{Name: "early", ReadFrom: Start.Add(time.Hour)})
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "early"))

	e.alter("t", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers,
			topicstore.ConsumerConfig{Name: "late", ReadFrom: Start.Add(30 * time.Minute)},
			topicstore.ConsumerConfig{Name: "all"})
	})
	require.Equal(t, map[int32]int64{0: 2, 1: 0}, e.positions("t", "late"))
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "all"))
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "early"), "untouched by an ALTER that does not change it")

	require.NoError(t, e.s.SetPosition(ctx, "t", "all", 0, 4))
	e.alter("t", setConsumer("early", func(c *topicstore.ConsumerConfig) { c.ReadFrom = Start.Add(90 * time.Minute) }))
	require.Equal(t, map[int32]int64{0: 3, 1: 1}, e.positions("t", "early"))
	e.alter("t", setConsumer("all", func(c *topicstore.ConsumerConfig) { c.Important = true }))
	require.Equal(t, map[int32]int64{0: 4, 1: 0}, e.positions("t", "all"), "other changes keep the position")
	e.alter("t", setConsumer("early", func(c *topicstore.ConsumerConfig) { c.ReadFrom = time.Time{} }))
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "early"), "no read_from: from the start")

	e.alter("t", func(c *topicstore.TopicConfig) { c.MinActivePartitions = 3 })
	require.Equal(t, map[int32]int64{0: 4, 1: 0, 2: 0}, e.positions("t", "all"))
	require.Equal(t, map[int32]int64{0: 2, 1: 0, 2: 0}, e.positions("t", "late"))
}

// testDropConsumer: a dropped consumer's positions go with it; re-added,
// it starts over.
func testDropConsumer(e *env) {
	t := e.t
	e.create("t", 1, topicstore.ConsumerConfig{Name: "c"}, topicstore.ConsumerConfig{Name: "d"})
	e.commit("t", body("a"), body("b"))
	require.NoError(t, e.s.SetPosition(ctx, "t", "c", 0, 2))
	require.NoError(t, e.s.SetPosition(ctx, "t", "d", 0, 1))
	e.alter("t", func(c *topicstore.TopicConfig) { c.Consumers = c.Consumers[1:] })
	_, err := e.s.Positions("t", "c")
	require.ErrorIs(t, err, topicstore.ErrConsumerNotFound)
	require.ErrorIs(t, e.s.SetPosition(ctx, "t", "c", 0, 1), topicstore.ErrConsumerNotFound)
	require.Equal(t, map[int32]int64{0: 1}, e.positions("t", "d"))
	e.alter("t", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "c"})
	})
	require.Equal(t, map[int32]int64{0: 0}, e.positions("t", "c"))
}

// testChanged: the channel closes when new messages of the topic become
// visible, and they are visible then.
func testChanged(e *env) {
	t := e.t
	e.create("t", 2)
	e.create("u", 1)
	_, err := e.s.Changed("nope")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
	ch, err := e.s.Changed("t")
	require.NoError(t, err)
	require.False(t, Closed(ch), "nothing published yet")
	e.commit("t", at(1, body("x"))...)
	require.True(t, Closed(ch), "a publish closes the channel")
	require.Equal(t, []string{"0:x"}, e.scan("t", part(1)), "what woke the reader is readable")
	ch2, err := e.s.Changed("t")
	require.NoError(t, err)
	require.False(t, Closed(ch2), "a new wait gets an open channel")
	e.commit("t", body("y"), body("z"))
	require.True(t, Closed(ch2))
	// A dropped topic wakes its waiters too.
	ch3, err := e.s.Changed("u")
	require.NoError(t, err)
	require.NoError(t, e.s.DropTopic(ctx, "u"))
	require.True(t, Closed(ch3))
}
