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

// commit ends tx through the one commit path of a fresh Conn.
func commit(tx *Txn, st Committer) (Result, error) {
	return NewManager(st, Options{}).Conn(1, nil).commit(context.Background(), tx)
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
	_, err := commit(tx, st)
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
	_, err := commit(tx, st)
	require.ErrorIs(t, err, ErrFailed, "a failed transaction's Commit is an error, never a silent success")
	require.Empty(t, st.got)
	require.Equal(t, Idle, tx.State())

	tx = Begin(2, time.Unix(0, 0), 0)
	require.NoError(t, tx.Stage("a", msgs(2, 10)))
	tx.Rollback()
	require.Equal(t, Idle, tx.State())
	n, _ := tx.Staged()
	require.Zero(t, n, "a rolled back transaction holds nothing")
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

// fakeStager records spills and discards.
type fakeStager struct {
	staged    [][]topicstore.Message
	discarded []uint64
}

func (f *fakeStager) StageBatch(_ context.Context, id uint64, topic string, msgs []topicstore.Message) (topicstore.StagedBatch, error) {
	f.staged = append(f.staged, append([]topicstore.Message(nil), msgs...))
	return topicstore.StagedBatch{Topic: topic, TxnID: id, Messages: len(msgs)}, nil
}

func (f *fakeStager) DiscardStaged(id uint64) error {
	f.discarded = append(f.discarded, id)
	return nil
}

type failingStore struct{ recordingStore }

func (f *failingStore) Commit(context.Context, *topicstore.CommitRequest) (topicstore.CommitResult, error) {
	return topicstore.CommitResult{}, topicstore.ErrPositionConflict
}

func TestSpillThreshold(t *testing.T) {
	fs := &fakeStager{}
	tx := Begin(7, time.Unix(0, 0), 0)
	tx.SetStager(fs)
	tx.SpillBytes = 1000
	require.NoError(t, tx.Stage("a", msgs(5, 100))) // 5 × 164 bytes: in memory
	require.Empty(t, fs.staged)
	require.NoError(t, tx.Stage("b", msgs(1, 100)))
	require.NoError(t, tx.Stage("a", msgs(1, 100))) // 7 × 164 > 1000: spill
	require.Len(t, fs.staged, 2, "one StageBatch per topic")
	require.Len(t, fs.staged[0], 6)
	require.Len(t, fs.staged[1], 1)
	require.NoError(t, tx.Stage("a", msgs(2, 100))) // in memory again
	require.Len(t, fs.staged, 2)
	n, b := tx.Staged()
	require.Equal(t, 9, n)
	require.Equal(t, int64(9*164), b)
	req := tx.Request()
	require.Len(t, req.Writes, 2)
	require.Len(t, req.Writes[0].Staged, 1)
	require.Len(t, req.Writes[0].Messages, 2, "later messages stay in memory, after the staged ones")
	require.Len(t, req.Writes[1].Staged, 1)
	require.Empty(t, req.Writes[1].Messages)
	st := &recordingStore{}
	_, err := commit(tx, st)
	require.NoError(t, err)
	require.Empty(t, fs.discarded, "committed data belongs to the store")

	// Rollback and a failed commit discard what was spilled.
	tx = Begin(8, time.Unix(0, 0), 0)
	tx.SetStager(fs)
	tx.SpillBytes = 100
	require.NoError(t, tx.Stage("a", msgs(2, 100)))
	tx.Rollback()
	require.Equal(t, []uint64{8}, fs.discarded)
	tx = Begin(9, time.Unix(0, 0), 0)
	tx.SetStager(fs)
	tx.SpillBytes = 100
	require.NoError(t, tx.Stage("a", msgs(2, 100)))
	_, err = commit(tx, &failingStore{})
	require.Error(t, err)
	require.Equal(t, []uint64{8, 9}, fs.discarded)

	// The total limit counts spilled bytes too.
	tx = Begin(10, time.Unix(0, 0), 1000)
	tx.SetStager(fs)
	tx.SpillBytes = 100
	require.NoError(t, tx.Stage("a", msgs(5, 100)))
	err = tx.Stage("a", msgs(2, 100))
	require.Equal(t, pgerror.CodeProgramLimitExceeded, pgerror.Code(err))
	require.Equal(t, int64(DefaultSpillBytes), Begin(11, time.Unix(0, 0), 0).SpillBytes)
}

type refusingStager struct{ fakeStager }

func (r *refusingStager) StageBatch(context.Context, uint64, string, []topicstore.Message) (topicstore.StagedBatch, error) {
	return topicstore.StagedBatch{}, topicstore.ErrCodecNotSupported
}

func TestSpillErrorsHaveSQLSTATEs(t *testing.T) {
	rs := &refusingStager{}
	tx := Begin(1, time.Unix(0, 0), 0)
	tx.SetStager(rs)
	tx.SpillBytes = 10
	err := tx.Stage("a", msgs(1, 100))
	require.Equal(t, pgerror.CodeInvalidParameterValue, pgerror.Code(err))
	tx.Rollback()
	require.Equal(t, []uint64{1}, rs.discarded, "a failed spill may have written part: discard")
}

// TestSavepoint: RollbackTo drops what was staged and read after the mark,
// keeps what came before, and clears a later failure.
func TestSavepoint(t *testing.T) {
	tx := Begin(1, time.Now(), 0)
	k := ReadKey{Topic: "in", Consumer: "c", Partition: 0}
	k2 := ReadKey{Topic: "in", Consumer: "c", Partition: 1}
	if err := tx.Stage("out", []topicstore.Message{{Body: []byte("before")}}); err != nil {
		t.Fatal(err)
	}
	tx.RecordRead(k, 0, 5, 50)
	m := tx.Mark()
	if err := tx.Stage("out", []topicstore.Message{{Body: []byte("after")}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Stage("other", []topicstore.Message{{Body: []byte("after")}}); err != nil {
		t.Fatal(err)
	}
	tx.RecordRead(k, 0, 9, 40)
	tx.RecordRead(k2, 3, 4, 10)
	tx.Fail()
	if err := tx.RollbackTo(m); err != nil {
		t.Fatal(err)
	}
	if tx.State() != Open {
		t.Fatalf("state %c, want open", tx.State())
	}
	req := tx.Request()
	if len(req.Writes) != 1 || req.Writes[0].Topic != "out" || len(req.Writes[0].Messages) != 1 || string(req.Writes[0].Messages[0].Body) != "before" {
		t.Fatalf("writes after RollbackTo: %+v", req.Writes)
	}
	if len(req.Positions) != 1 || req.Positions[0].Partition != 0 || req.Positions[0].Offset != 5 {
		t.Fatalf("positions after RollbackTo: %+v", req.Positions)
	}
	if n, b := tx.Staged(); n != 1 || b != int64(len("before")+64) {
		t.Fatalf("staged %d messages, %d bytes", n, b)
	}
	if got := tx.InFlight(k); got != 50 {
		t.Fatalf("in flight %d, want 50", got)
	}
	// Staging again after the rollback appends to what was kept.
	if err := tx.Stage("out", []topicstore.Message{{Body: []byte("again")}}); err != nil {
		t.Fatal(err)
	}
	if msgs := tx.Request().Writes[0].Messages; len(msgs) != 2 || string(msgs[1].Body) != "again" {
		t.Fatalf("messages %+v", msgs)
	}
}
