package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// testRecords are records with a key, headers (a repeated key, a null
// value), an empty value and a null value.
func testRecords() []kmsg.Record {
	return []kmsg.Record{
		{Key: []byte("k1"), Value: []byte("v1"), Headers: []kmsg.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}}},
		{Key: nil, Value: []byte{}, TimestampDelta64: 5},
		{Key: []byte{}, Value: nil, TimestampDelta64: 7},
	}
}

// compressFor compresses raw with Kafka's codec (snappy: xerial-framed
// when framed).
func compressFor(t testing.TB, codec int, raw []byte, framed bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch codec {
	case codecNone:
		return raw
	case codecGzip:
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(raw)
		require.NoError(t, w.Close())
	case codecSnappy:
		block := s2.EncodeSnappy(nil, raw)
		if !framed {
			return block
		}
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		half := len(raw) / 2
		for _, part := range [][]byte{raw[:half], raw[half:]} {
			b := s2.EncodeSnappy(nil, part)
			_ = binary.Write(&buf, binary.BigEndian, uint32(len(b)))
			buf.Write(b)
		}
	case codecLZ4:
		w := lz4.NewWriter(&buf)
		_, _ = w.Write(raw)
		require.NoError(t, w.Close())
	case codecZstd:
		w, err := zstd.NewWriter(&buf)
		require.NoError(t, err)
		_, _ = w.Write(raw)
		require.NoError(t, w.Close())
	}
	return buf.Bytes()
}

// encodeBatch encodes recs as a record batch compressed with codec.
func encodeBatch(t testing.TB, recs []kmsg.Record, codec int, framed bool, firstTS int64) []byte {
	t.Helper()
	var raw []byte
	for i := range recs {
		r := recs[i]
		r.OffsetDelta = int32(i)
		r.Length = 0
		body := r.AppendTo(nil)[1:] // without the 1-byte zero length
		r.Length = int32(len(body))
		raw = r.AppendTo(raw)
	}
	b := kmsg.RecordBatch{FirstOffset: 0, Magic: 2, Attributes: int16(codec), LastOffsetDelta: int32(len(recs) - 1),
		FirstTimestamp: firstTS, MaxTimestamp: firstTS, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(recs)), Records: compressFor(t, codec, raw, framed)}
	b.Length = int32(batchHeaderLen - batchLenFrom + len(b.Records))
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[batchCRCFrom:], castagnoli))
	return out
}

// TestDecodeBatchCodecs: a batch of each codec (snappy framed and raw)
// decodes to the same messages: keys, headers in order, empty and null
// values, CreatedAt from the batch's first timestamp plus each delta.
func TestDecodeBatchCodecs(t *testing.T) {
	ts := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		name   string
		codec  int
		framed bool
	}{{"none", codecNone, false}, {"gzip", codecGzip, false}, {"snappy-raw", codecSnappy, false},
		{"snappy-xerial", codecSnappy, true}, {"lz4", codecLZ4, false}, {"zstd", codecZstd, false}} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, _, err := decodeBatch(encodeBatch(t, testRecords(), tc.codec, tc.framed, ts), 3)
			require.NoError(t, err)
			require.Len(t, msgs, 3)
			m := msgs[0]
			require.Equal(t, []any{int32(3), "v1", []byte("k1"), false, []topicstore.Header{{Key: "h", Value: []byte("1")}, {Key: "h"}}},
				[]any{m.Partition, string(m.Body), m.Key, m.NullBody, m.Headers})
			require.True(t, m.CreatedAt.Equal(time.UnixMilli(ts)), "created %v", m.CreatedAt)
			require.Equal(t, []any{[]byte(nil), false, 0}, []any{msgs[1].Key, msgs[1].NullBody, len(msgs[1].Body)})
			require.True(t, msgs[1].CreatedAt.Equal(time.UnixMilli(ts+5)))
			require.Equal(t, []any{[]byte{}, true}, []any{msgs[2].Key, msgs[2].NullBody})
		})
	}
}

// codeOfBatch decodes b and returns the Kafka error code of its refusal.
func codeOfBatch(b []byte) int16 {
	_, _, err := decodeBatch(b, 0)
	return codeOf(err)
}

// TestDecodeBatchRefusals: a bad CRC is CORRUPT_MESSAGE; truncation, two
// batches, a wrong magic, a control batch, a transactional batch without
// a producer id, an idempotent batch without an epoch and lying
// counts are INVALID_RECORD; a record over 12 MiB is MESSAGE_TOO_LARGE.
func TestDecodeBatchRefusals(t *testing.T) {
	good := encodeBatch(t, testRecords(), codecNone, false, 1)
	require.Equal(t, int16(0), codeOfBatch(good))

	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	require.Equal(t, kerr.CorruptMessage.Code, codeOfBatch(bad), "bad CRC")

	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(good[:len(good)-1]), "truncated")
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(good[:30]), "shorter than a header")
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(append(bytes.Clone(good), good...)), "two batches")

	resign := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[batchCRCFrom:], castagnoli))
		return b
	}
	magic := bytes.Clone(good)
	magic[16] = 1
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(resign(magic)), "magic 1")
	txn := bytes.Clone(good)
	binary.BigEndian.PutUint16(txn[21:], attrTransactional)
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(resign(txn)), "transactional without a producer id")
	control := bytes.Clone(good)
	binary.BigEndian.PutUint16(control[21:], attrControl)
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(resign(control)), "control")
	idem := bytes.Clone(good)
	binary.BigEndian.PutUint64(idem[43:], 7)
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(resign(idem)), "producer id without an epoch")
	count := bytes.Clone(good)
	binary.BigEndian.PutUint32(count[57:], 1000)
	binary.BigEndian.PutUint32(count[23:], 999)
	require.Equal(t, kerr.InvalidRecord.Code, codeOfBatch(resign(count)), "record count")

	big := encodeBatch(t, []kmsg.Record{{Value: make([]byte, topicstore.MaxMessageSize+1)}}, codecZstd, false, 1)
	_, _, err := decodeBatch(big, 0)
	require.Equal(t, kerr.MessageTooLarge.Code, codeOf(err), "%v", err)
	var de *doorError
	require.True(t, errors.As(err, &de))
	require.Contains(t, de.msg, "larger than the largest message")
}

// TestAppendBatchRoundTrip: a Fetch's record batch decodes (CRC, counts,
// offsets, timestamps) to what was encoded.
func TestAppendBatchRoundTrip(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000)
	in := []topicstore.Message{
		{Offset: 10, CreatedAt: at, Body: []byte("a"), Key: []byte("k"), Headers: []topicstore.Header{{Key: "x", Value: []byte("y")}}},
		{Offset: 11, CreatedAt: at.Add(-time.Second), NullBody: true},
		{Offset: 13, CreatedAt: at.Add(time.Second), Body: []byte{}},
	}
	b := appendBatch(nil, in)
	var rb kmsg.RecordBatch
	require.NoError(t, rb.ReadFrom(b))
	require.Equal(t, []any{int64(10), int32(3), int32(3), int64(at.UnixMilli()), int64(at.Add(time.Second).UnixMilli())},
		[]any{rb.FirstOffset, rb.LastOffsetDelta, rb.NumRecords, rb.FirstTimestamp, rb.MaxTimestamp})
	require.Equal(t, uint32(rb.CRC), crc32.Checksum(b[batchCRCFrom:], castagnoli))
	recs, err := readRecords(rb.Records, int(rb.NumRecords))
	require.NoError(t, err)
	require.Equal(t, []any{"a", []byte("k"), "x", "y"}, []any{string(recs[0].Value), recs[0].Key, recs[0].Headers[0].Key, string(recs[0].Headers[0].Value)})
	require.Nil(t, recs[1].Value)
	require.Equal(t, []any{int32(3), int64(1000)}, []any{recs[2].OffsetDelta, recs[2].TimestampDelta64})
	require.NotNil(t, recs[2].Value)
}

// readRecords decodes n length-prefixed records.
func readRecords(raw []byte, n int) ([]kmsg.Record, error) {
	var out []kmsg.Record
	for range n {
		var r kmsg.Record
		if err := r.ReadFrom(raw); err != nil {
			return nil, err
		}
		out = append(out, r)
		rest := r.AppendTo(nil)
		raw = raw[len(rest):]
	}
	return out, nil
}
