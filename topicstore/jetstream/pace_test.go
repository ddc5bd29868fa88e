package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jstest"
	"topicgate/topicstore/jetstream/plan"
)

// pacedStore is the part of a Store that linger uses, with a frozen pace
// clock the test moves.
func pacedStore(delay time.Duration, now *time.Time) *Store {
	s := &Store{opts: Options{CommitDelay: delay}, commits: make(chan *plan.Request, 8), done: make(chan struct{})}
	s.pace.clock = func() time.Time { return *now }
	return s
}

func sessions(group []*plan.Request) []uint32 {
	var out []uint32
	for _, r := range group {
		out = append(out, r.Session)
	}
	return out
}

// TestLinger: the committer holds a group only for sessions that
// committed within paceWindow and are not in it, stops as soon as they
// have all joined (taking along whoever else came), and gives up after
// CommitDelay. A lone session never waits.
func TestLinger(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := pacedStore(time.Hour, &now)
	req := func(session uint32) *plan.Request { return &plan.Request{Session: session} }

	// Alone, again and again: nobody else is expected.
	require.Equal(t, []uint32{1}, sessions(s.linger([]*plan.Request{req(1)})))
	require.Equal(t, []uint32{1}, sessions(s.linger([]*plan.Request{req(1)})))
	require.Zero(t, s.commitHeld.Load())

	// Session 2's group waits for 1 (an hour at most); 3, unknown, joins
	// on the way without being waited for.
	s.commits <- req(3)
	s.commits <- req(1)
	require.Equal(t, []uint32{2, 3, 1}, sessions(s.linger([]*plan.Request{req(2)})))
	require.Equal(t, int64(1), s.commitHeld.Load())

	// It stops once the expected have joined: 4 stays queued.
	s.commits <- req(1)
	s.commits <- req(2)
	s.commits <- req(4)
	require.Equal(t, []uint32{3, 1, 2}, sessions(s.linger([]*plan.Request{req(3)})))
	require.Len(t, s.commits, 1)
	<-s.commits

	// Requests without a session (the store's own) are never waited for.
	own := pacedStore(time.Hour, &now)
	own.linger([]*plan.Request{req(0)})
	require.Empty(t, own.pace.last)
	require.Equal(t, []uint32{1}, sessions(own.linger([]*plan.Request{req(1)})))
	require.Zero(t, own.commitHeld.Load())

	// Past paceWindow nobody is expected any more, and the idle are
	// forgotten.
	now = now.Add(paceWindow + time.Millisecond)
	held := s.commitHeld.Load()
	require.Equal(t, []uint32{5}, sessions(s.linger([]*plan.Request{req(5)})))
	require.Equal(t, held, s.commitHeld.Load())
	require.Len(t, s.pace.last, 1)

	// A session that does not come: the group goes after CommitDelay.
	short := pacedStore(5*time.Millisecond, &now)
	short.linger([]*plan.Request{req(1)})
	require.Equal(t, []uint32{2}, sessions(short.linger([]*plan.Request{req(2)})))
	require.Equal(t, int64(1), short.commitHeld.Load())

	// A negative delay turns pacing off.
	off := pacedStore(-1, &now)
	off.linger([]*plan.Request{req(1)})
	require.Equal(t, []uint32{2}, sessions(off.linger([]*plan.Request{req(2)})))
	require.Zero(t, off.commitHeld.Load())
}

// TestPacedGroupSharesOnePartition: on a real store, a session's commit
// held for another session's goes out with it as one atomic batch, and
// their messages without a producer land in one partition, one after the
// other (the sticky partition), the next one round robin after the
// previous group's.
func TestPacedGroupSharesOnePartition(t *testing.T) {
	c := jstest.Start(t, 1)
	ctx := context.Background()
	s := openStores(t, c, Options{Replicas: 1, Stream: "TGPACE", Timeout: 2 * time.Second, CommitDelay: time.Hour}, 1)[0]
	now := time.Now()
	s.pace.clock = func() time.Time { return now } // nobody leaves the window
	holding := make(chan struct{}, 1)
	s.pace.holding = holding
	require.NoError(t, s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 4}))
	insert := func(session uint32, body string) error {
		_, err := s.Commit(ctx, &topicstore.CommitRequest{Session: session,
			Writes: []topicstore.TopicWrite{{Topic: "t", Messages: []topicstore.Message{{Partition: -1, Body: []byte(body)}}}}})
		return err
	}
	require.NoError(t, insert(1, "first"))
	groups := s.commitGroups.Load()
	done := make(chan error, 1)
	go func() { done <- insert(2, "second") }()
	<-holding // 2's group waits for 1
	require.NoError(t, insert(1, "third"))
	require.NoError(t, <-done)
	require.Equal(t, groups+1, s.commitGroups.Load(), "one batch for both")

	where := map[string][2]int64{} // body -> partition, offset
	for p := range int32(4) {
		require.NoError(t, s.Scan(ctx, "t", topicstore.ScanRange{Partition: p, End: -1}, func(m *topicstore.Message) bool {
			where[string(m.Body)] = [2]int64{int64(p), m.Offset}
			return true
		}))
	}
	first, second, third := where["first"], where["second"], where["third"]
	require.Equal(t, second[0], third[0], "one partition for the group: %v", where)
	require.Equal(t, (first[0]+1)%4, second[0], "the next partition round robin: %v", where)
	require.Equal(t, second[1]+1, third[1], "in the order they were grouped")
}
