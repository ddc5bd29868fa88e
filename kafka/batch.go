package kafka

import (
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"topicgate/topicstore"
)

// Record batch (magic 2) layout: the fields before the CRC, and where
// the CRC-32C's span starts (the attributes).
const (
	batchHeaderLen = 61 // FirstOffset .. NumRecords
	batchCRCFrom   = 21 // FirstOffset(8) Length(4) PartitionLeaderEpoch(4) Magic(1) CRC(4)
	batchLenFrom   = 12 // Length counts from here
)

// Attribute bits of a record batch.
const (
	attrCodec         = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchProducer is a record batch's idempotent producer: its id (-1:
// none), epoch and the sequence number of its first record.
type batchProducer struct {
	id       int64
	epoch    int16
	firstSeq int32
	// transactional: the batch belongs to the producer's open
	// transaction (staged until EndTxn), not written at once.
	transactional bool
}

// decodeBatch decodes a Produce partition's records: exactly one record
// batch of magic 2 whose CRC-32C holds, not a control batch, compressed
// with one of Kafka's codecs, each record at most
// topicstore.MaxMessageSize. The messages have Partition part and may
// alias records; the batch's producer comes with them. Every refusal is
// a *doorError carrying its Kafka error: CORRUPT_MESSAGE for a bad CRC,
// MESSAGE_TOO_LARGE for a record too large, INVALID_RECORD for the rest.
func decodeBatch(records []byte, part int32) ([]topicstore.Message, batchProducer, error) {
	if len(records) < batchHeaderLen {
		return nil, batchProducer{}, refuse(kerr.InvalidRecord, "the records are %d bytes, shorter than a record batch header", len(records))
	}
	var b kmsg.RecordBatch
	msgs, err := decodeBatchInto(&b, records, part)
	return msgs, batchProducer{id: b.ProducerID, epoch: b.ProducerEpoch, firstSeq: b.FirstSequence,
		transactional: b.Attributes&attrTransactional != 0}, err
}

// decodeBatchInto is decodeBatch with the batch's header decoded into b.
func decodeBatchInto(b *kmsg.RecordBatch, records []byte, part int32) ([]topicstore.Message, error) {
	if err := b.ReadFrom(records); err != nil {
		return nil, refuse(kerr.InvalidRecord, "the record batch does not decode: %v", err)
	}
	if b.Magic != 2 {
		return nil, refuse(kerr.InvalidRecord, "record batch magic %d: only magic 2 (Kafka 0.11+) record batches are accepted", b.Magic)
	}
	if n := batchLenFrom + int(b.Length); n != len(records) {
		return nil, refuse(kerr.InvalidRecord, "a partition's records must be exactly one record batch (%d bytes of batch, %d given)", n, len(records))
	}
	if crc32.Checksum(records[batchCRCFrom:], castagnoli) != uint32(b.CRC) {
		return nil, refuse(kerr.CorruptMessage, "the record batch fails its CRC-32C check")
	}
	if b.Attributes&attrControl != 0 {
		return nil, refuse(kerr.InvalidRecord, "a producer does not send control batches (the door writes none: a transaction's records are staged until it ends)")
	}
	if b.Attributes&attrTransactional != 0 && b.ProducerID < 0 {
		return nil, refuse(kerr.InvalidRecord, "a transactional record batch without a producer id")
	}
	if b.ProducerID >= 0 && (b.ProducerEpoch < 0 || b.FirstSequence < 0) {
		return nil, refuse(kerr.InvalidRecord, "producer %d's batch has epoch %d and first sequence %d", b.ProducerID, b.ProducerEpoch, b.FirstSequence)
	}
	if b.NumRecords < 0 || b.LastOffsetDelta != b.NumRecords-1 {
		return nil, refuse(kerr.InvalidRecord, "the record batch counts %d records with last offset delta %d", b.NumRecords, b.LastOffsetDelta)
	}
	raw, err := decompress(int(b.Attributes&attrCodec), b.Records)
	if err != nil {
		if _, ok := err.(*doorError); ok {
			return nil, err
		}
		return nil, refuse(kerr.InvalidRecord, "the record batch does not decompress: %v", err)
	}
	return decodeRecords(b, raw, part)
}

// decodeRecords decodes b's NumRecords records from raw (decompressed).
func decodeRecords(b *kmsg.RecordBatch, raw []byte, part int32) ([]topicstore.Message, error) {
	if int(b.NumRecords) > len(raw) {
		// A record takes at least 7 bytes: a count past the data is a lie.
		return nil, refuse(kerr.InvalidRecord, "the record batch counts %d records in %d bytes", b.NumRecords, len(raw))
	}
	msgs := make([]topicstore.Message, 0, b.NumRecords)
	for i := int32(0); i < b.NumRecords; i++ {
		r := kbin.Reader{Src: raw}
		n := r.Varint()
		if !r.Ok() || n < 0 || int(n) > len(r.Src) {
			return nil, refuse(kerr.InvalidRecord, "record %d is truncated", i)
		}
		size := len(raw) - len(r.Src) + int(n)
		var rec kmsg.Record
		if err := rec.ReadFrom(raw[:size]); err != nil {
			return nil, refuse(kerr.InvalidRecord, "record %d does not decode: %v", i, err)
		}
		raw = raw[size:]
		if rec.OffsetDelta != i {
			return nil, refuse(kerr.InvalidRecord, "record %d has offset delta %d: a batch's offset deltas count from 0", i, rec.OffsetDelta)
		}
		m, err := toMessage(b, &rec, part)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	if len(raw) != 0 {
		return nil, refuse(kerr.InvalidRecord, "%d bytes follow the batch's %d records", len(raw), b.NumRecords)
	}
	return msgs, nil
}

// toMessage maps one record to a message: value to body (null to
// NullBody), key and headers as they are, the record's timestamp
// (CreateTime) to CreatedAt.
func toMessage(b *kmsg.RecordBatch, rec *kmsg.Record, part int32) (topicstore.Message, error) {
	size := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		size += len(h.Key) + len(h.Value)
	}
	if size > topicstore.MaxMessageSize {
		return topicstore.Message{}, refuse(kerr.MessageTooLarge, "a record of %d bytes is larger than the largest message, %d bytes", size, topicstore.MaxMessageSize)
	}
	m := topicstore.Message{Partition: part, Body: rec.Value, NullBody: rec.Value == nil, Key: rec.Key}
	if m.NullBody {
		m.Body = []byte{}
	}
	if len(rec.Headers) > 0 {
		m.Headers = make([]topicstore.Header, len(rec.Headers))
		for i, h := range rec.Headers {
			m.Headers[i] = topicstore.Header{Key: h.Key, Value: h.Value}
		}
	}
	if b.Attributes&attrLogAppendTime == 0 && b.FirstTimestamp >= 0 {
		m.CreatedAt = time.UnixMilli(b.FirstTimestamp + rec.TimestampDelta64)
	}
	return m, nil
}

// appendBatch appends msgs (stored messages of one partition, in offset
// order) as one uncompressed record batch: timestamps are the messages'
// CreatedAt (CreateTime), values their decoded bodies (null for a null
// body), no producer id.
func appendBatch(dst []byte, msgs []topicstore.Message) []byte {
	var w batchWriter
	for i := range msgs {
		dst = w.add(dst, &msgs[i], msgs[i].Body)
	}
	return w.finish(dst)
}

// batchWriter appends one uncompressed record batch to a buffer a record
// at a time, as a scan yields them, and patches its header at the end:
// nothing of a record is copied but into the batch.
type batchWriter struct {
	start          int   // where the batch begins in the buffer
	n              int32 // records added
	first, last    int64 // their offsets
	firstTS, maxTS int64
	rec            []byte // scratch for one record, reused
}

// add appends m's record with value body (m's decoded body).
func (w *batchWriter) add(dst []byte, m *topicstore.Message, body []byte) []byte {
	ts := m.CreatedAt.UnixMilli()
	if w.n == 0 {
		w.start, w.first, w.firstTS, w.maxTS = len(dst), m.Offset, ts, ts
		dst = binary.BigEndian.AppendUint64(dst, uint64(m.Offset))
		dst = append(dst, 0, 0, 0, 0) // Length, at finish
		dst = binary.BigEndian.AppendUint32(dst, 0)
		dst = append(dst, 2)          // magic
		dst = append(dst, 0, 0, 0, 0) // CRC, at finish
		dst = binary.BigEndian.AppendUint16(dst, 0)
		dst = append(dst, 0, 0, 0, 0)                        // LastOffsetDelta, at finish
		dst = binary.BigEndian.AppendUint64(dst, uint64(ts)) // FirstTimestamp
		dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)            // MaxTimestamp, at finish
		dst = binary.BigEndian.AppendUint64(dst, ^uint64(0)) // producer id -1
		dst = binary.BigEndian.AppendUint16(dst, ^uint16(0)) // producer epoch -1
		dst = binary.BigEndian.AppendUint32(dst, ^uint32(0)) // base sequence -1
		dst = append(dst, 0, 0, 0, 0)                        // NumRecords, at finish
	}
	w.n++
	w.last, w.maxTS = m.Offset, max(w.maxTS, ts)
	w.rec = appendRecord(w.rec[:0], m, body, w.first, w.firstTS)
	dst = kbin.AppendVarint(dst, int32(len(w.rec)))
	return append(dst, w.rec...)
}

// finish patches the batch's header: nothing when no record was added.
func (w *batchWriter) finish(dst []byte) []byte {
	if w.n == 0 {
		return dst
	}
	b := dst[w.start:]
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-batchLenFrom))
	binary.BigEndian.PutUint32(b[23:], uint32(w.last-w.first))
	binary.BigEndian.PutUint64(b[35:], uint64(w.maxTS))
	binary.BigEndian.PutUint32(b[57:], uint32(w.n))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[batchCRCFrom:], castagnoli))
	return dst
}

// appendRecord appends m's record, with value body, without its length
// prefix.
func appendRecord(dst []byte, m *topicstore.Message, body []byte, base, baseTS int64) []byte {
	dst = append(dst, 0) // attributes
	dst = kbin.AppendVarlong(dst, m.CreatedAt.UnixMilli()-baseTS)
	dst = kbin.AppendVarint(dst, int32(m.Offset-base))
	dst = kbin.AppendVarintBytes(dst, m.Key)
	if m.NullBody {
		dst = kbin.AppendVarint(dst, -1)
	} else {
		dst = kbin.AppendVarint(dst, int32(len(body)))
		dst = append(dst, body...)
	}
	dst = kbin.AppendVarint(dst, int32(len(m.Headers)))
	for _, h := range m.Headers {
		dst = kbin.AppendVarintString(dst, h.Key)
		dst = kbin.AppendVarintBytes(dst, h.Value)
	}
	return dst
}
