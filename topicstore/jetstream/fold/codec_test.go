package fold

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
		st := SharedState{Start: rng.Int63n(1 << 40), Cnt: SharedCounts{Archived: rng.Int63n(100), Moved: rng.Int63n(5), Failures: rng.Int63n(3)}}
		if i%3 == 0 {
			st.Cnt.LastErr = "topic does not exist: \"dlq\""
		}
		off := st.Start
		for range rng.Intn(40) {
			off += rng.Int63n(5)
			d := SharedEntry{Off: off, State: sharedcore.State(rng.Intn(5)), Expired: rng.Intn(2) == 0, Deliv: rng.Int31n(1000),
				ExpHolder: holders[rng.Intn(len(holders))]}
			if h := holders[rng.Intn(len(holders))]; h != (sharedcore.Holder{}) {
				d.Holder, d.Deadline = h, 1_700_000_000_000_000_000+rng.Int63n(1e12)
			}
			st.Ents = append(st.Ents, d)
			off++
		}
		enc := st.Encode()
		got, err := DecodeSharedState(enc)
		if err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if len(st.Ents) == 0 {
			st.Ents = []SharedEntry{}
		}
		if !reflect.DeepEqual(got, st) {
			t.Fatalf("state %d: got %+v, want %+v", i, got, st)
		}
		if again := got.Encode(); again != enc {
			t.Fatalf("state %d: not canonical: %q then %q", i, enc, again)
		}
		if len(enc) > 4 {
			if _, err := DecodeSharedState(enc[:len(enc)-3]); err == nil {
				t.Fatalf("state %d: a truncated encoding decoded", i)
			}
		}
	}
	for _, bad := range []string{"", "!!", "AA", (&SharedState{}).Encode() + "AAAA"} {
		if _, err := DecodeSharedState(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestSharedStateSize: a full window of locked messages stays far below a
// message's size limit.
func TestSharedStateSize(t *testing.T) {
	st := SharedState{Start: 1 << 30}
	for i := range int64(sharedcore.DefaultWindow) {
		st.Ents = append(st.Ents, SharedEntry{Off: st.Start + i, State: sharedcore.Acquired, Deliv: 3,
			Holder: sharedcore.Holder{Gateway: uint64(i%8) << 40, Session: uint32(1000 + i%64)}, Deadline: 1_700_000_000_000_000_000 + i*1e6})
	}
	if n := len(st.Encode()); n > 24<<10 {
		t.Fatalf("a full window encodes in %d bytes", n)
	}
}
