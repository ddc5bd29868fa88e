package topicstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecordBatchRoundTrip encodes a batch as a writer and a committer
// do, and decodes it as a reader does.
func TestRecordBatchRoundTrip(t *testing.T) {
	created := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	msgs := []Message{
		{ProducerID: "p", MessageGroupID: "g", Attrs: []Attr{{Key: "k", Value: "v"}}, Body: []byte("one"), Delay: time.Second},
		{ProducerID: "p", MessageGroupID: "g", Attrs: []Attr{{Key: "k", Value: "w"}}, Body: []byte("two")},
		{Body: []byte("three")},
	}
	buf := make([]byte, BatchHeaderLen)
	for i := range msgs {
		tail := AppendTail(nil, &msgs[i], CodecRaw, msgs[i].Body, created)
		buf = AppendMessage(buf, i < 2, int64(10+i), tail)
	}
	payload := buf[BatchHeaderLen:]
	PutBatchHeader(buf, BatchHeader{Base: 7, Count: 3, WrittenAt: 42, CumBefore: 100, CRC: Checksum(payload)})
	h, p, err := DecodeBatchHeader(buf)
	require.NoError(t, err)
	require.Equal(t, BatchHeader{Base: 7, Count: 3, WrittenAt: 42, CumBefore: 100, CRC: Checksum(payload), Bytes: int64(len(payload))}, h)
	require.NoError(t, CheckCRC(h, p))

	var d MsgDecoder
	var got []Message
	for range h.Count {
		var entry []byte
		entry, p, err = NextEntry(p)
		require.NoError(t, err)
		m, err := d.Decode(entry)
		require.NoError(t, err)
		c := *m
		c.Attrs = append([]Attr(nil), m.Attrs...)
		got = append(got, c)
	}
	require.Empty(t, p)
	for i, m := range got {
		require.Equal(t, []any{msgs[i].ProducerID, msgs[i].MessageGroupID, string(msgs[i].Body), msgs[i].Delay, CodecRaw, i < 2},
			[]any{m.ProducerID, m.MessageGroupID, string(m.Body), m.Delay, m.Codec, m.HasSeqNo}, "message %d", i)
		require.True(t, m.CreatedAt.Equal(created.Truncate(time.Microsecond)), "CreatedAt %v", m.CreatedAt)
	}
	require.Equal(t, []int64{10, 11}, []int64{got[0].SeqNo, got[1].SeqNo})
	require.Equal(t, []Attr{{Key: "k", Value: "w"}}, got[1].Attrs)
	require.Nil(t, got[2].Attrs)

	hasSeq, seq, tail, err := SplitEntry(AppendMessage(nil, true, -5, []byte("\x06tail"))[1:])
	require.NoError(t, err)
	require.Equal(t, []any{true, int64(-5), "\x06tail"}, []any{hasSeq, seq, string(tail)})
	hasSeq, _, tail, err = SplitEntry(AppendMessage(nil, false, 0, []byte("\x02tail"))[1:])
	require.NoError(t, err)
	require.Equal(t, []any{false, "\x02tail"}, []any{hasSeq, string(tail)})

	buf[len(buf)-1] ^= 1
	h, p, err = DecodeBatchHeader(buf)
	require.NoError(t, err)
	require.ErrorIs(t, CheckCRC(h, p), ErrCorrupt)
	_, _, err = DecodeBatchHeader(buf[:5])
	require.ErrorIs(t, err, ErrCorrupt)
}

// TestRefRecord: a reference record carries a header and the address of
// its payload, not the payload.
func TestRefRecord(t *testing.T) {
	in := BatchHeader{Base: 3, Count: 9, WrittenAt: 5, CumBefore: 11, CRC: 77, Bytes: 1234, SID: 8, Seq: 2}
	h, p, err := DecodeBatchHeader(PutRefRecord(in))
	require.NoError(t, err)
	require.Nil(t, p)
	in.Ref = true
	require.Equal(t, in, h)
}
