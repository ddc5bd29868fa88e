package topicstore

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kafkaMsgs are messages with every combination of Kafka fields the
// record format distinguishes: no key, an empty key, a key; headers that
// repeat a key, with null and empty values; a null body.
func kafkaMsgs() []Message {
	return []Message{
		{Body: []byte("plain")},
		{Key: []byte{}, Body: []byte("empty key")},
		{Key: []byte("k1"), Body: []byte("keyed"), ProducerID: "p", Attrs: []Attr{{Key: "a", Value: "b"}}},
		{Headers: []Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}, {Key: "", Value: []byte{}}}, Body: []byte("headers")},
		{Key: []byte("k1"), NullBody: true},
		{Key: []byte{0, 0xff}, Headers: []Header{{Key: "x", Value: []byte{0xfe}}}, NullBody: true, Delay: time.Second},
		{NullBody: true},
	}
}

// encodeBatch encodes msgs as one payload, every other message with a seqno.
func encodeBatch(t testing.TB, msgs []Message, codec Codec) []byte {
	var buf []byte
	for i := range msgs {
		msgs[i].Codec = codec
		tail, _, err := EncodeTail(nil, &msgs[i], time.Unix(5, 0))
		require.NoError(t, err)
		buf = AppendMessage(buf, i%2 == 0, int64(i), tail)
	}
	return buf
}

// decodeAll decodes every entry of payload into clones.
func decodeAll(payload []byte) ([]Message, error) {
	var d MsgDecoder
	var out []Message
	for len(payload) > 0 {
		entry, rest, err := NextEntry(payload)
		if err != nil {
			return out, err
		}
		payload = rest
		m, err := d.Decode(entry)
		if err != nil {
			return out, err
		}
		out = append(out, m.Clone())
	}
	return out, nil
}

// TestRecordKafkaFields: keys, headers and null bodies round-trip
// exactly through a record, whatever the codec; a message without them
// sets no flag bit beyond the seqno's.
func TestRecordKafkaFields(t *testing.T) {
	for _, codec := range AllCodecs {
		msgs := kafkaMsgs()
		got, err := decodeAll(encodeBatch(t, msgs, codec))
		require.NoError(t, err)
		require.Len(t, got, len(msgs))
		for i, m := range got {
			w := msgs[i]
			require.Equal(t, w.Key, m.Key, "%s message %d key", codec, i)
			require.Equal(t, w.Key == nil, m.Key == nil, "%s message %d: a nil key stays nil, an empty one empty", codec, i)
			require.Equal(t, w.Headers, m.Headers, "%s message %d headers", codec, i)
			for j, h := range m.Headers {
				require.Equal(t, w.Headers[j].Value == nil, h.Value == nil, "%s message %d header %d null", codec, i, j)
			}
			require.Equal(t, w.NullBody, m.NullBody, "%s message %d", codec, i)
			data, err := m.Decode()
			require.NoError(t, err)
			if w.NullBody {
				require.Nil(t, data)
				require.Empty(t, m.Body, "a null body is stored empty")
			} else {
				require.Equal(t, string(w.Body), string(data))
			}
			require.Equal(t, []any{w.ProducerID, w.Attrs, w.Delay, i%2 == 0}, []any{m.ProducerID, m.Attrs, m.Delay, m.HasSeqNo})
		}
	}
}

// TestRecordPlainBytes: a message without Kafka fields is stored byte
// for byte as before Kafka records existed (the expected entry is the
// format of commit 05e5721), so existing data reads unchanged.
func TestRecordPlainBytes(t *testing.T) {
	m := Message{ProducerID: "p", MessageGroupID: "g", Attrs: []Attr{{Key: "k", Value: "v"}}, Body: []byte("hi"), Delay: time.Millisecond}
	entry := AppendMessage(nil, true, 3, AppendTail(nil, &m, CodecRaw, m.Body, time.UnixMicro(7)))
	// length | flags (seqno) | seqno 3 | "p" | "g" | created 7 µs | raw |
	// one attr k=v | delay 1 ms | body
	want := "12" + "01" + "06" + "0170" + "0167" + "0e" + "01" + "01016b0176" + "80897a" + "6869"
	require.Equal(t, want, hex.EncodeToString(entry))
	require.Zero(t, KafkaSize(&m))
}

// TestRecordKafkaSize: KafkaSize is exactly what the key and headers add
// to a record, and Size, which MaxMessageSize limits, counts them.
func TestRecordKafkaSize(t *testing.T) {
	for i, m := range kafkaMsgs() {
		plain := m
		plain.Key, plain.Headers, plain.NullBody = nil, nil, false
		with := AppendTail(nil, &m, CodecRaw, m.Body, time.Unix(1, 0))
		without := AppendTail(nil, &plain, CodecRaw, m.Body, time.Unix(1, 0))
		require.Equal(t, len(without)+KafkaSize(&m), len(with), "message %d", i)
		require.Equal(t, len(m.Body)+KafkaSize(&m), m.Size())
	}
	big := Message{Key: make([]byte, MaxMessageSize/2), Body: make([]byte, MaxMessageSize/2)}
	require.ErrorIs(t, CheckMessage(&big), ErrMessageTooLarge)
	big.Key = big.Key[:MaxMessageSize/2-4]
	require.NoError(t, CheckMessage(&big))
	require.ErrorIs(t, CheckMessage(&Message{NullBody: true, Body: []byte("x")}), ErrInvalidMessage)
}

// TestRecordKafkaCorrupt: a decoder refuses unknown flag bits, a null
// body with bytes and headers cut short, instead of misreading them.
func TestRecordKafkaCorrupt(t *testing.T) {
	m := Message{Key: []byte("k"), Headers: []Header{{Key: "h", Value: []byte("v")}}, Body: []byte("b")}
	entry := AppendMessage(nil, false, 0, AppendTail(nil, &m, CodecRaw, m.Body, time.Unix(1, 0)))
	entry, _, err := NextEntry(entry)
	require.NoError(t, err)
	var d MsgDecoder
	_, err = d.Decode(entry)
	require.NoError(t, err)
	for name, mutate := range map[string]func(e []byte) []byte{
		"unknown flag":             func(e []byte) []byte { e[0] |= 0x10; return e },
		"null body with bytes":     func(e []byte) []byte { e[0] |= flagNullBody; return e },
		"headers cut short":        func(e []byte) []byte { return e[:len(e)-3] },
		"headers without a header": func(e []byte) []byte { return append(e[:len(e)-6:len(e)-6], 0) },
	} {
		_, err := d.Decode(mutate(bytes.Clone(entry)))
		require.ErrorIs(t, err, ErrCorrupt, name)
	}
}

// FuzzMsgDecode feeds arbitrary payloads to the message decoder: it must
// never panic, and a message it decodes must encode back to an entry that
// decodes to the same message. The seeds hold every Kafka field.
func FuzzMsgDecode(f *testing.F) {
	f.Add(encodeBatch(f, kafkaMsgs(), CodecRaw))
	f.Add(encodeBatch(f, kafkaMsgs()[3:5], CodecGzip))
	f.Add(encodeBatch(f, []Message{{Body: []byte("x"), Attrs: []Attr{{Key: "a", Value: "b"}}}}, CodecRaw))
	f.Fuzz(func(t *testing.T, payload []byte) {
		got, _ := decodeAll(payload)
		for i := range got {
			m := &got[i]
			entry := AppendMessage(nil, m.HasSeqNo, m.SeqNo, AppendTail(nil, m, m.Codec, m.Body, m.CreatedAt))
			again, err := decodeAll(entry)
			require.NoError(t, err)
			require.Len(t, again, 1)
			require.Equal(t, *m, again[0])
		}
	})
}
