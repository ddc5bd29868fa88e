package sharedcore

import (
	"reflect"
	"sort"
	"testing"
	"time"

	"topicgate/topicstore"
)

func eq(t testing.TB, got, want any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v %v", got, want, msg)
	}
}

func mk(groups ...string) *Part {
	p := &Part{}
	for _, g := range groups {
		p.Ents = append(p.Ents, Entry{Group: g})
	}
	return p
}

func ends(ns ...int64) func(int32) int64 { return func(p int32) int64 { return ns[p] } }

func sorted(rs []topicstore.MsgRef) []topicstore.MsgRef {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Partition != rs[j].Partition {
			return rs[i].Partition < rs[j].Partition
		}
		return rs[i].Offset < rs[j].Offset
	})
	return rs
}

var h1, h2 = Holder{Session: 1}, Holder{Session: 2}

// TestOrderAcrossSplit: with keep_messages_order a group's messages in a
// child wait until the group's messages in the parent (and the
// grandparent) are finished, whichever partition the round robin starts
// with; ungrouped messages and other groups are not held back; a parent
// whose window does not reach its end holds every group of its children.
func TestOrderAcrossSplit(t *testing.T) {
	for rr := 0; rr < 3; rr++ {
		// 0 split into 1 and 2; group a spans 0 and 1, b only in 2.
		c := &Core{Cfg: Config{Timeout: time.Second, KeepOrder: true}, Window: 10, RR: rr}
		c.Parts = []*Part{mk("a", "a"), mk("a", "", "a"), mk("b")}
		c.Tree = Tree{Parent: []int32{-1, 0, 0}, End: ends(2, 3, 1), Split: true}
		got := sorted(c.Pick(100, 10, h1, 200))
		eq(t, got, []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 1, Offset: 1}, {Partition: 2, Offset: 0}}) // a from the parent only
		var eff Effects
		eq(t, c.Act(100, h1, topicstore.ActionAck, topicstore.MsgRef{Partition: 0, Offset: 0}, time.Time{}, &eff), topicstore.OutcomeDone)
		eq(t, sorted(c.Pick(100, 10, h1, 200)), []topicstore.MsgRef{{Partition: 0, Offset: 1}}) // still the parent's a
		eq(t, c.Act(100, h1, topicstore.ActionAck, topicstore.MsgRef{Partition: 0, Offset: 1}, time.Time{}, &eff), topicstore.OutcomeDone)
		eq(t, sorted(c.Pick(100, 10, h1, 200)), []topicstore.MsgRef{{Partition: 1, Offset: 0}}) // the parent is done with a
	}

	// A grandparent's unfinished message holds the grandchild's group too.
	c := &Core{Cfg: Config{Timeout: time.Second, KeepOrder: true}, Window: 10}
	c.Parts = []*Part{mk("a"), mk(), mk(), mk("a")}
	c.Tree = Tree{Parent: []int32{-1, 0, 0, 1}, End: ends(1, 0, 0, 1), Split: true}
	c.Parts[0].Ents[0].State = Acquired
	eq(t, c.Pick(100, 10, h1, 200), []topicstore.MsgRef(nil))

	// A parent not loaded to its end: the child's groups wait, ungrouped go.
	c = &Core{Cfg: Config{Timeout: time.Second, KeepOrder: true}, Window: 10}
	c.Parts = []*Part{mk("x"), mk("a", "")}
	c.Tree = Tree{Parent: []int32{-1, 0}, End: ends(5, 2), Split: true}
	eq(t, sorted(c.Pick(100, 10, h1, 200)), []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 1, Offset: 1}})

	// Without keep_messages_order parents and children are read freely.
	c = &Core{Cfg: Config{Timeout: time.Second}, Window: 10}
	c.Parts = []*Part{mk("a"), mk("a")}
	c.Tree = Tree{Parent: []int32{-1, 0}, End: ends(1, 1), Split: true}
	eq(t, sorted(c.Pick(100, 10, h1, 200)), []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 1, Offset: 0}})
}

// TestPickOrderAndExpiry: keep order across partitions, dead-letter on
// expiry.
func TestPickOrderAndExpiry(t *testing.T) {
	c := &Core{Cfg: Config{Timeout: time.Second, KeepOrder: true, MaxAttempts: 1, Policy: "move"}, Window: 10}
	c.Parts = []*Part{mk("a", "a", "b"), mk("a", "c")}
	got := sorted(c.Pick(100, 10, h1, 200))
	eq(t, got, []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 0, Offset: 2}, {Partition: 1, Offset: 1}}) // one "a" only
	eq(t, c.Pick(100, 10, h2, 200), []topicstore.MsgRef(nil))
	var eff Effects
	c.Expire(150, &eff)
	eq(t, len(eff.Moves), 0)
	c.Expire(200, &eff)
	eq(t, len(eff.Moves), 3) // one attempt each: all go to the DLQ
	eq(t, c.MinDeadline, int64(0))
	eq(t, c.Act(300, h1, topicstore.ActionAck, topicstore.MsgRef{Partition: 0, Offset: 0}, time.Time{}, &eff), topicstore.OutcomeExpired)
}

// TestHoldersOfTwoGateways: the same session number on two gateways is
// two holders: neither acts on the other's locks, and an expiry is
// reported to the holder that lost the lock only.
func TestHoldersOfTwoGateways(t *testing.T) {
	a, b := Holder{Gateway: 1, Session: 7}, Holder{Gateway: 2, Session: 7}
	c := &Core{Cfg: Config{Timeout: time.Second}, Window: 10}
	c.Parts = []*Part{mk("", "")}
	r0, r1 := topicstore.MsgRef{Offset: 0}, topicstore.MsgRef{Offset: 1}
	eq(t, c.Pick(100, 1, a, 200), []topicstore.MsgRef{r0})
	eq(t, c.Pick(100, 1, b, 150), []topicstore.MsgRef{r1})
	var eff Effects
	eq(t, c.Act(100, b, topicstore.ActionAck, r0, time.Time{}, &eff), topicstore.OutcomeNotHeld)
	eq(t, [2]bool{c.Held(100, a, r0), c.Held(100, b, r0)}, [2]bool{true, false})
	c.Expire(160, &eff)
	eq(t, c.Pick(160, 1, a, 300), []topicstore.MsgRef{r1})
	eq(t, c.Act(160, b, topicstore.ActionAck, r1, time.Time{}, &eff), topicstore.OutcomeExpired)
	eq(t, c.Act(160, a, topicstore.ActionAck, r1, time.Time{}, &eff), topicstore.OutcomeDone)
	c.ReleaseSession(b, nil, &eff)
	eq(t, c.Parts[0].Ents[0].State, Acquired, "b's release leaves a's lock")
	c.ReleaseSession(a, nil, &eff)
	eq(t, c.Parts[0].Ents[0].State, Avail)
}

// TestClone: a clone's steps leave the original alone.
func TestClone(t *testing.T) {
	c := &Core{Cfg: Config{Timeout: time.Second}, Window: 10}
	c.Parts = []*Part{mk("", "")}
	k := c.Clone()
	eq(t, len(k.Pick(100, 2, h1, 200)), 2)
	eq(t, c.Parts[0].Ents[0].State, Avail)
	eq(t, c.MinDeadline, int64(0))
	eq(t, k.Parts[0].Ents[1].Deliveries, int32(1))
}

// TestStatsAndNextReady: a delayed message counts as delayed until its
// delay is over; NextReady is the earlier of that and the first deadline.
func TestStatsAndNextReady(t *testing.T) {
	c := &Core{Cfg: Config{Timeout: time.Second, RecvDelay: 50}, Window: 10}
	c.Parts = []*Part{{Ents: []Entry{{Written: 10}, {Written: 10, Delay: 200}, {State: Archived}}}}
	eq(t, c.Stats(0, 20), topicstore.SharedPartitionStats{Delayed: 2, Archived: 1, OldestUnacked: time.Unix(0, 10).UTC(), Deliveries: map[int32]int64{0: 2}})
	eq(t, c.NextReady(20), int64(60))
	eq(t, c.Pick(60, 5, h1, 100), []topicstore.MsgRef{{Offset: 0}})
	eq(t, c.NextReady(60), int64(100))
	eq(t, c.NextReady(100), int64(210))
}

// TestAppendSlides: a window that slides along its partition (entries
// appended at its end, finished ones dropped by Advance at its front)
// keeps its entries in offset order and, once its array is as large as
// it needs, allocates no more; a window set by an embedder to an array
// of its own is appended to as a plain slice.
func TestAppendSlides(t *testing.T) {
	p := &Part{}
	next := int64(0)
	slide := func(add, finish int) {
		for range add {
			p.Append(Entry{Written: next})
			next++
		}
		for i := range finish {
			p.Ents[i].State = Acked
		}
		p.Advance()
	}
	check := func() {
		t.Helper()
		for i, e := range p.Ents {
			if e.Written != p.Start+int64(i) {
				t.Fatalf("entry %d of the window from %d holds offset %d", i, p.Start, e.Written)
			}
		}
	}
	for range 100 { // grow to a window of ~300 while sliding
		slide(7, 4)
		check()
	}
	steps := func() {
		for range 1000 {
			slide(5, 5)
		}
	}
	if allocs := testing.AllocsPerRun(1, steps); allocs != 0 {
		t.Fatalf("a window sliding 5000 offsets allocated %v times", allocs)
	}
	check()
	eq(t, len(p.Ents), 300)

	own := make([]Entry, 0, 8)
	for i := range 8 {
		own = append(own, Entry{Written: p.Start + int64(i)})
	}
	p.Ents = own
	p.Append(Entry{Written: p.LoadedEnd()})
	check()
	eq(t, len(p.Ents), 9)
	eq(t, own[0].Written, p.Start) // the embedder's array was left as it was
}
