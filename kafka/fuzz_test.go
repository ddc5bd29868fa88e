package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// frameOf frames req (version v) as a client sends it: size, header v1
// (v2 with tags for flexible versions), body.
func frameOf(req kmsg.Request, v int16, corr int32) []byte {
	req.SetVersion(v)
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(v))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "test"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestDecodeRequest: frames and headers as franz-go encodes them decode;
// an unknown key, an unsupported version, a truncated header and a size
// out of bounds are refused.
func TestDecodeRequest(t *testing.T) {
	md := kmsg.NewPtrMetadataRequest()
	topic := "t"
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
	for _, v := range []int16{0, 8, 9, 12} {
		f, err := readFrame(bytes.NewReader(frameOf(md, v, 7)), nil, 1<<20)
		require.NoError(t, err)
		h, req, err := decodeRequest(f)
		require.NoError(t, err, "v%d", v)
		require.Equal(t, []any{int16(3), v, int32(7), "test"}, []any{h.key, h.version, h.corr, h.clientID})
		require.Equal(t, "t", *req.(*kmsg.MetadataRequest).Topics[0].Topic)
	}
	var ue *unsupportedError
	f := frameOf(md, 13, 1)[4:]
	_, _, err := decodeRequest(f)
	require.True(t, errors.As(err, &ue), "metadata v13: %v", err)
	binary.BigEndian.PutUint16(f, 999)
	_, _, err = decodeRequest(f)
	require.True(t, errors.As(err, &ue), "key 999: %v", err)
	require.Contains(t, err.Error(), "unknown API key 999")
	_, _, err = decodeRequest(f[:9])
	require.Error(t, err)

	big := binary.BigEndian.AppendUint32(nil, 1<<30)
	_, err = readFrame(bytes.NewReader(big), nil, 1<<20)
	require.ErrorIs(t, err, errFrameSize)
	neg := binary.BigEndian.AppendUint32(nil, 0xffffffff)
	_, err = readFrame(bytes.NewReader(neg), nil, 1<<20)
	require.ErrorIs(t, err, errFrameSize)
}

// TestAppendResponseHeaders: ApiVersions' response header is v0 even in
// a flexible version; other flexible responses carry empty tags.
func TestAppendResponseHeaders(t *testing.T) {
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	b := appendResponse(nil, 5, av)
	require.Equal(t, uint32(len(b)-4), binary.BigEndian.Uint32(b))
	require.Equal(t, int32(5), int32(binary.BigEndian.Uint32(b[4:])))
	require.Equal(t, av.AppendTo(nil), b[8:])
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 9
	b = appendResponse(nil, 6, md)
	require.Equal(t, byte(0), b[8])
	require.Equal(t, md.AppendTo(nil), b[9:])
}

// FuzzRequestDecoder: whatever a client sends, reading a frame and
// decoding its header and request returns or fails, never panics, and a
// decoded request's API is one of Supported.
func FuzzRequestDecoder(f *testing.F) {
	md := kmsg.NewPtrMetadataRequest()
	f.Add(frameOf(md, 9, 1))
	f.Add(frameOf(kmsg.NewPtrApiVersionsRequest(), 3, 2))
	f.Add(frameOf(kmsg.NewPtrFetchRequest(), 12, 3))
	pr := kmsg.NewPtrProduceRequest()
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: []byte{1, 2, 3}}}}}
	f.Add(frameOf(pr, 9, 4))
	f.Add(frameOf(kmsg.NewPtrListOffsetsRequest(), 6, 5))
	f.Add([]byte{0, 0, 0, 8, 0, 99, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			frame, err := readFrame(r, nil, 1<<20)
			if err != nil {
				return
			}
			h, req, err := decodeRequest(frame)
			if err == nil && (req == nil || !supported(h.key, h.version)) {
				t.Fatalf("decoded %v without a supported request", h)
			}
		}
	})
}

// FuzzRecordBatch: a Produce's records decode or are refused with a
// Kafka error, never a panic; what decodes encodes back (as Fetch does)
// to a batch that decodes to the same messages.
func FuzzRecordBatch(f *testing.F) {
	for _, c := range []int{codecNone, codecGzip, codecSnappy, codecLZ4, codecZstd} {
		f.Add(encodeBatch(f, testRecords(), c, c == codecSnappy, 1000))
	}
	f.Add(encodeBatch(f, nil, codecNone, false, -1))
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, _, err := decodeBatch(b, 0)
		if err != nil {
			if codeOf(err) <= 0 {
				t.Fatalf("refusal without a Kafka error: %v", err)
			}
			return
		}
		for i := range msgs {
			msgs[i].Offset = int64(i)
		}
		again := appendBatch(nil, msgs)
		if len(msgs) == 0 {
			return
		}
		back, _, err := decodeBatch(again, 0)
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		if len(back) != len(msgs) {
			t.Fatalf("%d messages back, %d in", len(back), len(msgs))
		}
		for i := range back {
			if !bytes.Equal(back[i].Body, msgs[i].Body) || !bytes.Equal(back[i].Key, msgs[i].Key) || back[i].NullBody != msgs[i].NullBody {
				t.Fatalf("message %d differs", i)
			}
		}
	})
}
