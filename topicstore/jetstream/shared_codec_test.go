package jetstream

import (
	"math/rand"
	"reflect"
	"testing"

	"topicgate/topicstore/sharedcore"
)

// TestSharedStateCodec: states round-trip, equal states encode equally,
// and a damaged encoding is refused rather than misread.
func TestSharedStateCodec(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	holders := []sharedcore.Holder{{}, {Gateway: 1, Session: 7}, {Gateway: 1 << 63, Session: 7}, {Gateway: 42, Session: 1<<32 - 1}}
	for i := range 500 {
		st := shPartState{start: rng.Int63n(1 << 40), cnt: shCounts{archived: rng.Int63n(100), moved: rng.Int63n(5), failures: rng.Int63n(3)}}
		if i%3 == 0 {
			st.cnt.lastErr = "topic does not exist: \"dlq\""
		}
		off := st.start
		for range rng.Intn(40) {
			off += rng.Int63n(5)
			d := shDurable{off: off, state: sharedcore.State(rng.Intn(5)), expired: rng.Intn(2) == 0, deliv: rng.Int31n(1000),
				expHolder: holders[rng.Intn(len(holders))]}
			if h := holders[rng.Intn(len(holders))]; h != (sharedcore.Holder{}) {
				d.holder, d.deadline = h, 1_700_000_000_000_000_000+rng.Int63n(1e12)
			}
			st.ents = append(st.ents, d)
			off++
		}
		enc := st.encode()
		got, err := decodeState(enc)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if len(st.ents) == 0 {
			st.ents = []shDurable{}
		}
		if !reflect.DeepEqual(got, st) {
			t.Fatalf("state %d: got %+v, want %+v", i, got, st)
		}
		if again := got.encode(); again != enc {
			t.Fatalf("state %d: not canonical: %q then %q", i, enc, again)
		}
		if len(enc) > 4 {
			if _, err := decodeState(enc[:len(enc)-3]); err == nil {
				t.Fatalf("state %d: a truncated encoding decoded", i)
			}
		}
	}
	for _, bad := range []string{"", "!!", "AA", (&shPartState{}).encode() + "AAAA"} {
		if _, err := decodeState(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestSharedStateSize: a full window of locked messages stays far below a
// message's size limit.
func TestSharedStateSize(t *testing.T) {
	st := shPartState{start: 1 << 30}
	for i := range int64(sharedcore.DefaultWindow) {
		st.ents = append(st.ents, shDurable{off: st.start + i, state: sharedcore.Acquired, deliv: 3,
			holder: sharedcore.Holder{Gateway: uint64(i%8) << 40, Session: uint32(1000 + i%64)}, deadline: 1_700_000_000_000_000_000 + i*1e6})
	}
	if n := len(st.encode()); n > 24<<10 {
		t.Fatalf("a full window encodes in %d bytes", n)
	}
}
