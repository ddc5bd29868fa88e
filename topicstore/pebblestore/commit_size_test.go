package pebblestore

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore/pebblestore/internal/sequencer"
)

// TestGroupBatchSize: the size commitGroup makes a large group's batch at
// holds everything the group writes, so the batch is never regrown.
func TestGroupBatchSize(t *testing.T) {
	var out sequencer.Output
	for i := range 300 {
		out.Sets = append(out.Sets, sequencer.KV{Key: bytes.Repeat([]byte{'k'}, 20+i%7), Value: bytes.Repeat([]byte{'v'}, 1+i*53)})
	}
	out.Sets = append(out.Sets, sequencer.KV{Key: []byte("forgotten")}) // a deletion through Sets
	out.Dels = append(out.Dels, []byte("d1"), bytes.Repeat([]byte{'d'}, 300))
	ack := new(pebble.Batch)
	_ = ack.Set([]byte("ack"), []byte{1}, nil)
	ops := []*op{{}, {ackB: ack}}

	b := new(pebble.Batch)
	_ = b.Apply(ack, nil)
	for _, kv := range out.Sets {
		if kv.Value == nil {
			_ = b.Delete(kv.Key, nil)
		} else {
			_ = b.Set(kv.Key, kv.Value, nil)
		}
	}
	for _, k := range out.Dels {
		_ = b.Delete(k, nil)
	}
	if got, est := len(b.Repr()), groupBatchSize(ops, &out); got > est {
		t.Fatalf("the group's batch takes %d bytes, more than the %d it is made with", got, est)
	}
}
