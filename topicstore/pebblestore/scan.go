package pebblestore

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
)

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
	var minWA int64
	if !r.MinWrittenAt.IsZero() {
		minWA = r.MinWrittenAt.UnixMicro()
	}
	var d topicstore.MsgDecoder
	var held io.Closer // a referenced staged payload, closed after its batch
	defer func() {
		if held != nil {
			held.Close()
		}
	}()
	var ok bool
	if base, hit := p.hints.find(start); hit {
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
		wa := time.UnixMicro(h.WrittenAt).UTC()
		off := h.Base
		for i := 0; i < h.Count && off < end; i, off = i+1, off+1 {
			var entry []byte
			if entry, payload, err = topicstore.NextEntry(payload); err != nil {
				return err
			}
			if off < start {
				continue
			}
			m, err := d.Decode(entry)
			if err != nil {
				return err
			}
			m.Partition, m.Offset, m.WrittenAt = r.Partition, off, wa
			if !fn(m) {
				return nil
			}
		}
		if off >= end {
			break
		}
	}
	return it.Error()
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
