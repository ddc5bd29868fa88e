package topicstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"
)

// Record batch: the messages one group commit appends to one partition.
//
//	header (fixed, BatchHeaderLen bytes):
//	  version u8 | base offset u64 | count u32 | written_at unix micros i64 |
//	  cumulative bytes before this batch u64 | crc32c(payload) u32
//	payload: count messages, each uvarint(len) followed by len bytes:
//	  flags u8 (bit 0: has seqno) | [varint seqno] | uvarint+producer_id |
//	  uvarint+message_group_id | varint created_at unix micros | codec u8 |
//	  uvarint n attrs, n × (uvarint+key, uvarint+value) | varint delay ns |
//	  body (the rest: stored, compressed bytes)
//
// The part after the seqno ("tail") is built on the writer's goroutine; the
// one that assigns offsets only adds flags and seqno (AppendMessage).
//
// A reference record (version byte 2) has the same header, then
// stage ID u64 | seq u64 | payload bytes u64: its payload is stored
// elsewhere by the backend (Pebble: the staged key t/<stage ID><seq>, a
// transaction's staged batch joined by reference), and the header's CRC is
// that payload's.
//
// The format is pure: no I/O, no backend state. Pebble stores one batch
// per key; a backend storing record batches in a stream (JetStream, one
// stream message per batch) reuses it unchanged.
const (
	batchVersion    = 1
	batchRefVersion = 2
	BatchHeaderLen  = 1 + 8 + 4 + 8 + 8 + 4
	batchRefLen     = BatchHeaderLen + 8 + 8 + 8
	flagHasSeqNo    = 1
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type BatchHeader struct {
	Base      int64
	Count     int
	WrittenAt int64 // unix micros
	CumBefore int64
	CRC       uint32
	Bytes     int64 // payload bytes (what the batch adds to the byte counter)
	// Reference records: the staged key holding the payload.
	Ref      bool
	SID, Seq uint64
}

func PutBatchHeader(dst []byte, h BatchHeader) {
	dst[0] = batchVersion
	binary.BigEndian.PutUint64(dst[1:], uint64(h.Base))
	binary.BigEndian.PutUint32(dst[9:], uint32(h.Count))
	binary.BigEndian.PutUint64(dst[13:], uint64(h.WrittenAt))
	binary.BigEndian.PutUint64(dst[21:], uint64(h.CumBefore))
	binary.BigEndian.PutUint32(dst[29:], h.CRC)
}

// PutRefRecord encodes a reference record.
func PutRefRecord(h BatchHeader) []byte {
	v := make([]byte, batchRefLen)
	PutBatchHeader(v, h)
	v[0] = batchRefVersion
	binary.BigEndian.PutUint64(v[BatchHeaderLen:], h.SID)
	binary.BigEndian.PutUint64(v[BatchHeaderLen+8:], h.Seq)
	binary.BigEndian.PutUint64(v[BatchHeaderLen+16:], uint64(h.Bytes))
	return v
}

// DecodeBatchHeader splits a batch record; for a reference record the
// payload is nil (h.Ref is set: read the staged key).
func DecodeBatchHeader(v []byte) (BatchHeader, []byte, error) {
	if len(v) < BatchHeaderLen || (v[0] != batchVersion && (v[0] != batchRefVersion || len(v) < batchRefLen)) {
		return BatchHeader{}, nil, fmt.Errorf("%w: bad batch header", ErrCorrupt)
	}
	h := BatchHeader{
		Base:      int64(binary.BigEndian.Uint64(v[1:])),
		Count:     int(binary.BigEndian.Uint32(v[9:])),
		WrittenAt: int64(binary.BigEndian.Uint64(v[13:])),
		CumBefore: int64(binary.BigEndian.Uint64(v[21:])),
		CRC:       binary.BigEndian.Uint32(v[29:]),
	}
	if v[0] == batchRefVersion {
		h.Ref = true
		h.SID = binary.BigEndian.Uint64(v[BatchHeaderLen:])
		h.Seq = binary.BigEndian.Uint64(v[BatchHeaderLen+8:])
		h.Bytes = int64(binary.BigEndian.Uint64(v[BatchHeaderLen+16:]))
		return h, nil, nil
	}
	h.Bytes = int64(len(v) - BatchHeaderLen)
	return h, v[BatchHeaderLen:], nil
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendTail encodes everything of m after the seqno; body is the stored
// (compressed) body.
func AppendTail(dst []byte, m *Message, c Codec, body []byte, createdAt time.Time) []byte {
	dst = appendStr(dst, m.ProducerID)
	dst = appendStr(dst, m.MessageGroupID)
	dst = binary.AppendVarint(dst, createdAt.UnixMicro())
	dst = append(dst, byte(c))
	dst = binary.AppendUvarint(dst, uint64(len(m.Attrs)))
	for _, a := range m.Attrs {
		dst = appendStr(dst, a.Key)
		dst = appendStr(dst, a.Value)
	}
	dst = binary.AppendVarint(dst, int64(m.Delay))
	return append(dst, body...)
}

// AppendMessage appends one message entry (length, flags, seqno, tail).
func AppendMessage(dst []byte, hasSeq bool, seq int64, tail []byte) []byte {
	var head [1 + binary.MaxVarintLen64]byte
	n := 1
	if hasSeq {
		head[0] = flagHasSeqNo
		n += binary.PutVarint(head[1:], seq)
	}
	dst = binary.AppendUvarint(dst, uint64(n+len(tail)))
	dst = append(dst, head[:n]...)
	return append(dst, tail...)
}

// MsgDecoder decodes messages of a batch payload into a reused Message.
// Strings are allocated only when they differ from the previous message's
// (producer ids, group ids and attributes usually repeat within a batch),
// so they stay valid after the scan callback; byte slices (Body) point into
// the payload.
type MsgDecoder struct {
	m     Message
	attrs []Attr
}

// NextEntry splits the first message entry off p.
func NextEntry(p []byte) (entry, rest []byte, err error) {
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n {
		return nil, nil, fmt.Errorf("%w: bad message length", ErrCorrupt)
	}
	return p[k : k+int(n)], p[k+int(n):], nil
}

type ByteReader struct {
	B   []byte
	Err bool
}

func (r *ByteReader) Uvarint() uint64 {
	v, k := binary.Uvarint(r.B)
	if k <= 0 {
		r.Err, r.B = true, nil
		return 0
	}
	r.B = r.B[k:]
	return v
}

func (r *ByteReader) Varint() int64 {
	v, k := binary.Varint(r.B)
	if k <= 0 {
		r.Err, r.B = true, nil
		return 0
	}
	r.B = r.B[k:]
	return v
}

func (r *ByteReader) Bytes() []byte {
	n := r.Uvarint()
	if r.Err || uint64(len(r.B)) < n {
		r.Err, r.B = true, nil
		return nil
	}
	v := r.B[:n]
	r.B = r.B[n:]
	return v
}

func (r *ByteReader) Byte() byte {
	if len(r.B) == 0 {
		r.Err = true
		return 0
	}
	v := r.B[0]
	r.B = r.B[1:]
	return v
}

// reuse returns prev if it equals b, else a new string.
func reuse(prev string, b []byte) string {
	if string(b) == prev {
		return prev
	}
	return string(b)
}

// Decode fills d.m from one message entry.
func (d *MsgDecoder) Decode(entry []byte) (*Message, error) {
	m := &d.m
	hasSeq, seq, tail, err := SplitEntry(entry)
	if err != nil {
		return nil, err
	}
	m.HasSeqNo, m.SeqNo = hasSeq, seq
	r := ByteReader{B: tail}
	m.ProducerID = reuse(m.ProducerID, r.Bytes())
	m.MessageGroupID = reuse(m.MessageGroupID, r.Bytes())
	m.CreatedAt = time.UnixMicro(r.Varint()).UTC()
	m.Codec = Codec(r.Byte())
	n := r.Uvarint()
	if r.Err || n > uint64(len(r.B)) {
		return nil, fmt.Errorf("%w: bad message", ErrCorrupt)
	}
	prev := d.attrs
	d.attrs = d.attrs[:0]
	for i := 0; i < int(n); i++ {
		var pk, pv string
		if i < len(prev) {
			pk, pv = prev[i].Key, prev[i].Value // read before append overwrites it
		}
		d.attrs = append(d.attrs, Attr{Key: reuse(pk, r.Bytes()), Value: reuse(pv, r.Bytes())})
	}
	m.Delay = time.Duration(r.Varint())
	if r.Err {
		return nil, fmt.Errorf("%w: bad message", ErrCorrupt)
	}
	m.Attrs = nil
	if n > 0 {
		m.Attrs = d.attrs
	}
	m.Body = r.B
	return m, nil
}

// SplitEntry splits a message entry (appendMessage's) into its seqno, if
// it has one, and its tail (appendTail's).
func SplitEntry(entry []byte) (hasSeq bool, seq int64, tail []byte, err error) {
	r := ByteReader{B: entry}
	hasSeq = r.Byte()&flagHasSeqNo != 0
	if hasSeq {
		seq = r.Varint()
	}
	if r.Err {
		return false, 0, nil, fmt.Errorf("%w: bad message", ErrCorrupt)
	}
	return hasSeq, seq, r.B, nil
}

// Checksum is the CRC32C of a batch payload, as headers store it.
func Checksum(payload []byte) uint32 { return crc32.Checksum(payload, crcTable) }

func CheckCRC(h BatchHeader, payload []byte) error {
	if Checksum(payload) != h.CRC {
		return fmt.Errorf("%w: batch at offset %d: checksum mismatch", ErrCorrupt, h.Base)
	}
	return nil
}
