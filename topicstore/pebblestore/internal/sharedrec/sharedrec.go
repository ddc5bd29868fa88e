package sharedrec

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/sharedcore"
)

// Load reads a shared consumer's records into parts (one per partition,
// empty): each partition's start, and the finished states and delivery
// counts of the messages from the start on. it ranges over the
// consumer's records, whose keys start with pre (keys.SharedPrefix). A
// message record below its partition's start, left by a crash before its
// delete, goes to the partition's Stale list, to be deleted with the next
// write. Records of partitions beyond parts are skipped.
func Load(it *pebble.Iterator, pre []byte, parts []*sharedcore.Part) error {
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()[len(pre):]
		if len(k) != 4 && len(k) != 12 {
			return fmt.Errorf("%w: shared-consumer key %q", topicstore.ErrCorrupt, it.Key())
		}
		pi := int(binary.BigEndian.Uint32(k))
		if pi >= len(parts) {
			continue
		}
		p := parts[pi]
		v := it.Value()
		if len(k) == 4 {
			start, n := binary.Uvarint(v)
			if n <= 0 {
				return fmt.Errorf("%w: shared-consumer start %q", topicstore.ErrCorrupt, it.Key())
			}
			p.Start, p.Persisted = int64(start), int64(start)
			continue
		}
		off := int64(binary.BigEndian.Uint64(k[4:]))
		if off < p.Start {
			p.Stale = append(p.Stale, off) // left by a crash before its delete
			continue
		}
		rec, ok := parse(v)
		if !ok {
			return fmt.Errorf("%w: shared-consumer record %q = %x", topicstore.ErrCorrupt, it.Key(), v)
		}
		if p.Done == nil {
			p.Done = map[int64]sharedcore.Disk{}
		}
		p.Done[off] = rec
	}
	return it.Error()
}

// Batch is where a step's records go: a function returning the batch to
// write them to, created on first use, so that a step that changes no
// record builds none.
type Batch func() *pebble.Batch

// StaleBatch is how many stale records (below its start) a partition
// gathers before WritePart deletes them, with one range deletion up to
// the start. A message's record was deleted as soon
// as the start passed it: a third of a shared consumer's memtable inserts
// under the bench's queue (a count record at delivery, a finished record
// at its acknowledgement, the delete). Records below the start are never
// loaded (Load), so leaving up to StaleBatch of them per partition only
// costs their keys; a range over offsets below the start covers no live
// record. The range starts where the last one ended (Part.Cleaned, 0
// after a load) or at the lowest listed record if that is lower, so it
// also takes any record left below the start that no step listed.
const StaleBatch = 1024

// WritePart writes partition pi's record changes after its window
// advanced: the deletion of its stale records once there are StaleBatch
// of them and, if its start moved past what is persisted, the new start.
func WritePart(batch Batch, id uint64, consumer string, pi int, p *sharedcore.Part) {
	if len(p.Stale) >= StaleBatch {
		lo := min(p.Cleaned, slices.Min(p.Stale))
		_ = batch().DeleteRange(keys.SharedDone(id, consumer, int32(pi), lo), keys.SharedDone(id, consumer, int32(pi), p.Start), nil)
		p.Stale, p.Cleaned = p.Stale[:0], p.Start
	}
	if p.Start > p.Persisted {
		_ = batch().Set(keys.SharedStart(id, consumer, int32(pi)), binary.AppendUvarint(nil, uint64(p.Start)), nil)
		p.Persisted = p.Start
	}
}

// WriteCounts writes the delivery counts a step changed: a message
// delivered at least once gets a count record, one handed back
// undelivered loses the record it had; finished messages are left to
// WriteFinished.
//
// counts is sorted by key first (stably: a message's later change stays
// later): an acquisition picks round robin over the partitions, and the
// memtable inserts a run of adjacent keys almost for free (its inserter
// starts each search where the last one ended) where keys alternating
// between partitions each search the skiplist from its top.
func WriteCounts(batch Batch, id uint64, consumer string, c *sharedcore.Core, counts []sharedcore.Ref) {
	slices.SortStableFunc(counts, byKey)
	for _, r := range counts {
		e := c.Parts[r.Part].At(r.Off)
		switch {
		case e == nil || e.Finished():
		case r.Deliv > 0:
			e.Stored = true
			_ = batch().Set(keys.SharedDone(id, consumer, r.Part, r.Off), countValue(r.Deliv), nil)
		case e.Stored: // handed back undelivered: never delivered after all
			e.Stored = false
			_ = batch().Delete(keys.SharedDone(id, consumer, r.Part, r.Off), nil)
		}
	}
}

// WriteFinished writes the finished state (acked or archived) of the
// messages a step finished that are still in their window.
func WriteFinished(batch Batch, id uint64, consumer string, c *sharedcore.Core, finished []sharedcore.Ref) {
	slices.SortStableFunc(finished, byKey) // as WriteCounts
	for _, r := range finished {
		if e := c.Parts[r.Part].At(r.Off); e != nil {
			e.Stored = true
			_ = batch().Set(keys.SharedDone(id, consumer, r.Part, r.Off), []byte{byte(r.State)}, nil)
		}
	}
}

// byKey orders refs as their records' keys: by partition, then offset.
func byKey(a, b sharedcore.Ref) int {
	if c := cmp.Compare(a.Part, b.Part); c != 0 {
		return c
	}
	return cmp.Compare(a.Off, b.Off)
}

// Acked is the record of a message acknowledged in a transaction.
func Acked() []byte { return []byte{byte(sharedcore.Acked)} }

// countValue is the record of a message delivered n times. The batch
// copies it, so the common small counts share one array.
func countValue(n int32) []byte {
	if int(n) < len(smallCounts) {
		return smallCounts[n][:]
	}
	return binary.AppendUvarint([]byte{byte(sharedcore.Avail)}, uint64(n))
}

// smallCounts holds the records of the counts below 128 (one varint byte).
var smallCounts = func() (v [128][2]byte) {
	for n := range v {
		v[n] = [2]byte{byte(sharedcore.Avail), byte(n)}
	}
	return v
}()

// parse decodes a per-message record: a finished state, or a delivery
// count.
func parse(v []byte) (sharedcore.Disk, bool) {
	switch {
	case len(v) == 1 && (sharedcore.State(v[0]) == sharedcore.Acked || sharedcore.State(v[0]) == sharedcore.Archived):
		return sharedcore.Disk{State: sharedcore.State(v[0])}, true
	case len(v) > 1 && sharedcore.State(v[0]) == sharedcore.Avail:
		n, k := binary.Uvarint(v[1:])
		if k != len(v)-1 || n > 1<<31-1 {
			return sharedcore.Disk{}, false
		}
		return sharedcore.Disk{State: sharedcore.Avail, Deliv: int32(n)}, true
	}
	return sharedcore.Disk{}, false
}
