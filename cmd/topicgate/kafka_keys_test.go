package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaKeysHeadersRoundTrip: a record's key (null, empty or set),
// its headers (in order, a repeated key, a null value) and a null value
// (a tombstone) come back through Fetch as they were produced.
func TestKafkaKeysHeadersRoundTrip(t *testing.T) {
	a := startKafkaServer(t, nil)
	exec(t, connect(t, a), "CREATE TOPIC kh")
	in := []*kgo.Record{
		{Topic: "kh", Key: []byte("acct-17"), Value: []byte("deposit 100"),
			Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("web")}, {Key: "source", Value: []byte("retry")}, {Key: "trace", Value: nil}}},
		{Topic: "kh", Key: []byte{}, Value: []byte("empty key")},
		{Topic: "kh", Key: []byte("acct-17"), Value: nil},
	}
	require.NoError(t, kafkaClient(t, a).ProduceSync(testCtx(t), in...).FirstErr())
	got := consumeN(t, a, "kh", 0, 0, len(in))
	require.Len(t, got, len(in))
	for i, r := range got {
		require.Equal(t, in[i].Key, r.Key, "record %d key", i)
		require.Equal(t, in[i].Value == nil, r.Value == nil, "record %d null value", i)
		require.Equal(t, string(in[i].Value), string(r.Value), "record %d value", i)
		require.Equal(t, len(in[i].Headers), len(r.Headers), "record %d headers", i)
		for j, h := range in[i].Headers {
			require.Equal(t, h.Key, r.Headers[j].Key)
			require.Equal(t, h.Value, r.Headers[j].Value, "record %d header %d", i, j)
		}
	}
}
