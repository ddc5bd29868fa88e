package topicstore

import (
	"context"
	"fmt"
	"testing"
)

// fakeScanner holds partitions of messages whose body names them, and
// counts the Scans it serves.
type fakeScanner struct {
	parts [][]int64 // per partition, the offsets that are there
	scans int
}

func (f *fakeScanner) Scan(_ context.Context, _ string, r ScanRange, fn func(m *Message) bool) error {
	f.scans++
	for _, off := range f.parts[r.Partition] {
		if off < r.Start || (r.End >= 0 && off >= r.End) {
			continue
		}
		m := &Message{Partition: r.Partition, Offset: off, Body: []byte(fmt.Sprintf("%d/%d", r.Partition, off))}
		if !fn(m) {
			return nil
		}
	}
	return nil
}

// TestScanRefs: one Scan per partition, refs in any order, a missing
// message left out, a ref named twice called twice, each call with its
// ref's index; ReadRefs' copies are their own and each other's.
func TestScanRefs(t *testing.T) {
	f := &fakeScanner{parts: [][]int64{{0, 1, 2, 3, 4}, {7, 9}}}
	refs := []MsgRef{{1, 9}, {0, 3}, {0, 1}, {1, 8}, {0, 3}, {1, 7}}
	var got []string
	err := ScanRefs(context.Background(), f, "t", refs, func(i int, m *Message) {
		if m.Partition != refs[i].Partition || m.Offset != refs[i].Offset {
			t.Fatalf("index %d is %v, called with %d/%d", i, refs[i], m.Partition, m.Offset)
		}
		got = append(got, fmt.Sprintf("%d:%s", i, m.Body))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[2:0/1 1:0/3 4:0/3 5:1/7 0:1/9]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	if f.scans != 2 {
		t.Fatalf("%d scans, want one per partition", f.scans)
	}
	m, err := ReadRefs(context.Background(), f, "t", refs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 4 {
		t.Fatalf("ReadRefs: %d messages, want 4 (1/8 is not there)", len(m))
	}
	a, b := m[MsgRef{0, 1}], m[MsgRef{0, 3}]
	a.Body = append(a.Body, 'x') // a body's capacity ends at its length
	if string(b.Body) != "0/3" || string(m[MsgRef{0, 1}].Body) != "0/1" {
		t.Fatalf("bodies overlap: %q %q", b.Body, m[MsgRef{0, 1}].Body)
	}
}

// TestCloneIn: bodies share an arena while it has room, a body that does
// not fit gets a new one, nil stays nil and empty stays empty.
func TestCloneIn(t *testing.T) {
	var arena []byte
	x := (&Message{Body: []byte("abc")}).CloneIn(&arena, 5)
	y := (&Message{Body: []byte("de")}).CloneIn(&arena, 5)
	if len(arena) != 5 || &arena[0] != &x.Body[0] || &arena[3] != &y.Body[0] {
		t.Fatal("x and y do not share the arena")
	}
	z := (&Message{Body: []byte("fgh")}).CloneIn(&arena, 1)
	if string(x.Body)+string(y.Body)+string(z.Body) != "abcdefgh" {
		t.Fatalf("bodies %q %q %q", x.Body, y.Body, z.Body)
	}
	if cap(z.Body) != 3 || len(arena) != 3 {
		t.Fatalf("z: cap %d, arena len %d; want a new arena of its size", cap(z.Body), len(arena))
	}
	if n := (&Message{}).CloneIn(&arena, 9); n.Body != nil {
		t.Fatal("a nil body became non-nil")
	}
	if e := (&Message{Body: []byte{}}).CloneIn(&arena, 9); e.Body == nil || len(e.Body) != 0 {
		t.Fatal("an empty body did not stay empty and non-nil")
	}
}
