package reads

import (
	"context"
	"fmt"
	"sort"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
)

// Scan answers topicstore.Store's Scan: it finds the batches of the range in
// the fold's index and fetches each from the stream (a direct get, served
// by any replica that is current).
func (rd *Reads) Scan(ctx context.Context, topic string, r topicstore.ScanRange, fn func(m *topicstore.Message) bool) error {
	rd.h.Lock()
	if rd.h.Closed() {
		rd.h.Unlock()
		return topicstore.ErrClosed
	}
	t := rd.cfg.Fold.ByName[topic]
	if t == nil {
		rd.h.Unlock()
		return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Parts) {
		rd.h.Unlock()
		return fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, topic, r.Partition)
	}
	ps := t.Parts[r.Partition]
	start, end := max(r.Start, ps.Start), ps.End
	if r.End >= 0 && r.End < end {
		end = r.End
	}
	// The index is copied a slice at a time, from where the scan is: a
	// read of a few messages at the head of a long backlog copies what it
	// reads, not the backlog.
	recs := RecsFrom(ps, start, nil)
	rd.h.Unlock()
	minAt := int64(0)
	if !r.MinWrittenAt.IsZero() {
		minAt = r.MinWrittenAt.UnixMicro()
	}
	var dec topicstore.MsgDecoder
	for k := 0; ; k++ {
		if k == len(recs) {
			if len(recs) < ScanSlice {
				return nil
			}
			last := recs[len(recs)-1]
			rd.h.Lock()
			recs = RecsFrom(ps, last.Base+last.Count(), recs)
			rd.h.Unlock()
			if len(recs) == 0 {
				return nil
			}
			k = 0
		}
		rec := recs[k]
		if rec.Base >= end {
			return nil
		}
		if rec.WrittenAt < minAt {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := rd.Record(ctx, rec.Seq)
		if err != nil {
			return rd.h.Unavailable(err)
		}
		h, payload, err := topicstore.DecodeBatchHeader(data)
		if err != nil {
			return err
		}
		if h.Ref { // a transaction's staged chunk, joined by reference
			staged, err := rd.Record(ctx, h.Seq)
			if err != nil {
				return rd.h.Unavailable(err)
			}
			payload = staged
		}
		if err := topicstore.CheckCRC(h, payload); err != nil {
			return err
		}
		written := fold.TimeMicros(h.WrittenAt)
		for off := h.Base; len(payload) > 0 && off < end; off++ {
			entry, rest, err := topicstore.NextEntry(payload)
			if err != nil {
				return err
			}
			payload = rest
			if off < start {
				continue
			}
			m, err := dec.Decode(entry)
			if err != nil {
				return err
			}
			m.Partition, m.Offset, m.WrittenAt = r.Partition, off, written
			if !fn(m) {
				return nil
			}
		}
	}
}

// ScanSlice is how many index entries Scan copies at a time.
const ScanSlice = 256

// RecsFrom copies into buf (reused) up to ScanSlice of ps's batches, from
// the one holding offset from. It runs under the host's lock.
func RecsFrom(ps *fold.Part, from int64, buf []fold.Rec) []fold.Rec {
	i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].Base+ps.Recs[i].Count() > from })
	return append(buf[:0], ps.Recs[i:min(i+ScanSlice, len(ps.Recs))]...)
}

// Record returns the record batch (or staged chunk) message at seq: from
// the cache, or from the cluster through the host (GetRecord), caching
// what it fetched.
func (rd *Reads) Record(ctx context.Context, seq uint64) ([]byte, error) {
	if data, ok := rd.cache.Get(seq); ok {
		return data, nil
	}
	data, err := rd.h.GetRecord(ctx, seq)
	if err == nil {
		rd.cache.Put(seq, data)
	}
	return data, err
}
