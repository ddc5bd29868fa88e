package plan

import (
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"

	"strconv"
	"topicgate/topicstore"

	"github.com/nats-io/nats.go"
)

// How a group's writes become record batch messages.

// records encodes a partition's part of the group as record batch
// messages of at most maxRecordBytes each; the first carries the
// expectation that keeps the partition's offsets contiguous.
func (pl *Planner) records(sp *simPart, at int64) []*nats.Msg {
	var out []*nats.Msg
	base := sp.end
	for _, g := range sp.segs {
		if g.ref != nil {
			h := topicstore.BatchHeader{Base: base, Count: int(g.ref.count), WrittenAt: at, CRC: g.ref.crc,
				Bytes: g.ref.bytes, Ref: true, Seq: g.ref.seq}
			m := nats.NewMsg(pl.Subj.Data(sp.topic.Rec.ID, sp.id))
			m.Data = topicstore.PutRefRecord(h)
			sp.written += g.ref.bytes
			RecordHeaders(m, pl.Gw, base, g.ref.count, at, g.ref.bytes, sp.written, g.ref.seq)
			if len(out) == 0 {
				jsext.Expect(m, sp.expect)
			}
			out = append(out, m)
			base += g.ref.count
			continue
		}
		out, base = pl.inlineRecords(out, sp, g.buf, base, at)
	}
	return out
}

// inlineRecords appends buf's entries as record batch messages.
func (pl *Planner) inlineRecords(out []*nats.Msg, sp *simPart, rest []byte, base, at int64) ([]*nats.Msg, int64) {
	for len(rest) > 0 {
		n, size := int64(0), 0
		for size < len(rest) && (n == 0 || size < maxRecordBytes) {
			_, tail, err := topicstore.NextEntry(rest[size:])
			if err != nil {
				break
			}
			size = len(rest) - len(tail)
			n++
		}
		if size == 0 {
			break // cannot happen: the group encoded these entries
		}
		payload := rest[:size]
		rest = rest[size:]
		rec := make([]byte, topicstore.BatchHeaderLen+len(payload))
		topicstore.PutBatchHeader(rec, topicstore.BatchHeader{Base: base, Count: int(n), WrittenAt: at, CRC: topicstore.Checksum(payload)})
		copy(rec[topicstore.BatchHeaderLen:], payload)
		m := nats.NewMsg(pl.Subj.Data(sp.topic.Rec.ID, sp.id))
		m.Data = rec
		sp.written += int64(len(payload))
		RecordHeaders(m, pl.Gw, base, n, at, int64(len(payload)), sp.written, 0)
		if len(out) == 0 {
			jsext.Expect(m, sp.expect)
		}
		out = append(out, m)
		base += n
	}
	return out, base
}

// RecordHeaders sets what the fold reads of a record batch, in one
// header (fold.HRec: fewer header lines make the fold cheaper, and every
// gateway folds every message); cum is the partition's payload bytes ever
// written, this batch's included; gw the writing gateway; ref, if not 0, the staged message a
// reference record joins.
func RecordHeaders(m *nats.Msg, gw string, base, count, at, bytes, cum int64, ref uint64) {
	b := make([]byte, 0, 96)
	for _, v := range []int64{base, count, at, bytes, cum} {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ' ')
	}
	b = append(b, gw...)
	b = append(b, ' ')
	b = strconv.AppendUint(b, ref, 10)
	m.Header.Set(fold.HRec, string(b))
}
