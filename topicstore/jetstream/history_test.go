package jetstream

import (
	"topicgate/topicstore/jetstream/catalog"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
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
// plan.ProducerRollupEvery writes, and maintenance compacts the idle ones), the
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
	// An active producer's subject holds at most plan.ProducerRollupEvery
	// messages: every plan.ProducerRollupEvery-th write rolls it up.
	s.mu.Lock()
	id := s.fold.ByName["t"].Rec.ID
	s.mu.Unlock()
	info, err := s.stream.Info(ctx, natsjs.WithSubjectFilter(s.subj.TopicFilter(fold.KindProducer, id)))
	require.NoError(t, err)
	require.Len(t, info.State.Subjects, producers)
	for subj, n := range info.State.Subjects {
		require.LessOrEqual(t, n, uint64(plan.ProducerRollupEvery), subj)
		require.Greater(t, n, uint64(1), "%s: not rolled up on every write", subj)
	}
	before := streamMessages(t, s)
	_, err = s.RunRetention(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	s.chain.Purge(ctx)
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
	id := s.fold.ByName["t"].Rec.ID
	s.mu.Unlock()
	left := func(st *Store) map[string]uint64 {
		out := map[string]uint64{}
		for _, f := range st.catalog.TopicFilters(id) {
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
	require.NoError(t, s.catalog.Change(ctx, "t", func(*fold.Topic) (*fold.CatalogRec, error) { return nil, nil }))
	require.Equal(t, before, left(s), "nothing was purged yet")
	require.NoError(t, s.Close())

	s2 := openStores(t, c, o, 1)[0]
	_, err = s2.RunRetention(ctx, time.Now())
	require.NoError(t, err)
	require.Empty(t, left(s2), "the dropped topic's messages after maintenance")
	t.Logf("a drop cut short left %d subjects behind; the next maintenance purged them all", len(before))

	// The tombstone is all the name's catalog subject holds; it goes once
	// TombstoneAge old, and no fold keeps anything of the topic then.
	tombstones := func() uint64 {
		info, err := s2.stream.Info(ctx, natsjs.WithSubjectFilter(s2.subj.Catalog("t")))
		require.NoError(t, err)
		return info.State.Subjects[s2.subj.Catalog("t")]
	}
	require.Equal(t, uint64(1), tombstones(), "the tombstone")
	_, err = s2.RunRetention(ctx, time.Now().Add(catalog.TombstoneAge+time.Minute))
	require.NoError(t, err)
	require.Zero(t, tombstones(), "the tombstone after TombstoneAge")
	s2.mu.Lock()
	require.Empty(t, s2.fold.Leftovers)
	_, ok := s2.fold.CatSeqs["t"]
	require.False(t, ok)
	s2.mu.Unlock()

	// A gateway that still holds the tombstone's sequence creates the
	// name again all the same.
	s3 := openStores(t, c, o, 1)[0]
	s3.mu.Lock()
	s3.fold.CatSeqs["t"] = s.fold.CatSeqs["t"]
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
	_, err := s.RunRetention(ctx, time.Now().Add(catalog.TombstoneAge+time.Minute))
	require.NoError(t, err)
	numbers := func(st *Store) map[string]int64 {
		out := map[string]int64{}
		for _, ti := range st.Topics() {
			out[ti.Config.Name] = int64(ti.ID)
		}
		return out
	}
	info, err := s.stream.Info(ctx, natsjs.WithSubjectFilter(s.subj.Filter(fold.KindCatalog)))
	require.NoError(t, err)
	require.Equal(t, map[string]uint64{s.subj.Catalog("a"): 2}, info.State.Subjects, "b's and c's records are purged")
	s2 := openStores(t, c, o, 1)[0]
	require.Equal(t, map[string]int64{"a": 1}, numbers(s2))
	require.NoError(t, s2.CreateTopic(ctx, topicstore.TopicConfig{Name: "d", MinActivePartitions: 1}))
	require.NoError(t, s.sync(ctx))
	want := map[string]int64{"a": 1, "d": 4}
	require.Equal(t, want, numbers(s))
	require.Equal(t, want, numbers(s2))
	require.Equal(t, want, numbers(openStores(t, c, o, 1)[0]))
}

// TestWideDecisionsRetired: every wide transaction's decision stays in
// the stream only until none of its intents is left and no gateway can
// need it (jetstream/wide). Here 5 wide commits of 20 producers each
// (batches of 8 messages) leave 5 decisions; once retention has cut their
// record batches and the hold has passed, maintenance publishes their
// producers' states again, purges what is below, and retires the
// decisions; the producers still deduplicate, and a gateway that starts
// afterwards folds the same state without them.
func TestWideDecisionsRetired(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGWIDE", Timeout: 2 * time.Second, RetentionInterval: -1, SnapshotEvery: -1,
		DecisionHold: time.Second}
	s := openStores(t, c, o, 1)[0]
	s.maxBatch = 8
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, RetentionPeriod: time.Minute}))
	commit := func(round int) topicstore.CommitResult {
		var msgs []topicstore.Message
		for p := range 20 {
			msgs = append(msgs, topicstore.Message{Partition: -1, ProducerID: fmt.Sprintf("p%d", p), SeqNo: int64(round + 1),
				HasSeqNo: true, Body: []byte("x")})
		}
		res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: msgs}}})
		require.NoError(t, err)
		return res
	}
	for round := range 5 {
		require.Equal(t, 20, commit(round).Writes[0].Written)
	}
	decisions := func(st *Store) (n, markers int) {
		info, err := st.stream.Info(ctx, natsjs.WithSubjectFilter(st.subj.Filter(fold.KindDecision)))
		require.NoError(t, err)
		for subj := range info.State.Subjects {
			_, h, err := st.io.lastFor(ctx, subj)
			require.NoError(t, err)
			if h.Get(fold.HGone) != "" {
				markers++
			} else {
				n++
			}
		}
		return n, markers
	}
	n, _ := decisions(s)
	require.Equal(t, 5, n, "one decision per wide commit")

	// Not before the hold has passed, nor while its record batches are
	// retained.
	retired, err := s.retire.Run(ctx, time.Now())
	require.NoError(t, err)
	require.Zero(t, retired, "within the hold")
	retired, err = s.retire.Run(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Zero(t, retired, "record batches retained")

	_, err = s.RunRetention(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.NoError(t, s.io.sync(ctx))
	retired, err = s.retire.Run(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 4, retired, "the last commit's batches are their partitions' last, which retention keeps")

	// Once both partitions have a later batch and retention cut again,
	// the last one goes too.
	_, err = s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
		{Partition: 0, Body: []byte("later")}, {Partition: 1, Body: []byte("later")}}}}})
	require.NoError(t, err)
	_, err = s.RunRetention(ctx, time.Now().Add(2*time.Hour))
	require.NoError(t, err)
	require.NoError(t, s.io.sync(ctx))
	retired, err = s.retire.Run(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, retired)
	require.NoError(t, s.io.sync(ctx))
	n, markers := decisions(s)
	require.Zero(t, n, "decisions left")
	require.Equal(t, 5, markers, "each retired decision's marker, until its TTL")
	s.mu.Lock()
	done := len(s.fold.Wide.Done)
	s.mu.Unlock()
	require.Zero(t, done)

	// The producers' states survived: a seqno again is a duplicate, the
	// next is new.
	res, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{
		{Partition: -1, ProducerID: "p3", SeqNo: 5, HasSeqNo: true, Body: []byte("again")},
		{Partition: -1, ProducerID: "p4", SeqNo: 6, HasSeqNo: true, Body: []byte("new")}}}}})
	require.NoError(t, err)
	require.Equal(t, topicstore.WriteResult{Written: 1, Duplicates: 1}, res.Writes[0])

	// A gateway that starts now folds the same producers, with no
	// transaction open or waiting.
	s2 := openStores(t, c, o, 1)[0]
	want, err := s.Producers("t")
	require.NoError(t, err)
	got, err := s2.Producers("t")
	require.NoError(t, err)
	require.ElementsMatch(t, want, got)
	s2.mu.Lock()
	open, done := len(s2.fold.Wide.Open), len(s2.fold.Wide.Done)
	s2.mu.Unlock()
	require.Zero(t, open)
	require.Zero(t, done)
	t.Logf("5 wide commits of 20 producers: their decisions retired, %d stream messages left", streamMessages(t, s))
}

// TestRetiredDecisionReachesLaggard: a fold that missed a wide
// transaction's decision (it was retired before the fold got there: a
// gateway further behind than DecisionHold) learns the outcome from the
// retirement's marker and ends with the state every other gateway has.
func TestRetiredDecisionReachesLaggard(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	o := Options{Replicas: 1, Stream: "TGLAG", Timeout: 2 * time.Second, RetentionInterval: -1, SnapshotEvery: -1,
		DecisionHold: time.Second}
	s := openStores(t, c, o, 1)[0]
	s.maxBatch = 8
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 12,
		Consumers: []topicstore.ConsumerConfig{{Name: "c"}}}))
	var msgs []topicstore.Message
	for p := range 12 {
		msgs = append(msgs, topicstore.Message{Partition: int32(p), Body: []byte("x")})
	}
	_, err := s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Messages: msgs}}})
	require.NoError(t, err)
	// Positions on 12 partitions: wider than a batch of 8.
	req := &topicstore.CommitRequest{}
	for p := range 12 {
		req.Positions = append(req.Positions, topicstore.PositionUpdate{Topic: "t", Consumer: "c", Partition: int32(p), Offset: 1, Expect: -1})
	}
	_, err = s.Commit(ctx, req)
	require.NoError(t, err)
	// Both commits were wide (12 record batches, then 12 positions); the
	// laggard misses the second's decision.
	s.mu.Lock()
	n := len(s.fold.Wide.Done)
	var decision uint64
	for _, d := range s.fold.Wide.Done {
		decision = max(decision, d.Seq)
	}
	s.mu.Unlock()
	require.Equal(t, 2, n)

	// What a laggard folded: everything before the decision.
	type stored struct {
		seq     uint64
		subject string
		h       nats.Header
		ts      time.Time
	}
	read := func(from, to uint64) []stored {
		var out []stored
		for seq := from; seq <= to; seq++ {
			m, err := s.stream.GetMsg(ctx, seq)
			if err != nil {
				continue // deleted
			}
			out = append(out, stored{seq, m.Subject, m.Header, m.Time})
		}
		return out
	}
	before := read(1, decision-1)

	// The record batches are retained: only the positions' decision goes.
	retired, err := s.retire.Run(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, retired)
	require.NoError(t, s.io.sync(ctx))
	_, err = s.stream.GetMsg(ctx, decision)
	require.ErrorIs(t, err, natsjs.ErrMsgNotFound, "the decision is gone")

	lag := newStore(o.withDefaults(), 0x7777)
	for _, m := range before {
		lag.foldAt(m.seq, m.subject, m.h, m.ts, false)
	}
	lag.mu.Lock()
	open := len(lag.fold.Wide.Open)
	lag.mu.Unlock()
	require.Equal(t, 1, open, "the laggard holds the transaction's intents")
	s.mu.Lock()
	last := s.applied
	s.mu.Unlock()
	for _, m := range read(decision, last) {
		lag.foldAt(m.seq, m.subject, m.h, m.ts, false)
	}
	lag.mu.Lock()
	foldErr, open, locked := lag.foldErr, len(lag.fold.Wide.Open), len(lag.fold.Wide.Locked)
	lag.mu.Unlock()
	require.NoError(t, foldErr)
	require.Zero(t, open)
	require.Zero(t, locked)
	want, err := s.Positions("t", "c")
	require.NoError(t, err)
	got, err := lag.Positions("t", "c")
	require.NoError(t, err)
	require.Equal(t, want, got)
	for p := range int32(12) {
		require.Equal(t, int64(1), got[p])
	}
}
