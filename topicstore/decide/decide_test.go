package decide

import (
	"errors"
	"testing"
	"time"

	"topicgate/topicstore"
)

func TestAdmit(t *testing.T) {
	p := Producer{Fresh: true}
	if seq, ok := p.Admit(true, 5); !ok || seq != 5 {
		t.Fatalf("fresh producer: got %d %v, want 5 true", seq, ok)
	}
	if _, ok := p.Admit(true, 5); ok {
		t.Fatal("seqno 5 again was admitted")
	}
	if _, ok := p.Admit(true, 3); ok {
		t.Fatal("seqno 3 after 5 was admitted")
	}
	if seq, ok := p.Admit(false, 0); !ok || seq != 6 {
		t.Fatalf("no seqno: got %d %v, want the next, 6", seq, ok)
	}
	if seq, ok := p.Admit(true, 100); !ok || seq != 100 || p.MaxSeqNo != 100 {
		t.Fatalf("a gap: got %d %v max %d, want 100 true 100", seq, ok, p.MaxSeqNo)
	}
}

func TestAdmitChunk(t *testing.T) {
	for _, c := range []struct {
		name    string
		p       Producer
		summary bool
		lo, hi  int64
		want    Chunk
		max     int64
	}{
		{"fresh", Producer{Fresh: true, MaxSeqNo: 50}, true, 1, 10, ChunkNew, 10},
		{"above", Producer{MaxSeqNo: 10}, true, 11, 20, ChunkNew, 20},
		{"all duplicates", Producer{MaxSeqNo: 20}, true, 11, 20, ChunkDuplicate, 20},
		{"straddles", Producer{MaxSeqNo: 15}, true, 11, 20, ChunkMixed, 15},
		{"no summary", Producer{Fresh: true}, false, 0, 0, ChunkMixed, 0},
	} {
		p := c.p
		if got := p.AdmitChunk(c.summary, c.lo, c.hi); got != c.want || p.MaxSeqNo != c.max {
			t.Errorf("%s: got %v max %d, want %v max %d", c.name, got, p.MaxSeqNo, c.want, c.max)
		}
	}
}

func TestExpired(t *testing.T) {
	t0 := time.Unix(1000, 0)
	if Expired(t0, t0.Add(time.Hour), 0) {
		t.Error("expiry 0 means never")
	}
	if Expired(t0, t0.Add(time.Minute), time.Minute) {
		t.Error("expired at exactly its period")
	}
	if !Expired(t0, t0.Add(time.Minute+1), time.Minute) {
		t.Error("not expired past its period")
	}
}

// split returns a keyed layout of two partitions whose first split in two.
func split(t *testing.T) topicstore.Layout {
	l := topicstore.FlatLayout(2)
	l.KeyAll()
	if _, _, err := l.Split(0); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRouting(t *testing.T) {
	flat := topicstore.FlatLayout(3)
	next := func() int32 { return 2 }
	if got := Bind(&flat, "p", -1, next); got != 2 {
		t.Errorf("flat topic, no partition named: bound to %d, want the round robin's 2", got)
	}
	if got := Bind(&flat, "p", 1, next); got != 1 {
		t.Errorf("named partition 1: bound to %d", got)
	}
	if _, ok := Route(&flat, -1, "g"); ok {
		t.Error("flat topic: a message_group_id routed a message that names no partition")
	}
	if got, ok := Route(&flat, 0, ""); !ok || got != 0 {
		t.Errorf("named partition 0: routed to %d %v", got, ok)
	}

	l := split(t)
	if !Inactive(&l, 0) || Inactive(&l, 1) {
		t.Fatalf("after the split: inactive(0)=%v inactive(1)=%v", Inactive(&l, 0), Inactive(&l, 1))
	}
	for _, key := range []string{"a", "b", "c", "d", "e"} {
		owner := l.Owner(topicstore.KeyHash(key))
		if got := Bind(&l, key, -1, next); got != owner {
			t.Errorf("keyed: producer %q bound to %d, want its key's owner %d", key, got, owner)
		}
		if got, ok := Route(&l, -1, key); !ok || got != owner {
			t.Errorf("keyed: group %q routed to %d %v, want %d", key, got, ok, owner)
		}
		if got := Live(&l, 0, key); Inactive(&l, got) || got == 0 {
			t.Errorf("a write naming split partition 0 for %q goes to %d, want an active child", key, got)
		}
	}
	if got := Live(&l, 1, "a"); got != 1 {
		t.Errorf("an active partition continues to itself: got %d", got)
	}
}

func TestBindings(t *testing.T) {
	var b Bindings
	none := func() (int32, bool) { return 0, false }
	boundTo := func(p int32) func() (int32, bool) { return func() (int32, bool) { return p, true } }
	if err := b.Check("p", 1, boundTo(1)); err != nil {
		t.Fatal(err)
	}
	err := b.Check("q", 2, boundTo(0))
	var pe *topicstore.ProducerPartitionError
	if !errors.As(err, &pe) || pe.Bound != 0 || pe.Named != 2 || !errors.Is(err, topicstore.ErrProducerPartition) {
		t.Fatalf("producer bound to 0 naming 2: %v", err)
	}
	// A producer the write binds is bound by the first partition it names.
	if err := b.Check("r", 3, none); err != nil {
		t.Fatal(err)
	}
	if err := b.Check("r", 4, none); err == nil {
		t.Fatal("a second partition for a producer the write binds was accepted")
	}
	if err := b.Check("", 4, boundTo(1)); err != nil {
		t.Fatalf("no producer: %v", err)
	}
	if err := b.Check("p", -1, boundTo(0)); err != nil {
		t.Fatalf("no partition named: %v", err)
	}
}

func TestCheckPosition(t *testing.T) {
	u := Position{Topic: "t", Consumer: "c", Partition: 1, Offset: 5, Expect: 3}
	if err := CheckPosition(u, 3, 0, 10); err != nil {
		t.Fatal(err)
	}
	if err := CheckPosition(u, 4, 0, 10); !errors.Is(err, topicstore.ErrPositionConflict) ||
		err.Error() != `consumer position was moved concurrently: topic "t" consumer "c" partition 1: committed offset is 4, expected 3` {
		t.Fatalf("moved since read: %v", err)
	}
	u.Expect = -1
	u.Offset = 11
	if err := CheckPosition(u, 0, 0, 10); !errors.Is(err, topicstore.ErrOffsetOutOfRange) {
		t.Fatalf("past the end: %v", err)
	}
	u.Offset = 2
	if err := CheckPosition(u, 0, 4, 10); err != nil {
		t.Fatalf("a commit below the start (retention passed it): %v", err)
	}
	if got := Moved(u, 4); got != 4 {
		t.Fatalf("moved below the start: %d, want the start 4", got)
	}
	u.Exact = true
	if err := CheckPosition(u, 0, 4, 10); !errors.Is(err, topicstore.ErrOffsetOutOfRange) {
		t.Fatalf("an explicit position below the start: %v", err)
	}
	if err := TopicGone("t"); !errors.Is(err, topicstore.ErrTopicNotFound) {
		t.Fatal(err)
	}
	if err := ConsumerGone("t", "c"); !errors.Is(err, topicstore.ErrConsumerNotFound) {
		t.Fatal(err)
	}
	if err := PartitionGone("t", 9); !errors.Is(err, topicstore.ErrPartitionNotFound) {
		t.Fatal(err)
	}
}
