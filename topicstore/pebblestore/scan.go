package pebblestore

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// decoders keeps Scan's message decoders between scans: a decoder is
// ~300 bytes that every scan would otherwise allocate, and its strings
// (producer and group ids) are often the next scan's too.
var decoders = sync.Pool{New: func() any { return new(topicstore.MsgDecoder) }}

// Scan calls fn for each visible message of r in offset order. The range is
// clamped to [partition start, visible end). m, its Body and its Attrs slice
// are valid only during the call (Body points into Pebble's buffer); its
// strings stay valid.
func (s *PebbleStore) Scan(ctx context.Context, name string, r topicstore.ScanRange, fn func(m *topicstore.Message) bool) error {
	if err := s.err(); err != nil {
		return err
	}
	t, err := s.lookup(name)
	if err != nil {
		return err
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.parts) {
		return fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, name, r.Partition)
	}
	p := t.parts[r.Partition]
	end := p.visibleEnd.Load()
	if r.End >= 0 && r.End < end {
		end = r.End
	}
	p.mu.Lock()
	start := max(r.Start, p.start)
	p.mu.Unlock()
	if start >= end {
		return nil
	}
	var minWA int64
	if !r.MinWrittenAt.IsZero() {
		minWA = r.MinWrittenAt.UnixMicro()
	}
	d := decoders.Get().(*topicstore.MsgDecoder)
	defer func() {
		d.Release()
		decoders.Put(d)
	}()
	first := true // no batch given to fn yet
	// The batch holding start, when it was read lately: no seek, no CRC.
	base, hinted := p.hints.find(start)
	if hinted && p.cached.Load() > 0 {
		if v, ok := s.batches.get(batchKey{t.id, r.Partition, base}); ok {
			h, payload, err := topicstore.DecodeBatchHeader(v)
			if err != nil {
				return err
			}
			if minWA == 0 || h.WrittenAt >= minWA {
				_, more, err := emitBatch(h, payload, start, end, r.Partition, d, fn)
				if err != nil || !more {
					return err
				}
				first = false
			}
			start = h.Base + int64(h.Count)
			if start >= end {
				return nil
			}
			base, hinted = p.hints.find(start)
		}
	}
	// Batches with a base offset below end hold everything visible we need;
	// batches at or above it may be unsynced and are never read.
	it, err := s.db.NewIter(&pebble.IterOptions{
		LowerBound: keys.Partition(t.id, r.Partition),
		UpperBound: keys.Batch(t.id, r.Partition, end),
	})
	if err != nil {
		return err
	}
	defer it.Close()
	var held io.Closer // a referenced staged payload, closed after its batch
	defer func() {
		if held != nil {
			held.Close()
		}
	}()
	var ok bool
	if hinted {
		ok = it.SeekGE(keys.Batch(t.id, r.Partition, base)) // forward: no value copy
	} else {
		ok = it.SeekLT(keys.Batch(t.id, r.Partition, start+1)) // the batch holding start
		if !ok {
			ok = it.First()
		}
	}
	for ; ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		h, payload, err := topicstore.DecodeBatchHeader(v)
		if err != nil {
			return err
		}
		p.hints.note(h.Base, h.Count)
		if h.Base+int64(h.Count) <= start || (minWA != 0 && h.WrittenAt < minWA) {
			continue
		}
		if h.Ref {
			if held != nil {
				held.Close()
				held = nil
			}
			if payload, held, err = s.stagedPayload(t, p, h); err != nil {
				return err
			}
			if held == nil {
				continue // retention deleted it since the scan began
			}
		}
		if err := topicstore.CheckCRC(h, payload); err != nil {
			return err
		}
		next, more, err := emitBatch(h, payload, start, end, r.Partition, d, fn)
		if err != nil {
			return err
		}
		if !more {
			if first && !h.Ref && next < h.Base+int64(h.Count) {
				// Began and stopped inside this batch: a reader
				// taking less than a batch at a time, whose next read
				// likely starts here too. (One that reads across
				// batches gains nothing from it: it seeks for the
				// rest anyway.)
				s.batches.put(batchKey{t.id, r.Partition, h.Base}, v, &p.cached)
			}
			return nil
		}
		first = false
	}
	return it.Error()
}

// emitBatch calls fn for the messages of batch h (payload checked) of
// partition part from start up to end; more is false once fn stopped or
// end is reached, next is the offset after the last message given to fn.
func emitBatch(h topicstore.BatchHeader, payload []byte, start, end int64, part int32, d *topicstore.MsgDecoder,
	fn func(m *topicstore.Message) bool) (next int64, more bool, err error) {
	wa := time.UnixMicro(h.WrittenAt).UTC()
	off := h.Base
	for i := 0; i < h.Count && off < end; i, off = i+1, off+1 {
		var entry []byte
		if entry, payload, err = topicstore.NextEntry(payload); err != nil {
			return off, false, err
		}
		if off < start {
			continue
		}
		m, err := d.Decode(entry)
		if err != nil {
			return off, false, err
		}
		m.Partition, m.Offset, m.WrittenAt = part, off, wa
		if !fn(m) {
			return off + 1, false, nil
		}
	}
	return off, off < end, nil
}

// stagedPayload reads the payload a reference record points to. A nil
// closer and no error: retention deleted it since the scan took its
// iterator (Get does not read the iterator's snapshot).
func (s *PebbleStore) stagedPayload(t *topic, p *partition, h topicstore.BatchHeader) ([]byte, io.Closer, error) {
	v, closer, err := s.db.Get(keys.Staged(h.SID, h.Seq))
	if err == nil {
		return v, closer, nil
	}
	if err != pebble.ErrNotFound {
		return nil, nil, err
	}
	s.mu.RLock()
	dropped := s.byID[t.id] != t
	s.mu.RUnlock()
	p.mu.Lock()
	gone := p.start >= h.Base+int64(h.Count)
	p.mu.Unlock()
	if gone || dropped {
		return nil, nil, nil
	}
	return nil, nil, fmt.Errorf("%w: batch at offset %d: staged data %d/%d is missing", topicstore.ErrCorrupt, h.Base, h.SID, h.Seq)
}

var _ topicstore.WrittenAter = (*PebbleStore)(nil)

// WrittenAt implements topicstore.WrittenAter: the first message Scan
// yields from offset (the store keeps no index of batch times apart from
// the batches, so this reads one, from the batch cache when it is there).
func (s *PebbleStore) WrittenAt(topic string, part int32, offset int64) (time.Time, bool) {
	var at time.Time
	found := false
	_ = s.Scan(context.Background(), topic, topicstore.ScanRange{Partition: part, Start: offset, End: -1}, func(m *topicstore.Message) bool {
		at, found = m.WrittenAt, true
		return false
	})
	return at, found
}
