package pebblestore

import (
	"fmt"
	"testing"
	"time"

	"topicgate/topicstore"
)

func TestReopenKeepsEverything(t *testing.T) {
	clk := newTestClock()
	dir := t.TempDir()
	s := openTest(t, dir, clk)
	createTopic(t, s, "a/b", 2)
	createTopic(t, s, "c", 1)
	for i := 0; i < 5; i++ {
		commit(t, s, "a/b", pmsg("p", int64(i+1), fmt.Sprint("m", i)), body("free"))
		clk.Advance(time.Second)
	}
	before := s.Topics()
	prods, _ := s.Producers("a/b")
	must(t, s.Close())
	mustErrIs(t, func() error { _, err := s.Commit(ctx, &topicstore.CommitRequest{}); return err }(), topicstore.ErrClosed)

	s = openTest(t, dir, clk)
	defer s.Close()
	eq(t, s.Topics(), before)
	prods2, _ := s.Producers("a/b")
	eq(t, prods2, prods)
	// Offsets continue, dedup state survived, bytes keep accumulating.
	eq(t, commit(t, s, "a/b", pmsg("p", 5, "dup"), pmsg("p", 6, "m5")), topicstore.WriteResult{Written: 1, Duplicates: 1})
	got, _ := scanAll(t, s, "a/b", part(prods[0].Partition))
	eq(t, got[len(got)-1], fmt.Sprintf("%d:m5", len(got)-1))
	after, _ := s.Topic("a/b")
	p := prods[0].Partition
	check(t, after.Partitions[p].Bytes > before[0].Partitions[p].Bytes)
	eq(t, after.Partitions[p].EndOffset, before[0].Partitions[p].EndOffset+1)
	// A new topic gets a fresh ID after reopen.
	createTopic(t, s, "d", 1)
	d, _ := s.Topic("d")
	check(t, d.ID > before[1].ID && d.ID > before[0].ID, d.ID)
}

func TestDropRecreateStartsEmpty(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	createTopic(t, s, "t", 2)
	createTopic(t, s, "keep", 1)
	commit(t, s, "t", pmsg("p", 10, "old"), body("x"))
	commit(t, s, "keep", body("k"))
	mustErrIs(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t"}), topicstore.ErrTopicExists)
	must(t, s.DropTopic(ctx, "t"))
	mustErrIs(t, s.DropTopic(ctx, "t"), topicstore.ErrTopicNotFound)
	_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{body("y")}}}})
	mustErrIs(t, err, topicstore.ErrTopicNotFound)
	createTopic(t, s, "t", 1)
	info, _ := s.Topic("t")
	eq(t, info.Partitions[0].EndOffset, int64(0))
	ps, _ := s.Producers("t")
	eq(t, len(ps), 0)
	eq(t, commit(t, s, "t", pmsg("p", 1, "new")), topicstore.WriteResult{Written: 1})
	must(t, s.Close())
	s = openTest(t, dir, nil)
	defer s.Close()
	got, _ := scanAll(t, s, "t", part(0))
	eq(t, got, []string{"0:new"})
	got, _ = scanAll(t, s, "keep", part(0))
	eq(t, got, []string{"0:k"})
	eq(t, len(s.Topics()), 2)
}

func TestAlterTopic(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	createTopic(t, s, "t", 2)
	commit(t, s, "t", topicstore.Message{Partition: 1, Body: []byte("x")})
	must(t, s.AlterTopic(ctx, "t", func(c *topicstore.TopicConfig) error {
		c.MinActivePartitions = 4
		c.SupportedCodecs = []topicstore.Codec{topicstore.CodecRaw}
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "c1"})
		return nil
	}))
	mustErrIs(t, s.AlterTopic(ctx, "t", func(c *topicstore.TopicConfig) error { c.MinActivePartitions = 3; return nil }), topicstore.ErrPartitionsDecrease)
	mustErrIs(t, s.AlterTopic(ctx, "t", func(c *topicstore.TopicConfig) error {
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "c1"})
		return nil
	}), topicstore.ErrConsumerExists)
	mustErrIs(t, s.AlterTopic(ctx, "nope", func(*topicstore.TopicConfig) error { return nil }), topicstore.ErrTopicNotFound)
	commit(t, s, "t", topicstore.Message{Partition: 3, Body: []byte("y")})
	_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{{Partition: 0, Codec: topicstore.CodecZstd, Body: []byte("z")}}}}})
	mustErrIs(t, err, topicstore.ErrCodecNotSupported)
	must(t, s.Close())
	s = openTest(t, dir, nil)
	defer s.Close()
	info, _ := s.Topic("t")
	eq(t, len(info.Partitions), 4)
	eq(t, info.Config.Consumers[0].Name, "c1")
	eq(t, []int64{info.Partitions[1].EndOffset, info.Partitions[3].EndOffset}, []int64{1, 1})
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "d"}))
	d, _ := s.Topic("d")
	eq(t, d.Config.MinActivePartitions, 1)
	check(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "e", MinActivePartitions: -1}) != nil)
	check(t, s.CreateTopic(ctx, topicstore.TopicConfig{}) != nil)
}

func TestScanMessageFieldsReuse(t *testing.T) {
	// Strings decoded during a scan stay valid after the callback; repeated
	// values are shared, not re-allocated.
	s := newStore(t, nil)
	createTopic(t, s, "t", 1)
	var msgs []topicstore.Message
	for i := 0; i < 100; i++ {
		msgs = append(msgs, topicstore.Message{Partition: 0, ProducerID: "prod", MessageGroupID: "grp", Attrs: []topicstore.Attr{{Key: "k", Value: fmt.Sprint(i % 2)}}, Body: []byte("b")})
	}
	commit(t, s, "t", msgs...)
	var ids, vals []string
	allocs := testing.AllocsPerRun(5, func() {
		ids, vals = ids[:0], vals[:0]
		must(t, s.Scan(ctx, "t", part(0), func(m *topicstore.Message) bool {
			ids = append(ids, m.ProducerID)
			vals = append(vals, m.Attrs[0].Value)
			return true
		}))
	})
	eq(t, len(ids), 100)
	eq(t, vals[99], "1")
	check(t, allocs < 200, "allocations per scan of 100 messages:", allocs)
	t.Logf("allocs per 100-message scan: %v", allocs)
}
