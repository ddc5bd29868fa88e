package storetest

import (
	"errors"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var topicTests = []subtest{
	{"Create", testCreate},
	{"CreateInvalid", testCreateInvalid},
	{"Alter", testAlter},
	{"DropAndRecreate", testDropRecreate},
	{"Close", testClose},
}

func testCreate(e *env) {
	t := e.t
	e.create("orders/eu", 2)
	require.NoError(t, e.s.CreateTopic(ctx, topicstore.TopicConfig{Name: "a"}))
	err := e.s.CreateTopic(ctx, topicstore.TopicConfig{Name: "a", MinActivePartitions: 5})
	require.ErrorIs(t, err, topicstore.ErrTopicExists)

	var names []string
	for _, ti := range e.s.Topics() {
		names = append(names, ti.Config.Name)
	}
	require.Equal(t, []string{"a", "orders/eu"}, names, "Topics is sorted by name")
	a := e.info("a")
	require.Equal(t, 1, a.Config.MinActivePartitions, "the default partition count, and the refused re-create changed nothing")
	require.True(t, a.CreatedAt.Equal(e.clk.Now()), "CreatedAt %v", a.CreatedAt)
	require.NotEqual(t, a.ID, e.info("orders/eu").ID)
	require.Equal(t, []topicstore.PartitionInfo{{ID: 0, Active: true, Parent: -1}}, a.Partitions)
	require.Len(t, e.info("orders/eu").Partitions, 2)

	_, err = e.s.Topic("nope")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
	if pc, ok := e.s.(topicstore.PartitionCounter); ok {
		_, err = pc.PartitionCount("nope")
		require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
	}
}

func testCreateInvalid(e *env) {
	t := e.t
	for _, c := range []struct {
		cfg    topicstore.TopicConfig
		target error // nil: any error
	}{
		{cfg: topicstore.TopicConfig{}},
		{cfg: topicstore.TopicConfig{Name: "t", MinActivePartitions: -1}},
		{cfg: topicstore.TopicConfig{Name: "t", MinActivePartitions: topicstore.MaxPartitions + 1}},
		{cfg: topicstore.TopicConfig{Name: "t", MinActivePartitions: 3, MaxActivePartitions: 2}},
		{cfg: topicstore.TopicConfig{Name: "t", SupportedCodecs: []topicstore.Codec{9}}},
		{cfg: topicstore.TopicConfig{Name: "t", Consumers: []topicstore.ConsumerConfig{{Name: ""}}}},
		{cfg: topicstore.TopicConfig{Name: "t", Consumers: []topicstore.ConsumerConfig{{Name: "c"}, {Name: "c"}}}, target: topicstore.ErrConsumerExists},
		{cfg: topicstore.TopicConfig{Name: "t", AutoPartitioningStrategy: "scale_up", RetentionStorageMB: 1}, target: topicstore.ErrAutoPartitioning},
	} {
		err := e.s.CreateTopic(ctx, c.cfg)
		require.Error(t, err, "%+v", c.cfg)
		if c.target != nil {
			require.ErrorIs(t, err, c.target, "%+v", c.cfg)
		}
	}
	require.Empty(t, e.s.Topics(), "no invalid topic was created")
}

func testAlter(e *env) {
	t := e.t
	e.create("t", 2)
	e.commit("t", at(1, body("x"))...)
	e.alter("t", func(c *topicstore.TopicConfig) {
		c.MinActivePartitions = 4
		c.SupportedCodecs = []topicstore.Codec{topicstore.CodecRaw}
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "c1"})
		c.Name = "renamed" // the name is not the callback's to change
	})
	info := e.info("t")
	require.Len(t, info.Partitions, 4)
	require.Equal(t, "t", info.Config.Name)
	require.Equal(t, []topicstore.Codec{topicstore.CodecRaw}, info.Config.SupportedCodecs)
	require.Equal(t, "c1", info.Config.Consumers[0].Name)
	_, err := e.s.Topic("renamed")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)

	// The new partitions take writes; the old ones keep their messages.
	e.commit("t", at(3, body("y"))...)
	require.Equal(t, []int64{0, 1, 0, 1}, e.ends("t"))
	require.Equal(t, []string{"0:x"}, e.scan("t", part(1)))
	err = e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{{Partition: 0, Codec: topicstore.CodecZstd, Body: []byte("z")}}})
	require.ErrorIs(t, err, topicstore.ErrCodecNotSupported, "the altered codec list applies")

	alterErr := func(name string, fn func(*topicstore.TopicConfig) error) error { return e.s.AlterTopic(ctx, name, fn) }
	require.ErrorIs(t, alterErr("t", func(c *topicstore.TopicConfig) error { c.MinActivePartitions = 3; return nil }), topicstore.ErrPartitionsDecrease)
	require.ErrorIs(t, alterErr("t", func(c *topicstore.TopicConfig) error {
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "c1"})
		return nil
	}), topicstore.ErrConsumerExists)
	require.ErrorIs(t, alterErr("nope", func(*topicstore.TopicConfig) error { return nil }), topicstore.ErrTopicNotFound)
	mine := errors.New("refused by the callback")
	require.ErrorIs(t, alterErr("t", func(c *topicstore.TopicConfig) error { c.MinActivePartitions = 9; return mine }), mine)
	require.Len(t, e.info("t").Partitions, 4, "a failed ALTER changes nothing")

	// Auto-partitioning, once enabled, can be paused but not disabled.
	e.alter("t", func(c *topicstore.TopicConfig) { c.AutoPartitioningStrategy = "scale_up" })
	e.alter("t", func(c *topicstore.TopicConfig) { c.AutoPartitioningStrategy = "paused" })
	require.ErrorIs(t, alterErr("t", func(c *topicstore.TopicConfig) error { c.AutoPartitioningStrategy = "disabled"; return nil }), topicstore.ErrAutoPartitioning)
	require.Equal(t, "paused", e.info("t").Config.AutoPartitioningStrategy)
}

func testDropRecreate(e *env) {
	t := e.t
	e.create("t", 2, topicstore.ConsumerConfig{Name: "c"})
	e.create("keep", 1)
	e.commit("t", pmsg("p", 10, "old"), body("x"))
	e.commit("keep", body("k"))
	ch, err := e.s.Changed("t")
	require.NoError(t, err)
	oldID := e.info("t").ID

	require.NoError(t, e.s.DropTopic(ctx, "t"))
	require.True(t, Closed(ch), "DropTopic closes the topic's Changed channel")
	require.ErrorIs(t, e.s.DropTopic(ctx, "t"), topicstore.ErrTopicNotFound)
	_, err = e.s.Topic("t")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
	require.ErrorIs(t, e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{body("y")}}), topicstore.ErrTopicNotFound)
	require.ErrorIs(t, e.s.Scan(ctx, "t", part(0), func(*topicstore.Message) bool { return true }), topicstore.ErrTopicNotFound)
	_, err = e.s.Positions("t", "c")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
	_, err = e.s.Producers("t")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
	_, err = e.s.Changed("t")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)

	// Re-created with the same name: a new topic, empty.
	e.create("t", 1, topicstore.ConsumerConfig{Name: "c"})
	info := e.info("t")
	require.NotEqual(t, oldID, info.ID)
	require.Equal(t, []int64{0}, e.ends("t"))
	ps, err := e.s.Producers("t")
	require.NoError(t, err)
	require.Empty(t, ps)
	_, ok := e.s.Producer("t", "p")
	require.False(t, ok, "the old topic's producer is forgotten")
	require.Equal(t, map[int32]int64{0: 0}, e.positions("t", "c"))
	require.Equal(t, topicstore.WriteResult{Written: 1}, e.commit("t", pmsg("p", 1, "new")), "seqno 1 is no duplicate any more")
	require.Equal(t, []string{"0:new"}, e.scan("t", part(0)))
	require.Equal(t, []string{"0:k"}, e.scan("keep", part(0)))
	require.Len(t, e.s.Topics(), 2)
}

func testClose(e *env) {
	t := e.t
	e.create("t", 1)
	e.commit("t", body("a"))
	require.NoError(t, e.s.Close())
	require.ErrorIs(t, e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{body("b")}}), topicstore.ErrClosed)
	require.ErrorIs(t, e.s.CreateTopic(ctx, topicstore.TopicConfig{Name: "u"}), topicstore.ErrClosed)
	require.ErrorIs(t, e.s.Scan(ctx, "t", part(0), func(*topicstore.Message) bool { return true }), topicstore.ErrClosed)
	require.ErrorIs(t, e.s.SetPosition(ctx, "t", "c", 0, 0), topicstore.ErrClosed)
}
