package storetest

import (
	"bytes"
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var retentionTests = []subtest{
	{"Period", testRetentionPeriod},
	{"StorageLimit", testRetentionStorage},
	{"ImportantConsumer", testRetentionImportant},
	{"AvailabilityPeriod", testRetentionAvailability},
	{"SharedConsumer", needs(Shared, testRetentionShared)},
	{"DrainedSplitPartition", needs(Splits, testRetentionDrained)},
}

// retTopic creates topic "t" (one partition) from cfg and writes one
// commit of n messages per step, dt apart; it returns each commit's time.
func retTopic(e *env, cfg topicstore.TopicConfig, n int, dt time.Duration, steps int) []time.Time {
	e.t.Helper()
	cfg.Name = "t"
	e.createCfg(cfg)
	var ts []time.Time
	for i := range steps {
		ts = append(ts, e.clk.Now())
		msgs := make([]topicstore.Message, n)
		for j := range msgs {
			msgs[j] = topicstore.Message{Partition: 0, Body: fmt.Appendf(nil, "m%03d", i*n+j)}
		}
		e.commit("t", msgs...)
		e.clk.Advance(dt)
	}
	return ts
}

func (e *env) p0() topicstore.PartitionInfo {
	e.t.Helper()
	return e.info("t").Partitions[0]
}

func testRetentionPeriod(e *env) {
	t := e.t
	// 5 commits of 3 messages, 10 minutes apart; retention 1h.
	ts := retTopic(e, topicstore.TopicConfig{RetentionPeriod: time.Hour}, 3, 10*time.Minute, 5)
	before := e.p0()
	require.Equal(t, int64(15), before.Messages)
	require.Equal(t, int64(0), e.retain(ts[0].Add(time.Hour)), "exactly the period old: kept")
	require.Equal(t, int64(6), e.retain(ts[1].Add(time.Hour+time.Second)))
	after := e.p0()
	require.Equal(t, [3]int64{6, 15, 9}, [3]int64{after.StartOffset, after.EndOffset, after.Messages})
	require.Equal(t, before.Bytes*3, after.Bytes*5, "three of five equal commits are left")
	require.Equal(t, before.WrittenBytes, after.WrittenBytes, "WrittenBytes only grows")
	require.Equal(t, []string{"6:m006", "7:m007"}, e.scan("t", topicstore.ScanRange{Partition: 0, Start: 0, End: 8}), "clamped to the new start")
	ot, err := e.s.OffsetForTime("t", ts[0])
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 6}, ot)

	// Everything expires: the partition keeps its offsets.
	require.Equal(t, int64(9), e.retain(ts[4].Add(2*time.Hour)))
	empty := e.p0()
	require.Equal(t, [4]int64{15, 15, 0, 0}, [4]int64{empty.StartOffset, empty.EndOffset, empty.Messages, empty.Bytes})
	require.True(t, empty.LastWrite.Equal(ts[4]), "LastWrite %v", empty.LastWrite)
	require.Equal(t, int64(0), e.retain(ts[4].Add(3*time.Hour)))
	e.commit("t", at(0, body("new"))...)
	require.Equal(t, []string{"15:new"}, e.scan("t", part(0)))
}

func testRetentionStorage(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", RetentionStorageMB: 1})
	big := bytes.Repeat([]byte{'x'}, 30<<10) // one message per commit
	for range 64 {
		e.commit("t", topicstore.Message{Partition: 0, Body: big})
	}
	before := e.p0()
	require.Greater(t, before.Bytes, int64(64*(30<<10)))
	n := e.retain(e.clk.Now()) // nothing is old: only the size limit applies
	after := e.p0()
	require.Equal(t, n, after.StartOffset)
	require.LessOrEqual(t, after.Bytes, int64(1<<20), "fits the limit")
	require.Greater(t, after.Bytes, int64(1<<20-2*(31<<10)), "oldest first, no more than needed")
	require.Equal(t, int64(0), e.retain(e.clk.Now()))
}

// testRetentionImportant: an important consumer holds back what it has
// not committed; a plain consumer's position below the new start reads as
// the start. (Positions sit at commit boundaries: a backend may delete
// whole record batches only, keeping more than the rules require.)
func testRetentionImportant(e *env) {
	t := e.t
	ts := retTopic(e, topicstore.TopicConfig{RetentionPeriod: time.Hour, Consumers: []topicstore.ConsumerConfig{
		{Name: "imp", Important: true}, {Name: "plain"}}}, 3, time.Minute, 3)
	now := ts[2].Add(2 * time.Hour) // everything expired
	require.Equal(t, int64(0), e.retain(now))
	require.NoError(t, e.s.SetPosition(ctx, "t", "imp", 0, 3))
	require.Equal(t, int64(3), e.retain(now))
	require.NoError(t, posCommit(e, topicstore.PositionUpdate{Topic: "t", Consumer: "imp", Offset: 6, Expect: 3}))
	require.Equal(t, int64(3), e.retain(now))
	require.Equal(t, int64(6), e.p0().StartOffset)
	require.Equal(t, map[int32]int64{0: 6}, e.positions("t", "plain"))
	require.Equal(t, map[int32]int64{0: 6}, e.positions("t", "imp"))
	require.NoError(t, e.s.SetPosition(ctx, "t", "imp", 0, 9))
	require.Equal(t, int64(3), e.retain(now))
	p := e.p0()
	require.Equal(t, [3]int64{9, 9, 0}, [3]int64{p.StartOffset, p.EndOffset, p.Bytes})
	require.ErrorIs(t, e.s.SetPosition(ctx, "t", "imp", 0, 5), topicstore.ErrOffsetOutOfRange, "below the start")
}

// testRetentionAvailability: a consumer with availability_period keeps
// what it has not committed for that long, and no longer.
func testRetentionAvailability(e *env) {
	t := e.t
	// Commits at t0, t0+1h, t0+2h; retention 30m; "av" keeps uncommitted
	// data for 90m.
	ts := retTopic(e, topicstore.TopicConfig{RetentionPeriod: 30 * time.Minute, Consumers: []topicstore.ConsumerConfig{
		{Name: "av", AvailabilityPeriod: 90 * time.Minute}}}, 2, time.Hour, 3)
	now := ts[2].Add(45 * time.Minute)        // all expired; ages 2h45, 1h45, 45m
	require.Equal(t, int64(4), e.retain(now)) // uncommitted but older than 90m: gone
	require.Equal(t, int64(4), e.p0().StartOffset)
	require.NoError(t, e.s.SetPosition(ctx, "t", "av", 0, 6)) // committed: the young commit may go
	require.Equal(t, int64(2), e.retain(now))
	require.Equal(t, int64(6), e.p0().StartOffset)
	// With the consumer behind, young data stays; old data does not wait.
	e.clk.Advance(time.Hour)
	for range 2 {
		e.commit("t", at(0, body("a"), body("b"))...)
		e.clk.Advance(time.Hour)
	}
	require.Equal(t, int64(2), e.retain(e.clk.Now()), "2h old goes, 1h old stays")
	require.Equal(t, int64(8), e.p0().StartOffset)
}

// testRetentionShared: retention deletes what a shared consumer has not
// finished; the consumer goes on from the new start.
func testRetentionShared(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "q", RetentionPeriod: time.Hour, Consumers: []topicstore.ConsumerConfig{sharedCfg("w", nil)}})
	e.commit("q", body("a"), body("b"))
	e.acquire("q", "w", 1, 1)
	e.clk.Advance(2 * time.Hour)
	e.commit("q", body("c"))
	require.Equal(t, int64(2), e.retain(e.clk.Now()))
	require.Equal(t, topicstore.SharedPartitionStats{StartOffset: 2, Available: 1, OldestUnacked: e.clk.Now(), Deliveries: map[int32]int64{0: 1}}, e.stats0("q", "w"))
	require.Equal(t, outcomes(topicstore.OutcomeUnknown), e.act("q", "w", 1, topicstore.ActionAck, r0(0)), "deleted")
	require.Equal(t, []string{"0:2:c:1"}, e.acq("q", "w", 2, 10))
}

// testRetentionDrained: an inactive (split) partition is marked deleted
// once retention has removed all its messages and no consumer is behind
// its end; its active children are untouched.
func testRetentionDrained(e *env) {
	t := e.t
	e.createCfg(topicstore.TopicConfig{Name: "t", RetentionPeriod: time.Hour, AutoPartitioningStrategy: "scale_up",
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}})
	e.commit("t", at(0, body("old"))...)
	require.NoError(t, e.s.SplitPartition(ctx, "t", 0))
	e.commit("t", body("new"))
	deleted := func() []bool {
		var out []bool
		for _, p := range e.info("t").Partitions {
			out = append(out, p.Deleted)
		}
		return out
	}
	e.retain(e.clk.Now())
	require.Equal(t, []bool{false, false, false}, deleted(), "it still holds data")
	e.clk.Advance(2 * time.Hour)
	require.Equal(t, int64(2), e.retain(e.clk.Now()))
	require.Equal(t, []bool{true, false, false}, deleted(), "emptied, and the consumer is not important")
	p := e.info("t").Partitions
	require.False(t, p[0].Active)
	require.True(t, p[1].Active && p[2].Active)
}
