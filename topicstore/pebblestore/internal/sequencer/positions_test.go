package sequencer

import (
	"strings"
	"testing"
	"time"
)

// pos builds a core position update of consumer c in topic 1.
func pos(c string, part int32, off, expect int64) PosUpdate {
	return PosUpdate{TopicID: 1, Topic: "t", Consumer: c, Partition: part, Offset: off, Expect: expect}
}

// TestCorePositions scripts position updates through the core: checks
// against the group's earlier requests, whole-request failure, offsets
// checked before the request's own writes.
func TestCorePositions(t *testing.T) {
	s := newCore(2)
	s.Topics[1].Consumers = map[string][]int64{"c": {0, 0}, "d": {0, 0}}
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		reqs []Request
		want string
	}{
		{[]Request{{Writes: req(write(1, "a@0", "b@0", "c@0", "d@0", "e@0"))}}, `
batch t1/p0 base=0 cum=0: a b c d e
req0: 5/0
`},
		{[]Request{
			{Positions: []PosUpdate{pos("c", 0, 3, 0), pos("d", 1, 0, 0)}},
			{Positions: []PosUpdate{pos("c", 0, 4, 0)}}, // same old value: the first wins
			{Writes: req(write(1, "f@1")), Positions: []PosUpdate{pos("c", 0, 5, 3)}},
			// Own writes do not count: p1's end is 1 (f), not 3.
			{Writes: req(write(1, "g@1", "h@1")), Positions: []PosUpdate{pos("c", 1, 3, -1)}},
			{Positions: []PosUpdate{pos("c", 1, 1, 0), pos("x", 0, 1, -1)}},
			{Positions: []PosUpdate{pos("c", 7, 0, -1)}},
			// Updates see earlier ones of the same request.
			{Writes: req(write(1, "i@0")), Positions: []PosUpdate{pos("c", 0, 4, 5), pos("c", 0, 5, 4), pos("d", 0, 1, 0)}},
			{Positions: []PosUpdate{pos("d", 0, 2, 0)}},
		}, `
position t1/p0/c=3
position t1/p1/d=0
position t1/p0/c=5
position t1/p0/c=4
position t1/p0/c=5
position t1/p0/d=1
batch t1/p1 base=0 cum=0: f
batch t1/p0 base=5 cum=45: i
req0:
req1: consumer position was moved concurrently: topic "t" consumer "c" partition 0: committed offset is 3, expected 0
req2: 1/0
req3: offset out of range: topic "t" consumer "c" partition 1: offset 3 is outside [0, 1]
req4: consumer does not exist: topic "t" consumer "x"
req5: partition does not exist: topic "t" partition 7
req6: 1/0
req7: consumer position was moved concurrently: topic "t" consumer "d" partition 0: committed offset is 1, expected 0
`},
	}
	for i, st := range steps {
		got := render(t, s.Apply(st.reqs, t0))
		if want := strings.TrimLeft(st.want, "\n"); got != want {
			t.Fatalf("step %d:\ngot:\n%s\nwant:\n%s", i, got, want)
		}
	}
	eq(t, s.Topics[1].Consumers, map[string][]int64{"c": {5, 0}, "d": {1, 0}})
	// A stored offset below the start reads as the start.
	s.Topics[1].Parts[0].Start = 6
	check(t, s.checkPositions([]PosUpdate{pos("d", 0, 6, 6)}) == nil)
}
