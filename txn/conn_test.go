package txn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// scriptedStore is a Committer whose commits answer from a script of
// errors (nil: success), and which records what it was asked.
type scriptedStore struct {
	answers     []error
	got         []*topicstore.CommitRequest
	released    []topicstore.MsgRef
	undelivered []topicstore.MsgRef
	releasedAll []SharedKey
}

func (s *scriptedStore) Commit(_ context.Context, req *topicstore.CommitRequest) (topicstore.CommitResult, error) {
	s.got = append(s.got, req)
	var err error
	if len(s.answers) > 0 {
		err, s.answers = s.answers[0], s.answers[1:]
	}
	if err != nil {
		return topicstore.CommitResult{}, err
	}
	res := topicstore.CommitResult{Writes: make([]topicstore.WriteResult, len(req.Writes))}
	for i, w := range req.Writes {
		res.Writes[i].Written = len(w.Messages)
	}
	return res, nil
}

func (s *scriptedStore) Producer(string, string) (topicstore.ProducerInfo, bool) {
	return topicstore.ProducerInfo{}, false
}

func (s *scriptedStore) ReleaseSession(topic, consumer string, _ uint32, refs []topicstore.MsgRef) {
	if refs == nil {
		s.releasedAll = append(s.releasedAll, SharedKey{topic, consumer})
	}
	s.released = append(s.released, refs...)
}

// listener is a Listener that checks commits with check (nil: none) and
// records the transactions told to have ended.
type listener struct {
	check func(*Txn) error
	ended []ended
}

type ended struct {
	id        uint64
	committed bool
}

func (l *listener) CheckCommit(tx *Txn) error {
	if l.check == nil {
		return nil
	}
	return l.check(tx)
}

func (l *listener) Ended(tx *Txn, committed bool) { l.ended = append(l.ended, ended{tx.ID, committed}) }

func (s *scriptedStore) ReleaseUndelivered(_, _ string, _ uint32, refs []topicstore.MsgRef) {
	s.undelivered = append(s.undelivered, refs...)
}

func newConn(st *scriptedStore) (*Manager, *Conn) {
	m, c, _ := newListened(st)
	return m, c
}

func newListened(st *scriptedStore) (*Manager, *Conn, *listener) {
	m := NewManager(st, Options{Clock: func() time.Time { return time.Unix(0, 0) }})
	l := &listener{}
	return m, m.Conn(7, l), l
}

// TestAutocommitStatement: an autocommit statement is a transaction of its
// own: committed through the one path, counted, and its Txn reused.
func TestAutocommitStatement(t *testing.T) {
	st := &scriptedStore{}
	m, c := newConn(st)
	require.Equal(t, Autocommit, c.Mode())
	require.Nil(t, c.Current())
	var seen *Txn
	res, err := c.Statement(context.Background(), func(tx *Txn) error {
		seen = tx
		require.Same(t, tx, c.Current(), "the statement's transaction is current while it runs")
		return tx.Stage("a", msgs(3, 10))
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, res.Topics)
	require.Equal(t, 3, res.Writes[0].Written)
	require.Nil(t, c.Current())
	require.Equal(t, Idle, c.State())
	require.Len(t, st.got, 1)
	require.Equal(t, Stats{Commits: 1}, m.Stats())

	// A failed statement rolls back and publishes nothing.
	_, err = c.Statement(context.Background(), func(tx *Txn) error {
		require.Same(t, seen, tx, "the finished statement's Txn is reused")
		require.NoError(t, tx.Stage("a", msgs(1, 10)))
		return pgerror.New(pgerror.CodeDivisionByZero, "division by zero")
	})
	require.Equal(t, pgerror.CodeDivisionByZero, pgerror.Code(err))
	require.Len(t, st.got, 1)
	require.Equal(t, Stats{Commits: 1, Rollbacks: 1}, m.Stats())

	// Nothing to commit: no store call.
	_, err = c.Statement(context.Background(), func(*Txn) error { return nil })
	require.NoError(t, err)
	require.Len(t, st.got, 1)
}

// TestBlockLifecycle: BEGIN, a failure, the guard, COMMIT of the failed
// block (a rollback), and a statement inside a block joining it.
func TestBlockLifecycle(t *testing.T) {
	st := &scriptedStore{}
	m, c := newConn(st)
	ctx := context.Background()
	tx := c.Begin(ExplicitBlock)
	require.Equal(t, Open, c.State())
	require.Same(t, tx, c.Begin(ImplicitBlock), "a block already open stays")
	require.Equal(t, ExplicitBlock, c.Mode())
	_, err := c.Statement(ctx, func(t2 *Txn) error {
		require.Same(t, tx, t2, "a statement in a block stages into it")
		return t2.Stage("a", msgs(1, 10))
	})
	require.NoError(t, err)
	require.Empty(t, st.got, "nothing commits before the block ends")
	require.NoError(t, c.Guard(false))
	c.Fail()
	require.Equal(t, Failed, c.State())
	require.ErrorIs(t, c.Guard(false), ErrAborted)
	require.NoError(t, c.Guard(true), "ROLLBACK and COMMIT pass the guard")
	_, committed, err := c.End(ctx, true)
	require.NoError(t, err)
	require.False(t, committed, "COMMIT of a failed block rolls back")
	require.Empty(t, st.got)
	require.Equal(t, Autocommit, c.Mode())
	require.Equal(t, Stats{Rollbacks: 1}, m.Stats())

	// An implicit block that BEGIN makes explicit, committed.
	c.Begin(ImplicitBlock)
	c.MakeExplicit()
	require.Equal(t, ExplicitBlock, c.Mode())
	require.NoError(t, c.Block().Stage("b", msgs(2, 10)))
	res, committed, err := c.End(ctx, true)
	require.NoError(t, err)
	require.True(t, committed)
	require.Equal(t, 2, res.Writes[0].Written)
	require.Equal(t, Stats{Commits: 1, Rollbacks: 1}, m.Stats())

	// A session closed inside a block rolls it back.
	c.Begin(ExplicitBlock)
	c.Close()
	require.Equal(t, Idle, c.State())
	require.Equal(t, Stats{Commits: 1, Rollbacks: 2}, m.Stats())
}

// TestCommitErrors: the one mapping of store errors. A conflict is 40001
// and counted as one; a write-only commit's partition error names the
// topic and is not a conflict; the check refuses before the store is
// asked.
func TestCommitErrors(t *testing.T) {
	st := &scriptedStore{answers: []error{topicstore.ErrPositionConflict, topicstore.ErrPartitionNotFound, topicstore.ErrPartitionNotFound}}
	m, c, l := newListened(st)
	ctx := context.Background()
	c.Begin(ExplicitBlock).RecordRead(ReadKey{Topic: "in", Consumer: "c"}, 0, 4, 40)
	_, committed, err := c.End(ctx, true)
	require.False(t, committed)
	require.Equal(t, pgerror.CodeSerializationFailure, pgerror.Code(err))
	require.True(t, IsConflict(err))

	_, err = c.Statement(ctx, func(tx *Txn) error { return tx.Stage("out", msgs(1, 1)) })
	require.Equal(t, pgerror.CodeInvalidParameterValue, pgerror.Code(err), "a write-only commit's partition error is the statement's")
	require.Contains(t, err.Error(), `topic "out"`)

	c.Begin(ExplicitBlock).RecordRead(ReadKey{Topic: "in", Consumer: "c"}, 0, 4, 40)
	_, _, err = c.End(ctx, true)
	require.Equal(t, pgerror.CodeSerializationFailure, pgerror.Code(err), "a partition gone under a read is a conflict")

	l.check = func(*Txn) error {
		return pgerror.New(pgerror.CodeSerializationFailure, "partition reassigned")
	}
	c.Begin(ExplicitBlock)
	_, _, err = c.End(ctx, true)
	require.Equal(t, pgerror.CodeSerializationFailure, pgerror.Code(err))
	require.Len(t, st.got, 3, "the check refused before the store was asked")
	require.Equal(t, Stats{Rollbacks: 4, Conflicts: 3, CommitErrors: 1}, m.Stats())
}

// TestAtLeastOnceRead: an autocommit read whose rows were delivered keeps
// the positions others moved and moves the rest, one by one.
func TestAtLeastOnceRead(t *testing.T) {
	st := &scriptedStore{answers: []error{topicstore.ErrPositionConflict, topicstore.ErrPositionConflict, nil}}
	m, c, l := newListened(st)
	l.check = func(*Txn) error { t.Fatal("an at-least-once read skips the check"); return nil }
	_, err := c.Statement(context.Background(), func(tx *Txn) error {
		tx.AtLeastOnce()
		tx.RecordRead(ReadKey{Topic: "in", Consumer: "c", Partition: 0}, 0, 4, 40)
		tx.RecordRead(ReadKey{Topic: "in", Consumer: "c", Partition: 1}, 2, 6, 40)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, st.got, 3, "the joint commit, then each partition")
	require.Len(t, st.got[1].Positions, 1)
	require.Equal(t, int32(1), st.got[2].Positions[0].Partition)
	require.Equal(t, Stats{Commits: 1}, m.Stats())
}

// TestHeldSharedMessages: what an explicit block acquires is acknowledged
// at COMMIT, released at ROLLBACK, and a ROLLBACK TO SAVEPOINT releases
// what came after the savepoint.
func TestHeldSharedMessages(t *testing.T) {
	st := &scriptedStore{}
	_, c := newConn(st)
	ctx := context.Background()
	k := SharedKey{Topic: "q", Consumer: "w"}
	r := func(o int64) topicstore.MsgRef { return topicstore.MsgRef{Offset: o} }

	c.Hold(k, []topicstore.MsgRef{r(1)})
	require.False(t, c.Holds(k, r(1)), "an autocommit read holds nothing")
	c.Begin(ImplicitBlock)
	c.Hold(k, []topicstore.MsgRef{r(1)})
	require.False(t, c.Holds(k, r(1)), "nor does a read in an implicit block")
	c.Rollback()

	c.Begin(ExplicitBlock)
	c.Hold(k, []topicstore.MsgRef{r(1), r(2)})
	sp := c.Savepoint()
	c.Hold(k, []topicstore.MsgRef{r(3)})
	c.Unhold(k, []topicstore.MsgRef{r(2)}) // released by the session: gone for good
	require.NoError(t, c.RollbackTo(sp))
	require.Equal(t, []topicstore.MsgRef{r(3)}, st.released)
	require.True(t, c.Holds(k, r(1)))
	require.False(t, c.Holds(k, r(2)), "a message released since the savepoint stays released")
	require.False(t, c.Holds(k, r(3)))
	_, committed, err := c.End(ctx, true)
	require.NoError(t, err)
	require.True(t, committed)
	require.Len(t, st.got, 1)
	require.Equal(t, []topicstore.SharedAck{{Topic: "q", Consumer: "w", Session: 7, Refs: []topicstore.MsgRef{r(1)}}}, st.got[0].Acks)

	c.Begin(ExplicitBlock)
	c.Hold(k, []topicstore.MsgRef{r(5)})
	c.Rollback()
	require.Equal(t, []topicstore.MsgRef{r(3), r(5)}, st.released)
	require.False(t, c.Holds(k, r(5)))
}

// TestListenerEnded: the listener is told once that each transaction is
// over, whichever way it ended, and never of a ROLLBACK TO SAVEPOINT.
func TestListenerEnded(t *testing.T) {
	st := &scriptedStore{answers: []error{nil, topicstore.ErrPositionConflict}}
	_, c, l := newListened(st)
	ctx := context.Background()

	tx := c.Begin(ExplicitBlock)
	require.NoError(t, tx.Stage("out", msgs(1, 0)))
	_, _, err := c.End(ctx, true)
	require.NoError(t, err)
	require.Equal(t, []ended{{tx.ID, true}}, l.ended, "a commit")

	tx = c.Begin(ExplicitBlock)
	sp := c.Savepoint()
	require.NoError(t, c.RollbackTo(sp))
	require.Len(t, l.ended, 1, "a ROLLBACK TO SAVEPOINT ends nothing")
	tx.RecordRead(ReadKey{Topic: "in", Consumer: "c"}, 0, 4, 40)
	_, _, err = c.End(ctx, true)
	require.Error(t, err)
	require.Equal(t, ended{tx.ID, false}, l.ended[1], "a failed commit")

	var stmt uint64
	_, err = c.Statement(ctx, func(tx *Txn) error { stmt = tx.ID; return nil })
	require.NoError(t, err)
	require.Equal(t, ended{stmt, true}, l.ended[2], "an autocommit statement with nothing to store")
	_, err = c.Statement(ctx, func(tx *Txn) error { stmt = tx.ID; return errors.New("boom") })
	require.Error(t, err)
	require.Equal(t, ended{stmt, false}, l.ended[3], "a failed autocommit statement")

	tx = c.Begin(ImplicitBlock)
	c.Fail()
	_, committed, err := c.End(ctx, true)
	require.NoError(t, err)
	require.False(t, committed)
	require.Equal(t, ended{tx.ID, false}, l.ended[4], "a failed block's COMMIT rolls back")

	tx = c.Begin(ExplicitBlock)
	c.Rollback()
	require.Equal(t, ended{tx.ID, false}, l.ended[5], "ROLLBACK")

	tx = c.Begin(ExplicitBlock)
	c.Close()
	require.Equal(t, []ended{{tx.ID, false}}, l.ended[6:], "the session's close")
}

// TestRelease: the one release of shared messages counts the first ones
// as delivery attempts and hands the rest back undelivered, and the block
// holds none of them any more; Close releases every lock of the session
// on each shared consumer it acquired from.
func TestRelease(t *testing.T) {
	st := &scriptedStore{}
	_, c := newConn(st)
	k := SharedKey{Topic: "q", Consumer: "w"}
	r := func(o int64) topicstore.MsgRef { return topicstore.MsgRef{Offset: o} }

	c.Acquiring(k)
	c.Begin(ExplicitBlock)
	c.Hold(k, []topicstore.MsgRef{r(1), r(2), r(3)})
	c.Release(k, []topicstore.MsgRef{r(1), r(2)}, 1)
	require.Equal(t, []topicstore.MsgRef{r(1)}, st.released)
	require.Equal(t, []topicstore.MsgRef{r(2)}, st.undelivered)
	require.False(t, c.Holds(k, r(1)))
	require.False(t, c.Holds(k, r(2)))
	require.True(t, c.Holds(k, r(3)))

	c.Close()
	require.Equal(t, []SharedKey{k}, st.releasedAll)
	require.Equal(t, []topicstore.MsgRef{r(1)}, st.released, "the close releases all of k at once")
	require.False(t, c.Holds(k, r(3)))
}
