package jetstream

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
)

// TestHistoryBoundedByLiveState: after 600 commits (10 producers, a
// consumer moving over 2 partitions) and retention removing every data
// message, the stream holds the live state (the catalog record, each
// partition's last record batch and retention start, each producer's and
// each position's last message) and a small constant of the gateway's own
// (its heartbeat, chain, lease), not one message per commit: producers,
// positions, starts and the lease roll their subjects up (producers every
// producerRollupEvery writes, and maintenance compacts the idle ones), the
// chain is purged by maintenance; producers that expired leave the stream.
func TestHistoryBoundedByLiveState(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	s := openStores(t, c, Options{Replicas: 1, Stream: "TGHIST", Timeout: 2 * time.Second, RetentionInterval: -1}, 1)[0]
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, RetentionPeriod: time.Minute,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	const commits, producers = 600, 10
	for i := range commits {
		p := fmt.Sprintf("p%d", i%producers)
		_, err := s.Commit(ctx, &topicstore.CommitRequest{
			Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
				{Partition: -1, ProducerID: p, SeqNo: int64(i/producers + 1), HasSeqNo: true, Body: []byte("x")}}}}})
		require.NoError(t, err)
		if i%3 == 0 {
			pos, err := s.Positions("t", "c")
			require.NoError(t, err)
			for part, off := range pos {
				ti, _ := s.Topic("t")
				if end := ti.Partitions[part].EndOffset; end > off {
					require.NoError(t, s.SetPosition(ctx, "t", "c", part, end))
				}
			}
		}
	}
	// An active producer's subject holds at most producerRollupEvery
	// messages: every producerRollupEvery-th write rolls it up.
	s.mu.Lock()
	id := s.byName["t"].rec.ID
	s.mu.Unlock()
	info, err := s.stream.Info(ctx, natsjs.WithSubjectFilter(s.prefix+".p."+strconv.FormatUint(id, 10)+".*"))
	require.NoError(t, err)
	require.Len(t, info.State.Subjects, producers)
	for subj, n := range info.State.Subjects {
		require.LessOrEqual(t, n, uint64(producerRollupEvery), subj)
		require.Greater(t, n, uint64(1), "%s: not rolled up on every write", subj)
	}
	before := streamMessages(t, s)
	_, err = s.RunRetention(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	s.purgeChain(ctx)
	after := streamMessages(t, s)
	// The live state: 1 catalog record; per partition its last record
	// batch and its start; per producer and per position its last message.
	live := 1 + 2*2 + producers + 2
	t.Logf("%d commits: %d stream messages before retention, %d after; live state %d", commits, before, after, live)
	require.LessOrEqual(t, after, uint64(live+10), "the stream holds the live state and a small constant")

	// Once the producers expire (14 days by default) they leave too; one
	// expiry notice is left for the topic.
	_, err = s.RunRetention(ctx, time.Now().Add(topicstore.DefaultProducerExpiry+time.Hour))
	require.NoError(t, err)
	expired := streamMessages(t, s)
	t.Logf("after the producers expired: %d stream messages", expired)
	require.Equal(t, after-producers+1, expired, "the producers' messages are gone, one notice came")
}

func streamMessages(t testing.TB, s *Store) uint64 {
	t.Helper()
	info, err := s.stream.Info(context.Background())
	require.NoError(t, err)
	return info.State.Msgs
}

// TestDroppedTopicLeavesNothing: a gateway that dies between a drop's
// catalog message and its purge leaves the topic's messages behind; the
// maintenance lease holder, here a gateway started after the drop, purges
// them: record batches, producers, positions, shared-consumer states and
// read-session members alike. Only the catalog's tombstone stays.
func TestDroppedTopicLeavesNothing(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGDROP", Timeout: 2 * time.Second, RetentionInterval: -1}
	s := openStores(t, c, o, 1)[0]
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}, {Name: "q", Shared: true}}}))
	for i := range 20 {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
			{Partition: -1, ProducerID: fmt.Sprintf("p%d", i%4), SeqNo: int64(i/4 + 1), HasSeqNo: true, Body: []byte("x")}}}}})
		require.NoError(t, err)
	}
	require.NoError(t, s.SetPosition(ctx, "t", "c", 0, 1))
	got, err := s.Acquire(ctx, topicstore.AcquireRequest{Topic: "t", Consumer: "q", Session: 1, Max: 3})
	require.NoError(t, err)
	require.NotEmpty(t, got)
	s.mu.Lock()
	id := s.byName["t"].rec.ID
	s.mu.Unlock()
	left := func(st *Store) map[string]uint64 {
		out := map[string]uint64{}
		for _, f := range st.topicFilters(id) {
			info, err := st.stream.Info(ctx, natsjs.WithSubjectFilter(f))
			require.NoError(t, err)
			for subj, n := range info.State.Subjects {
				out[subj] = n
			}
		}
		return out
	}
	before := left(s)
	require.NotEmpty(t, before)

	// The drop's catalog message, and the gateway dies before its purge.
	require.NoError(t, s.catalogChange(ctx, "t", func(*topicState) (*catalogRec, error) { return nil, nil }))
	require.Equal(t, before, left(s), "nothing was purged yet")
	require.NoError(t, s.Close())

	s2 := openStores(t, c, o, 1)[0]
	_, err = s2.RunRetention(ctx, time.Now())
	require.NoError(t, err)
	require.Empty(t, left(s2), "the dropped topic's messages after maintenance")
	t.Logf("a drop cut short left %d subjects behind; the next maintenance purged them all", len(before))

	// The tombstone is all the name's catalog subject holds; it goes once
	// tombstoneAge old, and no fold keeps anything of the topic then.
	catalog := func() uint64 {
		info, err := s2.stream.Info(ctx, natsjs.WithSubjectFilter(s2.catalogSubject("t")))
		require.NoError(t, err)
		return info.State.Subjects[s2.catalogSubject("t")]
	}
	require.Equal(t, uint64(1), catalog(), "the tombstone")
	_, err = s2.RunRetention(ctx, time.Now().Add(tombstoneAge+time.Minute))
	require.NoError(t, err)
	require.Zero(t, catalog(), "the tombstone after tombstoneAge")
	s2.mu.Lock()
	require.Empty(t, s2.leftovers)
	_, ok := s2.catSeqs["t"]
	require.False(t, ok)
	s2.mu.Unlock()

	// A gateway that still holds the tombstone's sequence creates the
	// name again all the same.
	s3 := openStores(t, c, o, 1)[0]
	s3.mu.Lock()
	s3.catSeqs["t"] = s.catSeqs["t"]
	s3.mu.Unlock()
	require.NoError(t, s3.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 1}))
}

// TestTopicNumbersSurviveDrops: topics keep their numbers (TopicInfo.ID)
// on every gateway, also one started after dropped topics' catalog
// records were purged, and a new topic takes the next number.
func TestTopicNumbersSurviveDrops(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGNUM", Timeout: 2 * time.Second, RetentionInterval: -1}
	s := openStores(t, c, o, 1)[0]
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: name, MinActivePartitions: 1}))
	}
	require.NoError(t, s.DropTopic(ctx, "b"))
	require.NoError(t, s.DropTopic(ctx, "c"))
	require.NoError(t, s.AlterTopic(ctx, "a", func(cfg *topicstore.TopicConfig) error { cfg.MinActivePartitions = 2; return nil }))
	_, err := s.RunRetention(ctx, time.Now().Add(tombstoneAge+time.Minute))
	require.NoError(t, err)
	numbers := func(st *Store) map[string]int64 {
		out := map[string]int64{}
		for _, ti := range st.Topics() {
			out[ti.Config.Name] = int64(ti.ID)
		}
		return out
	}
	info, err := s.stream.Info(ctx, natsjs.WithSubjectFilter(s.prefix+".c.>"))
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{s.catalogSubject("a"): 2}, info.State.Subjects, "b's and c's records are purged")
	s2 := openStores(t, c, o, 1)[0]
	require.Equal(t, map[string]int64{"a": 1}, numbers(s2))
	require.NoError(t, s2.CreateTopic(ctx, topicstore.TopicConfig{Name: "d", MinActivePartitions: 1}))
	require.NoError(t, s.sync(ctx))
	want := map[string]int64{"a": 1, "d": 4}
	require.Equal(t, want, numbers(s))
	require.Equal(t, want, numbers(s2))
	require.Equal(t, want, numbers(openStores(t, c, o, 1)[0]))
}
