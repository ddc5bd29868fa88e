package rowexec

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"topicgate/topicstore"
)

// TestHeadersRoundTrip: whatever bytes a header value holds, and whether
// it is null or empty, ParseHeaders reads back what HeadersJSON wrote.
func TestHeadersRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := [][]topicstore.Header{
		{{Key: "k", Value: []byte("text")}, {Key: "k", Value: nil}, {Key: "", Value: []byte{}}},
		{{Key: "hex", Value: []byte(`\x41`)}, {Key: "nul", Value: []byte{'a', 0}}, {Key: "bad", Value: []byte{0xc3}}},
		{{Key: "q\"\\\n", Value: []byte("é \"quoted\" \\ \t")}},
	}
	for range 200 {
		var hs []topicstore.Header
		for range 1 + r.Intn(4) {
			v := make([]byte, r.Intn(6))
			for i := range v {
				v[i] = []byte{0, 'a', '\\', 'x', 0xc3, 0xa9, 0xff, '"'}[r.Intn(8)]
			}
			if r.Intn(5) == 0 {
				v = nil
			}
			hs = append(hs, topicstore.Header{Key: "k", Value: v})
		}
		cases = append(cases, hs)
	}
	for _, hs := range cases {
		s := HeadersJSON(hs)
		got, err := ParseHeaders(s)
		require.NoError(t, err, s)
		require.Equal(t, hs, got, s)
	}
	require.Equal(t, "[]", HeadersJSON(nil))
	got, err := ParseHeaders("[]")
	require.NoError(t, err)
	require.Nil(t, got)
	require.Equal(t, `[{"key": "b", "value": "\\x00ff"}, {"key": "n", "value": null}]`,
		HeadersJSON([]topicstore.Header{{Key: "b", Value: []byte{0, 0xff}}, {Key: "n"}}))
}
