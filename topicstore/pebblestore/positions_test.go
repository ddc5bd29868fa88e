package pebblestore

import (
	"testing"

	"topicgate/topicstore"
)

func consumerTopic(t testing.TB, s *PebbleStore, name string, parts int, cons ...topicstore.ConsumerConfig) {
	t.Helper()
	must(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: name, MinActivePartitions: parts, Consumers: cons}))
}

func positions(t testing.TB, s *PebbleStore, topic, consumer string) map[int32]int64 {
	t.Helper()
	p, err := s.Positions(topic, consumer)
	must(t, err)
	return p
}

func at(p int32, msgs ...topicstore.Message) []topicstore.Message {
	for i := range msgs {
		msgs[i].Partition = p
	}
	return msgs
}

func TestPositionsCommitAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, nil)
	consumerTopic(t, s, "in", 2, topicstore.ConsumerConfig{Name: "c"}, topicstore.ConsumerConfig{Name: "d"})
	createTopic(t, s, "out", 1)
	commit(t, s, "in", at(0, body("a"), body("b"), body("c"))...)
	// Read-process-write: output and position in one commit.
	_, err := s.Commit(ctx, &topicstore.CommitRequest{
		Writes:    []topicstore.TopicWrite{{Topic: "out", Messages: []topicstore.Message{body("A"), body("B")}}},
		Positions: []topicstore.PositionUpdate{{Topic: "in", Consumer: "c", Partition: 0, Offset: 2, Expect: 0}},
	})
	must(t, err)
	must(t, s.Close())

	s = openTest(t, dir, nil)
	defer s.Close()
	eq(t, positions(t, s, "in", "c"), map[int32]int64{0: 2, 1: 0})
	eq(t, positions(t, s, "in", "d"), map[int32]int64{0: 0, 1: 0})
	got, _ := scanAll(t, s, "out", part(0))
	eq(t, got, []string{"0:A", "1:B"})
}
