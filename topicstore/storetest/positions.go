package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var positionTests = []subtest{
	{"CommitWithWrites", testPositionCommit},
	{"Validation", testPositionValidation},
	{"ConflictWritesNothing", testPositionConflict},
	{"UpdatesSeeEarlierOnes", testPositionSequence},
	{"SetPosition", testSetPosition},
	{"ProducerFence", testProducerFence},
	{"StoredAndForgotten", testStoredPositions},
}

func posCommit(e *env, us ...topicstore.PositionUpdate) error {
	_, err := e.s.Commit(ctx, &topicstore.CommitRequest{Positions: us})
	return err
}

// testPositionCommit: read-process-write: the output and the input's
// position in one commit; other consumers are not moved.
func testPositionCommit(e *env) {
	t := e.t
	e.create("in", 2, topicstore.ConsumerConfig{Name: "c"}, topicstore.ConsumerConfig{Name: "d"})
	e.create("out", 1)
	e.commit("in", at(0, body("a"), body("b"), body("c"))...)
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("in", "c"))
	res := e.commitReq(&topicstore.CommitRequest{
		Writes:    []topicstore.TopicWrite{{Topic: "out", Messages: []topicstore.Message{body("A"), body("B")}}},
		Positions: []topicstore.PositionUpdate{{Topic: "in", Consumer: "c", Partition: 0, Offset: 2, Expect: 0}},
	})
	require.Equal(t, []topicstore.WriteResult{{Written: 2}}, res.Writes)
	require.Equal(t, map[int32]int64{0: 2, 1: 0}, e.positions("in", "c"))
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("in", "d"))
	require.Equal(t, []string{"0:A", "1:B"}, e.scan("out", part(0)))
	// Expect -1: unconditional; the end offset itself is a valid position.
	require.NoError(t, posCommit(e, topicstore.PositionUpdate{Topic: "in", Consumer: "d", Partition: 0, Offset: 3, Expect: -1}))
	require.Equal(t, map[int32]int64{0: 3, 1: 0}, e.positions("in", "d"))

	_, err := e.s.Positions("in", "nope")
	require.ErrorIs(t, err, topicstore.ErrConsumerNotFound)
	_, err = e.s.Positions("nope", "c")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}

func testPositionValidation(e *env) {
	t := e.t
	e.create("in", 2, topicstore.ConsumerConfig{Name: "c"})
	e.commit("in", at(0, body("a"), body("b"), body("c"))...)
	for _, c := range []struct {
		u   topicstore.PositionUpdate
		err error
	}{
		{topicstore.PositionUpdate{Topic: "in", Consumer: "x", Expect: -1}, topicstore.ErrConsumerNotFound},
		{topicstore.PositionUpdate{Topic: "in", Consumer: "c", Partition: 2, Expect: -1}, topicstore.ErrPartitionNotFound},
		{topicstore.PositionUpdate{Topic: "zz", Consumer: "c", Expect: -1}, topicstore.ErrTopicNotFound},
		{topicstore.PositionUpdate{Topic: "in", Consumer: "c", Offset: 4, Expect: -1}, topicstore.ErrOffsetOutOfRange},
		{topicstore.PositionUpdate{Topic: "in", Consumer: "c", Offset: -1, Expect: -1}, topicstore.ErrOffsetOutOfRange},
		{topicstore.PositionUpdate{Topic: "in", Consumer: "c", Partition: 1, Offset: 1, Expect: -1}, topicstore.ErrOffsetOutOfRange},
	} {
		require.ErrorIs(t, posCommit(e, c.u), c.err, "%+v", c.u)
	}
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("in", "c"))
}

// testPositionConflict: a stale Expect fails the whole commit: its writes
// and its other updates are not applied.
func testPositionConflict(e *env) {
	t := e.t
	e.create("in", 1, topicstore.ConsumerConfig{Name: "c"}, topicstore.ConsumerConfig{Name: "d"})
	e.commit("in", body("a"), body("b"))
	require.NoError(t, e.s.SetPosition(ctx, "in", "c", 0, 1))
	_, err := e.s.Commit(ctx, &topicstore.CommitRequest{
		Writes: []topicstore.TopicWrite{{Topic: "in", Messages: []topicstore.Message{body("x")}}},
		Positions: []topicstore.PositionUpdate{
			{Topic: "in", Consumer: "d", Partition: 0, Offset: 2, Expect: 0},
			{Topic: "in", Consumer: "c", Partition: 0, Offset: 2, Expect: 0}, // stale
		},
	})
	require.ErrorIs(t, err, topicstore.ErrPositionConflict)
	require.Contains(t, err.Error(), `"c"`, "the error names the consumer")
	require.Equal(t, []string{"0:a", "1:b"}, e.scan("in", part(0)))
	require.Equal(t, map[int32]int64{0: 0}, e.positions("in", "d"))
	require.Equal(t, map[int32]int64{0: 1}, e.positions("in", "c"))
}

// testPositionSequence: the updates of one request apply one after the
// other, each seeing the earlier ones.
func testPositionSequence(e *env) {
	t := e.t
	e.create("in", 1, topicstore.ConsumerConfig{Name: "c"})
	e.commit("in", body("a"), body("b"), body("c"))
	require.NoError(t, posCommit(e,
		topicstore.PositionUpdate{Topic: "in", Consumer: "c", Offset: 1, Expect: 0},
		topicstore.PositionUpdate{Topic: "in", Consumer: "c", Offset: 3, Expect: 1}))
	require.Equal(t, map[int32]int64{0: 3}, e.positions("in", "c"))
	require.ErrorIs(t, posCommit(e,
		topicstore.PositionUpdate{Topic: "in", Consumer: "c", Offset: 2, Expect: 3},
		topicstore.PositionUpdate{Topic: "in", Consumer: "c", Offset: 1, Expect: 3}), topicstore.ErrPositionConflict)
	require.Equal(t, map[int32]int64{0: 3}, e.positions("in", "c"))
}

func testSetPosition(e *env) {
	t := e.t
	e.create("in", 2, topicstore.ConsumerConfig{Name: "c"})
	e.commit("in", at(1, body("a"), body("b"))...)
	err := e.s.SetPosition(ctx, "in", "c", 1, 3)
	require.ErrorIs(t, err, topicstore.ErrOffsetOutOfRange)
	require.Contains(t, err.Error(), "3", "the error names the offset")
	require.ErrorIs(t, e.s.SetPosition(ctx, "in", "c", 1, -1), topicstore.ErrOffsetOutOfRange)
	require.ErrorIs(t, e.s.SetPosition(ctx, "in", "c", 2, 0), topicstore.ErrPartitionNotFound)
	require.ErrorIs(t, e.s.SetPosition(ctx, "in", "x", 0, 0), topicstore.ErrConsumerNotFound)
	require.ErrorIs(t, e.s.SetPosition(ctx, "nope", "c", 0, 0), topicstore.ErrTopicNotFound)
	require.NoError(t, e.s.SetPosition(ctx, "in", "c", 1, 2))
	require.Equal(t, map[int32]int64{0: 0, 1: 2}, e.positions("in", "c"))
	// A commit based on the value before SetPosition conflicts.
	require.ErrorIs(t, posCommit(e, topicstore.PositionUpdate{Topic: "in", Consumer: "c", Partition: 1, Offset: 1, Expect: 0}), topicstore.ErrPositionConflict)
	require.NoError(t, e.s.SetPosition(ctx, "in", "c", 1, 0), "rewinding is allowed")
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("in", "c"))
}

// testProducerFence: a commit fenced on a producer commits while the
// producer's last seqno is below the fence and fails whole (no writes, no
// positions) once a newer instance wrote a seqno at or above it; a fence
// on a producer the topic does not know passes, and a fenced producer is
// not changed by the check.
func testProducerFence(e *env) {
	t := e.t
	e.create("in", 1, topicstore.ConsumerConfig{Name: "c"})
	e.create("reg", 1)
	e.commit("in", body("a"), body("b"))
	epoch := func(n int64) topicstore.Message {
		return topicstore.Message{Partition: 0, ProducerID: "txn/x", SeqNo: n << 32, HasSeqNo: true}
	}
	fenced := func(below int64, out string) error {
		_, err := e.s.Commit(ctx, &topicstore.CommitRequest{
			Writes:    []topicstore.TopicWrite{{Topic: "in", Messages: []topicstore.Message{body(out)}}},
			Positions: []topicstore.PositionUpdate{{Topic: "in", Consumer: "c", Partition: 0, Offset: 1, Expect: -1}},
			Fences:    []topicstore.ProducerFence{{Topic: "reg", Producer: "txn/x", Below: below}},
		})
		return err
	}
	require.NoError(t, fenced(1<<32, "unknown"), "a producer the topic does not know passes")
	e.commit("reg", epoch(0))
	require.NoError(t, fenced(1<<32, "epoch0"))
	e.commit("reg", epoch(1))
	err := fenced(1<<32, "zombie")
	require.ErrorIs(t, err, topicstore.ErrFenced)
	require.Contains(t, err.Error(), `"txn/x"`, "the error names the producer")
	require.Equal(t, []string{"0:a", "1:b", "2:unknown", "3:epoch0"}, e.scan("in", part(0)))
	require.NoError(t, fenced(2<<32, "epoch1"))
	require.Equal(t, map[int32]int64{0: 1}, e.positions("in", "c"))
	info, ok := e.s.Producer("reg", "txn/x")
	require.True(t, ok)
	require.Equal(t, int64(1<<32), info.MaxSeqNo, "a fence does not move its producer")
	e.reopen()
	require.ErrorIs(t, fenced(1<<32, "after restart"), topicstore.ErrFenced)
	require.ErrorIs(t, fenced(1<<32, "nope"), topicstore.ErrFenced)
	_, err = e.s.Commit(ctx, &topicstore.CommitRequest{Fences: []topicstore.ProducerFence{{Topic: "gone", Producer: "p", Below: 1}}})
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}

func (e *env) stored(topic, consumer string) map[int32]int64 {
	e.t.Helper()
	pos, err := e.s.StoredPositions(topic, consumer)
	require.NoError(e.t, err)
	return pos
}

// testStoredPositions: StoredPositions lists the partitions a commit set
// (a committed 0 too) and a read_from consumer's initial ones, not those
// read from the start; a Forget forgets one (in its place among the
// request's updates), after which the partition reads from its start,
// read_from or not; all of it survives a reopen.
func testStoredPositions(e *env) {
	t := e.t
	threeHours(e, topicstore.ConsumerConfig{Name: "c"})
	e.alter("t", func(c *topicstore.TopicConfig) {
		c.Consumers = append(c.Consumers, topicstore.ConsumerConfig{Name: "late", ReadFrom: Start.Add(30 * time.Minute)})
	})
	require.Equal(t, map[int32]int64{}, e.stored("t", "c"), "never committed")
	require.Equal(t, map[int32]int64{0: 2, 1: 0}, e.stored("t", "late"), "read_from's initial positions, 0 too")

	require.NoError(t, posCommit(e, topicstore.PositionUpdate{Topic: "t", Consumer: "c", Partition: 1, Offset: 0, Expect: -1}))
	require.Equal(t, map[int32]int64{1: 0}, e.stored("t", "c"), "a committed 0 is stored")
	require.NoError(t, e.s.SetPosition(ctx, "t", "c", 0, 3))
	require.Equal(t, map[int32]int64{0: 3, 1: 0}, e.stored("t", "c"))

	forget := func(consumer string, part int32, expect int64) topicstore.PositionUpdate {
		return topicstore.PositionUpdate{Topic: "t", Consumer: consumer, Partition: part, Expect: expect, Forget: true}
	}
	require.ErrorIs(t, posCommit(e, forget("c", 0, 2)), topicstore.ErrPositionConflict, "Expect applies")
	require.ErrorIs(t, posCommit(e, forget("c", 2, -1)), topicstore.ErrPartitionNotFound)
	require.ErrorIs(t, posCommit(e, forget("x", 0, -1)), topicstore.ErrConsumerNotFound)
	require.Equal(t, map[int32]int64{0: 3, 1: 0}, e.stored("t", "c"), "refused forgets change nothing")

	require.NoError(t, posCommit(e, forget("c", 0, 3)))
	require.Equal(t, map[int32]int64{1: 0}, e.stored("t", "c"))
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "c"), "forgotten: from the start")
	require.NoError(t, posCommit(e, forget("c", 0, -1)), "forgetting what is not stored is fine")

	// In order: a move after a forget stands, a forget after a move wins.
	require.NoError(t, posCommit(e,
		forget("c", 1, -1),
		topicstore.PositionUpdate{Topic: "t", Consumer: "c", Partition: 1, Offset: 1, Expect: 0},
		topicstore.PositionUpdate{Topic: "t", Consumer: "c", Partition: 0, Offset: 4, Expect: 0},
		forget("c", 0, 4)))
	require.Equal(t, map[int32]int64{1: 1}, e.stored("t", "c"))

	// A read_from consumer forgets its initial position too.
	require.NoError(t, posCommit(e, forget("late", 0, 2)))
	require.Equal(t, map[int32]int64{1: 0}, e.stored("t", "late"))
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "late"))

	e.reopen()
	require.Equal(t, map[int32]int64{1: 1}, e.stored("t", "c"), "after a reopen")
	require.Equal(t, map[int32]int64{1: 0}, e.stored("t", "late"), "after a reopen")
	require.Equal(t, map[int32]int64{0: 0, 1: 0}, e.positions("t", "late"), "after a reopen")

	_, err := e.s.StoredPositions("t", "nope")
	require.ErrorIs(t, err, topicstore.ErrConsumerNotFound)
	_, err = e.s.StoredPositions("nope", "c")
	require.ErrorIs(t, err, topicstore.ErrTopicNotFound)
}
