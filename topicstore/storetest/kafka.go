package storetest

import (
	"fmt"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

// Kafka records (issue 28): a message's key, headers and null body are
// stored with it and read back exactly, whichever way it was written.
var kafkaTests = []subtest{
	{"PlainCommits", testKafkaPlain},
	{"ProducerCommits", testKafkaProducer},
	{"Staged", testKafkaStaged},
	{"SharedConsumers", needs(Shared, testKafkaShared)},
	{"DeadLetterMoves", needs(Shared, testKafkaDeadLetter)},
	{"Size", testKafkaSize},
}

// kafkaMsgs are messages with every Kafka field the store must keep
// apart: no key, an empty key, a binary key; headers in order, repeating
// a key, with a null and an empty value; a null body, with and without a
// key. Their bodies (or keys, for a null body) name them.
func kafkaMsgs(tag string) []topicstore.Message {
	h := []topicstore.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}, {Key: "e", Value: []byte{}}, {Key: "", Value: []byte{0, 0xff}}}
	return []topicstore.Message{
		{Partition: -1, Body: []byte(tag + "-nokey")},
		{Partition: -1, Key: []byte{}, Body: []byte(tag + "-emptykey")},
		{Partition: -1, Key: []byte{0xff, 0, 'k'}, Body: []byte(tag + "-key"), Attrs: []topicstore.Attr{{Key: "a", Value: "b"}}},
		{Partition: -1, Headers: h, Body: []byte(tag + "-headers"), Codec: topicstore.CodecGzip},
		{Partition: -1, Key: []byte(tag + "-tombstone"), Headers: h[1:2], NullBody: true},
		{Partition: -1, NullBody: true, Codec: topicstore.CodecZstd},
	}
}

// kafkaView renders what a message holds of a Kafka record, nil and
// empty told apart: key, headers, body (decoded) or "null".
func kafkaView(m *topicstore.Message) string {
	key := "nil"
	if m.Key != nil {
		key = fmt.Sprintf("%q", m.Key)
	}
	hs := "nil"
	if m.Headers != nil {
		hs = "["
		for _, h := range m.Headers {
			if h.Value == nil {
				hs += fmt.Sprintf("%q=null ", h.Key)
			} else {
				hs += fmt.Sprintf("%q=%q ", h.Key, h.Value)
			}
		}
		hs += "]"
	}
	body := "null"
	if !m.NullBody {
		body = fmt.Sprintf("%q", m.Body)
	}
	return fmt.Sprintf("key=%s headers=%s body=%s", key, hs, body)
}

// kafkaViews renders msgs as written (Body uncompressed).
func kafkaViews(msgs []topicstore.Message) []string {
	var out []string
	for i := range msgs {
		out = append(out, kafkaView(&msgs[i]))
	}
	return out
}

// scanKafka renders every message of partition p (Body decoded).
func (e *env) scanKafka(topic string, p int32) []string {
	e.t.Helper()
	msgs := e.scanMsgs(topic, part(p))
	for i := range msgs {
		require.Equal(e.t, msgs[i].NullBody, msgs[i].Body == nil, "a null body decodes to nil, another to bytes")
	}
	return kafkaViews(msgs)
}

// testKafkaPlain: a commit without producers stores the Kafka fields of
// each message, and a store opened again on the same data reads them.
func testKafkaPlain(e *env) {
	t := e.t
	e.create("t", 1)
	msgs := kafkaMsgs("a")
	require.Equal(t, len(msgs), e.commit("t", msgs...).Written)
	want := kafkaViews(kafkaMsgs("a"))
	require.Equal(t, want, e.scanKafka("t", 0))
	e.reopen()
	require.Equal(t, want, e.scanKafka("t", 0), "after a restart")
}

// testKafkaProducer: a producer's messages keep their Kafka fields, and
// a resent one is a duplicate like any other, whatever its fields.
func testKafkaProducer(e *env) {
	t := e.t
	e.create("t", 2)
	msgs := kafkaMsgs("p")
	for i := range msgs {
		msgs[i].ProducerID, msgs[i].SeqNo, msgs[i].HasSeqNo = "p", int64(i+1), true
	}
	require.Equal(t, topicstore.WriteResult{Written: len(msgs)}, e.commit("t", msgs...))
	again := kafkaMsgs("p")[:2]
	for i := range again {
		again[i].ProducerID, again[i].SeqNo, again[i].HasSeqNo = "p", int64(i+5), true
	}
	require.Equal(t, topicstore.WriteResult{Written: 0, Duplicates: 2}, e.commit("t", again...))
	p, ok := e.s.Producer("t", "p")
	require.True(t, ok)
	require.Equal(t, kafkaViews(kafkaMsgs("p")), e.scanKafka("t", p.Partition))
}

// testKafkaStaged: staged messages keep their Kafka fields, both when a
// chunk joins by reference and when its dedup cannot be decided from its
// summary (seqnos not increasing) and it joins message by message.
func testKafkaStaged(e *env) {
	t := e.t
	st := e.stager()
	e.create("t", 2)
	e.create("u", 1)
	byRef := kafkaMsgs("r")
	sb := e.stage(st, 1, "u", byRef)
	require.Equal(t, len(byRef), e.commitStaged("u", sb).Written)
	require.Equal(t, kafkaViews(kafkaMsgs("r")), e.scanKafka("u", 0))

	// Seqnos 2, 1, 3, ...: the second is a duplicate of the first.
	mixed := kafkaMsgs("s")
	for i := range mixed {
		mixed[i].ProducerID, mixed[i].SeqNo, mixed[i].HasSeqNo = "p", int64(i+1), true
	}
	mixed[0].SeqNo, mixed[1].SeqNo = 2, 1
	sb = e.stage(st, 2, "t", mixed)
	require.Equal(t, topicstore.WriteResult{Written: len(mixed) - 1, Duplicates: 1}, e.commitStaged("t", sb))
	p, ok := e.s.Producer("t", "p")
	require.True(t, ok)
	want := kafkaViews(kafkaMsgs("s"))
	require.Equal(t, append(want[:1:1], want[2:]...), e.scanKafka("t", p.Partition))
	e.reopen()
	require.Equal(t, kafkaViews(kafkaMsgs("r")), e.scanKafka("u", 0), "after a restart")
}

// testKafkaShared: a shared consumer hands out the Kafka fields, on
// copies that outlive the read.
func testKafkaShared(e *env) {
	t := e.t
	e.create("t", 1, sharedCfg("c", nil))
	e.commit("t", kafkaMsgs("c")...)
	got := e.acquire("t", "c", 1, 100)
	msgs := make([]topicstore.Message, len(got))
	for i := range got {
		msgs[i] = got[i].Message
		data, err := msgs[i].Decode()
		require.NoError(t, err)
		msgs[i].Body = data
	}
	require.Equal(t, kafkaViews(kafkaMsgs("c")), kafkaViews(msgs))
}

// testKafkaDeadLetter: a message moved to the dead-letter queue keeps
// its key, headers and null body.
func testKafkaDeadLetter(e *env) {
	t := e.t
	e.create("dlq", 1)
	e.create("q", 1, sharedCfg("mv", func(c *topicstore.ConsumerConfig) {
		c.DeadLetterPolicy, c.DeadLetterQueue = "move", "dlq"
	}))
	msgs := kafkaMsgs("d")
	e.commit("q", msgs...)
	for i := range msgs {
		require.Len(t, e.acquire("q", "mv", 1, 1), 1)
		require.Equal(t, outcomes(topicstore.OutcomeDone), e.act("q", "mv", 1, topicstore.ActionReject, r0(int64(i))))
	}
	require.Equal(t, kafkaViews(kafkaMsgs("d")), e.scanKafka("dlq", 0))
}

// testKafkaSize: the key and headers count in a message's size, which
// MaxMessageSize limits, and in the partition's bytes.
func testKafkaSize(e *env) {
	t := e.t
	e.create("t", 1)
	e.create("u", 1)
	big := topicstore.Message{Partition: 0, Key: make([]byte, topicstore.MaxMessageSize/2), Body: make([]byte, topicstore.MaxMessageSize/2)}
	err := e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{big}})
	require.ErrorIs(t, err, topicstore.ErrMessageTooLarge)
	headers := []topicstore.Header{{Key: "k", Value: make([]byte, 1000)}}
	e.commit("t", topicstore.Message{Partition: 0, Body: []byte("x")})
	e.commit("u", topicstore.Message{Partition: 0, Body: []byte("x"), Key: make([]byte, 1000), Headers: headers})
	plain, keyed := e.info("t").Partitions[0].Bytes, e.info("u").Partitions[0].Bytes
	require.GreaterOrEqual(t, keyed-plain, int64(2000), "the key and headers count in the partition's bytes")
	err = e.commitErr(topicstore.TopicWrite{Topic: "t", Messages: []topicstore.Message{{Partition: 0, NullBody: true, Body: []byte("x")}}})
	require.ErrorIs(t, err, topicstore.ErrInvalidMessage)
}
