package sharedrec

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/sharedcore"
)

// TestWriteThenLoad writes a step's records and loads them back: the
// start, the delivery counts and finished states from the start on, and a
// record left below the start queued as stale.
func TestWriteThenLoad(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const id, consumer = 7, "c"
	// A record below the start a crash left behind.
	if err := db.Set(keys.SharedDone(id, consumer, 0, 5), countValue(1), pebble.Sync); err != nil {
		t.Fatal(err)
	}

	c := &sharedcore.Core{Parts: []*sharedcore.Part{
		{Start: 10, Ents: make([]sharedcore.Entry, 5)},
		{Start: 0, Ents: make([]sharedcore.Entry, 2)},
	}}
	c.Parts[0].Ents[2].State = sharedcore.Acked
	var b *pebble.Batch
	batch := func() *pebble.Batch {
		if b == nil {
			b = db.NewBatch()
		}
		return b
	}
	for pi, p := range c.Parts {
		WritePart(batch, id, consumer, pi, p)
	}
	WriteCounts(batch, id, consumer, c, []sharedcore.Ref{
		{Part: 0, Off: 11, Deliv: 2},
		{Part: 0, Off: 12, Deliv: 1}, // finished: left to WriteFinished
		{Part: 1, Off: 1, Deliv: 1},
		{Part: 1, Off: 9, Deliv: 1}, // not in the window: nothing
	})
	WriteFinished(batch, id, consumer, c, []sharedcore.Ref{{Part: 0, Off: 12, State: sharedcore.Acked}})
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if c.Parts[0].Persisted != 10 || !c.Parts[0].Ents[1].Stored || !c.Parts[0].Ents[2].Stored {
		t.Fatalf("bookkeeping not updated: %+v", c.Parts[0])
	}

	parts := []*sharedcore.Part{{}, {}}
	pre := keys.SharedPrefix(id, consumer)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: append(pre[:len(pre):len(pre)], 0xff)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := Load(it, pre, parts); err != nil {
		t.Fatal(err)
	}
	want := []*sharedcore.Part{
		{Start: 10, Persisted: 10, Stale: []int64{5}, Done: map[int64]sharedcore.Disk{
			11: {State: sharedcore.Avail, Deliv: 2}, 12: {State: sharedcore.Acked}}},
		{Done: map[int64]sharedcore.Disk{1: {State: sharedcore.Avail, Deliv: 1}}},
	}
	if !reflect.DeepEqual(parts, want) {
		t.Fatalf("loaded %+v %+v, want %+v %+v", *parts[0], *parts[1], *want[0], *want[1])
	}
}

// TestLoadCorrupt: a record that does not decode is ErrCorrupt.
func TestLoadCorrupt(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set(keys.SharedDone(1, "c", 0, 3), []byte{9}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	pre := keys.SharedPrefix(1, "c")
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: append(pre[:len(pre):len(pre)], 0xff)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := Load(it, pre, []*sharedcore.Part{{}}); !errors.Is(err, topicstore.ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}
