package txn

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

type recordingStore struct {
	topicstore.Store
	got []*topicstore.CommitRequest
}

func (r *recordingStore) Commit(_ context.Context, req *topicstore.CommitRequest) (topicstore.CommitResult, error) {
	r.got = append(r.got, req)
	return topicstore.CommitResult{Writes: make([]topicstore.WriteResult, len(req.Writes))}, nil
}

func msgs(n int, size int) []topicstore.Message {
	out := make([]topicstore.Message, n)
	for i := range out {
		out[i] = topicstore.Message{Partition: -1, Body: make([]byte, size)}
	}
	return out
}

func TestStageAndCommitGroupsByTopic(t *testing.T) {
	tx := Begin(1, time.Unix(0, 0), 0)
	require.Equal(t, Open, tx.State())
	require.NoError(t, tx.Stage("a", msgs(2, 10)))
	require.NoError(t, tx.Stage("b", msgs(1, 10)))
	require.NoError(t, tx.Stage("a", msgs(3, 10)))
	n, _ := tx.Staged()
	require.Equal(t, 6, n)
	require.Equal(t, []string{"a", "b"}, tx.Topics())
	st := &recordingStore{}
	_, err := tx.Commit(context.Background(), st)
	require.NoError(t, err)
	require.Len(t, st.got, 1, "one atomic commit")
	require.Len(t, st.got[0].Writes, 2)
	require.Len(t, st.got[0].Writes[0].Messages, 5)
	require.Equal(t, Idle, tx.State())
}

func TestFailedAndRolledBackPublishNothing(t *testing.T) {
	st := &recordingStore{}
	tx := Begin(1, time.Unix(0, 0), 0)
	require.NoError(t, tx.Stage("a", msgs(2, 10)))
	tx.Fail()
	require.Equal(t, Failed, tx.State())
	_, err := tx.Commit(context.Background(), st)
	require.NoError(t, err)
	require.Empty(t, st.got)

	tx = Begin(2, time.Unix(0, 0), 0)
	require.NoError(t, tx.Stage("a", msgs(2, 10)))
	tx.Rollback()
	_, err = tx.Commit(context.Background(), st)
	require.NoError(t, err)
	require.Empty(t, st.got)
}

func TestStageLimit(t *testing.T) {
	tx := Begin(1, time.Unix(0, 0), 1000)
	require.NoError(t, tx.Stage("a", msgs(5, 100)))
	err := tx.Stage("a", msgs(5, 100))
	require.Error(t, err)
	require.Equal(t, pgerror.CodeProgramLimitExceeded, pgerror.Code(err))
	n, _ := tx.Staged()
	require.Equal(t, 5, n, "a refused stage adds nothing")
}
