package storetest

import (
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

var stagingTests = []subtest{
	{"CommitByReference", testStagedCommit},
	{"BatchesInOrder", testStagedOrder},
	{"Dedup", testStagedDedup},
	{"Discard", testStagedDiscard},
	{"Validation", testStagedValidation},
	{"FailedCommitWritesNothing", testStagedConflict},
}

// Messages returns n messages "<tag>-<i>|xxx…" of about size bytes, for a
// partition the store picks, of producer (seqnos from seq0 on) or of none.
// Backends' own tests use it too.
func Messages(tag string, n, size int, producer string, seq0 int64) []topicstore.Message {
	out := make([]topicstore.Message, n)
	for i := range out {
		b := fmt.Appendf(nil, "%s-%06d|", tag, i)
		b = append(b, strings.Repeat("x", max(0, size-len(b)))...)
		out[i] = topicstore.Message{Partition: -1, Body: b}
		if producer != "" {
			out[i].ProducerID, out[i].SeqNo, out[i].HasSeqNo = producer, seq0+int64(i), true
		}
	}
	return out
}

func (e *env) stage(st topicstore.Stager, txn uint64, topic string, msgs []topicstore.Message) topicstore.StagedBatch {
	e.t.Helper()
	sb, err := st.StageBatch(ctx, txn, topic, msgs)
	require.NoError(e.t, err)
	require.Equal(e.t, len(msgs), sb.Messages)
	require.Equal(e.t, topic, sb.Topic)
	return sb
}

func (e *env) commitStaged(topic string, sbs ...topicstore.StagedBatch) topicstore.WriteResult {
	e.t.Helper()
	return e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: topic, Staged: sbs}}}).Writes[0]
}

// prefixes returns the first n bytes of each body of a scan, "offset:…".
func (e *env) prefixes(topic string, r topicstore.ScanRange, n int) []string {
	e.t.Helper()
	var out []string
	for _, m := range e.scanMsgs(topic, r) {
		out = append(out, fmt.Sprintf("%d:%s", m.Offset, m.Body[:min(n, len(m.Body))]))
	}
	return out
}

// testStagedCommit: staged messages are invisible until a commit names
// them; then they come before the write's own messages, unbound ones
// sharing the write's partition, explicit ones where they say.
func testStagedCommit(e *env) {
	t := e.t
	st := e.stager()
	e.create("t", 3)
	sb := e.stage(st, 1, "t", append(Messages("s", 500, 100, "", 0), topicstore.Message{Partition: 2, Body: []byte("explicit")}))
	require.Equal(t, []int64{0, 0, 0}, e.ends("t"), "staged data is not visible")
	require.Empty(t, e.scan("t", part(0)))
	e.clk.Advance(time.Minute)
	committed := e.clk.Now()
	res := e.commitReq(&topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Staged: []topicstore.StagedBatch{sb}, Messages: []topicstore.Message{body("tail")}}}})
	require.Equal(t, topicstore.WriteResult{Written: 502}, res.Writes[0])
	var unbound int32 = -1
	for p, end := range e.ends("t") {
		if end == 501 {
			unbound = int32(p)
		}
	}
	require.NotEqual(t, int32(2), unbound)
	require.GreaterOrEqual(t, unbound, int32(0), "the unbound staged messages and the write's own share a partition: %v", e.ends("t"))
	got := e.prefixes("t", part(unbound), 8)
	require.Len(t, got, 501)
	require.Equal(t, []string{"0:s-000000", "1:s-000001"}, got[:2])
	require.Equal(t, "499:s-000499", got[499])
	require.Equal(t, "500:tail", got[500])
	require.Equal(t, []string{"0:explicit"}, e.scan("t", part(2)))
	require.Equal(t, []string{"250:s-000250", "251:s-000251"}, e.prefixes("t", topicstore.ScanRange{Partition: unbound, Start: 250, End: 252}, 8))
	for _, m := range e.scanMsgs("t", topicstore.ScanRange{Partition: unbound, Start: 100, End: 101}) {
		require.True(t, m.WrittenAt.Equal(committed), "written at the commit: %v", m.WrittenAt)
		require.True(t, m.CreatedAt.Equal(Start), "created when staged: %v", m.CreatedAt)
	}
	ot, err := e.s.OffsetForTime("t", committed)
	require.NoError(t, err)
	require.Equal(t, int64(0), ot[unbound])
	ot, err = e.s.OffsetForTime("t", committed.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(501), ot[unbound])

	// A descriptor joins at most one commit.
	_, err = e.s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Staged: []topicstore.StagedBatch{sb}}}})
	require.Error(t, err)
	require.Equal(t, int64(501), e.ends("t")[unbound], "the refused second commit wrote nothing")
	info := e.info("t")
	require.Greater(t, info.Partitions[unbound].Bytes, int64(500*100), "staged bytes are counted")
}

// testStagedOrder: the batches of one transaction join in the order the
// commit names them.
func testStagedOrder(e *env) {
	t := e.t
	st := e.stager()
	e.create("t", 1)
	a := e.stage(st, 7, "t", Messages("a", 300, 200, "", 0))
	b := e.stage(st, 7, "t", Messages("b", 300, 200, "", 0))
	e.commit("t", body("inline"))
	require.Equal(t, 600, e.commitStaged("t", a, b).Written)
	got := e.prefixes("t", part(0), 8)
	require.Len(t, got, 601)
	require.Equal(t, []string{"0:inline", "1:a-000000", "300:a-000299", "301:b-000000", "600:b-000299"},
		[]string{got[0], got[1], got[300], got[301], got[600]})
}

// testStagedDedup: staged messages of a producer are deduplicated against
// what the producer wrote before, like inline ones.
func testStagedDedup(e *env) {
	t := e.t
	st := e.stager()
	e.create("t", 2)
	e.commit("t", Messages("in", 10, 20, "p", 1)...)             // seqnos 1..10
	sp := e.stage(st, 1, "t", Messages("st", 1000, 100, "p", 5)) // 5..10 are duplicates
	sq := e.stage(st, 1, "t", Messages("q", 1000, 100, "q", 1))
	res := e.commitStaged("t", sp, sq)
	require.Equal(t, topicstore.WriteResult{Written: 994 + 1000, Duplicates: 6}, res)
	p, ok := e.s.Producer("t", "p")
	require.True(t, ok)
	require.Equal(t, int64(1004), p.MaxSeqNo)
	q, ok := e.s.Producer("t", "q")
	require.True(t, ok)
	require.Equal(t, int64(1000), q.MaxSeqNo)
	msgs := e.scanMsgs("t", part(p.Partition))
	var seqs []int64
	for _, m := range msgs {
		if m.ProducerID == "p" {
			seqs = append(seqs, m.SeqNo)
		}
	}
	require.Len(t, seqs, 1004)
	for i, s := range seqs {
		require.Equal(t, int64(i+1), s, "each seqno once, in order")
	}
	// Repeated: all duplicates, nothing written.
	sq2 := e.stage(st, 2, "t", Messages("q", 1000, 100, "q", 1))
	require.Equal(t, topicstore.WriteResult{Duplicates: 1000}, e.commitStaged("t", sq2))
	// A producer's staged messages without seqnos get the next ones.
	noSeq := Messages("auto", 3, 10, "q", 0)
	for i := range noSeq {
		noSeq[i].HasSeqNo = false
	}
	require.Equal(t, topicstore.WriteResult{Written: 3}, e.commitStaged("t", e.stage(st, 3, "t", noSeq)))
	q, _ = e.s.Producer("t", "q")
	require.Equal(t, int64(1003), q.MaxSeqNo)
}

// testStagedDiscard: a discarded staging cannot be committed; discarding
// after a commit, or an unknown transaction, does nothing.
func testStagedDiscard(e *env) {
	t := e.t
	st := e.stager()
	e.create("t", 1)
	sb := e.stage(st, 1, "t", Messages("a", 1000, 100, "", 0))
	require.NoError(t, st.DiscardStaged(1))
	_, err := e.s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "t", Staged: []topicstore.StagedBatch{sb}}}})
	require.Error(t, err, "discarded")
	require.Equal(t, []int64{0}, e.ends("t"))
	require.NoError(t, st.DiscardStaged(99), "an unknown transaction")
	kept := e.stage(st, 2, "t", Messages("b", 1000, 100, "", 0))
	require.Equal(t, 1000, e.commitStaged("t", kept).Written)
	require.NoError(t, st.DiscardStaged(2), "after the commit")
	got := e.prefixes("t", part(0), 8)
	require.Len(t, got, 1000)
	require.Equal(t, "999:b-000999", got[999])
	// The transaction ID may be used again.
	require.Equal(t, 10, e.commitStaged("t", e.stage(st, 1, "t", Messages("c", 10, 10, "", 0))).Written)
	require.Equal(t, []int64{1010}, e.ends("t"))
}

func testStagedValidation(e *env) {
	t := e.t
	st := e.stager()
	require.NoError(t, e.s.CreateTopic(ctx, topicstore.TopicConfig{Name: "t", MinActivePartitions: 2, SupportedCodecs: []topicstore.Codec{topicstore.CodecRaw}}))
	e.create("u", 1)
	for _, c := range []struct {
		topic  string
		msgs   []topicstore.Message
		target error
	}{
		{"nope", []topicstore.Message{body("x")}, topicstore.ErrTopicNotFound},
		{"t", []topicstore.Message{body("x"), {Partition: 2, Body: []byte("y")}}, topicstore.ErrPartitionNotFound},
		{"t", []topicstore.Message{{Partition: -1, Codec: topicstore.CodecZstd, Body: []byte("y")}}, topicstore.ErrCodecNotSupported},
		{"t", []topicstore.Message{{Partition: -1, Body: make([]byte, topicstore.MaxMessageSize+1)}}, topicstore.ErrMessageTooLarge},
	} {
		_, err := st.StageBatch(ctx, 1, c.topic, c.msgs)
		require.ErrorIs(t, err, c.target)
	}
	sb := e.stage(st, 2, "t", []topicstore.Message{body("x")})
	_, err := e.s.Commit(ctx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: "u", Staged: []topicstore.StagedBatch{sb}}}})
	require.Error(t, err, "a staged batch belongs to its topic")
	require.Equal(t, []int64{0}, e.ends("u"))
	require.Equal(t, []int64{0, 0}, e.ends("t"))
	require.NoError(t, st.DiscardStaged(1))
	require.NoError(t, st.DiscardStaged(2))
}

// testStagedConflict: a commit of staged batches that fails (a stale
// position) writes none of them.
func testStagedConflict(e *env) {
	t := e.t
	st := e.stager()
	e.create("in", 1, topicstore.ConsumerConfig{Name: "c"})
	e.create("out", 1)
	e.commit("in", body("a"), body("b"))
	require.NoError(t, e.s.SetPosition(ctx, "in", "c", 0, 1))
	sb := e.stage(st, 5, "out", Messages("o", 500, 100, "", 0))
	_, err := e.s.Commit(ctx, &topicstore.CommitRequest{
		Writes:    []topicstore.TopicWrite{{Topic: "out", Staged: []topicstore.StagedBatch{sb}, Messages: []topicstore.Message{body("own")}}},
		Positions: []topicstore.PositionUpdate{{Topic: "in", Consumer: "c", Partition: 0, Offset: 2, Expect: 0}},
	})
	require.ErrorIs(t, err, topicstore.ErrPositionConflict)
	require.Equal(t, []int64{0}, e.ends("out"))
	require.Empty(t, e.scan("out", part(0)))
	require.NoError(t, st.DiscardStaged(5), "the rollback after a failed commit")
}
