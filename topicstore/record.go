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
//	  flags u8 | [varint seqno] | uvarint+producer_id |
//	  uvarint+message_group_id | varint created_at unix micros | codec u8 |
//	  uvarint n attrs, n × (uvarint+key, uvarint+value) | varint delay ns |
//	  [uvarint+kafka key] | [uvarint n headers, n × (uvarint+key,
//	  uvarint(len+1) value bytes, 0 for a null value)] |
//	  body (the rest: stored, compressed bytes)
//
// The flags are bit 0: has seqno; bit 1: has a Kafka key; bit 2: has
// Kafka headers; bit 3: null body (Kafka's null value: the body is empty
// and reads as NULL). Bits 4-7 are unused and a decoder refuses them. A
// message without a key, headers or a null body sets none of bits 1-3 and
// omits both bracketed Kafka fields, so it is stored byte for byte as it
// was before Kafka records existed (issue 28), and every record written
// before then reads unchanged. The key and headers are part of the entry,
// so whatever counts payload bytes (the header's cumulative bytes, the
// batch and partition byte counters, retention by size, write throttling)
// counts them with the body.
//
// The part after the seqno ("tail") is built on the writer's goroutine; the
// one that assigns offsets only adds the seqno (AppendMessage). A tail
// (AppendTail's output) starts with its message's flags, bit 0 clear:
// AppendMessage moves that byte to the front of the entry, sets bit 0 when
// it adds a seqno, and appends the rest after the seqno.
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
	flagHasSeqNo    = 1 << 0
	flagKey         = 1 << 1
	flagHeaders     = 1 << 2
	flagNullBody    = 1 << 3
	flagsKnown      = flagHasSeqNo | flagKey | flagHeaders | flagNullBody
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

// AppendTail encodes m's flags and everything of m after the seqno; body
// is the stored (compressed) body, empty for a null body.
func AppendTail(dst []byte, m *Message, c Codec, body []byte, createdAt time.Time) []byte {
	dst = append(dst, kafkaFlags(m))
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
	dst = appendKafka(dst, m)
	return append(dst, body...)
}

// kafkaFlags are the flag bits of m's Kafka fields.
func kafkaFlags(m *Message) byte {
	var f byte
	if m.Key != nil {
		f |= flagKey
	}
	if len(m.Headers) > 0 {
		f |= flagHeaders
	}
	if m.NullBody {
		f |= flagNullBody
	}
	return f
}

// appendKafka encodes m's key and headers, the fields kafkaFlags marks.
func appendKafka(dst []byte, m *Message) []byte {
	if m.Key != nil {
		dst = binary.AppendUvarint(dst, uint64(len(m.Key)))
		dst = append(dst, m.Key...)
	}
	if len(m.Headers) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Headers)))
		for _, h := range m.Headers {
			dst = appendStr(dst, h.Key)
			if h.Value == nil {
				dst = append(dst, 0)
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(len(h.Value))+1)
			dst = append(dst, h.Value...)
		}
	}
	return dst
}

// KafkaSize is how many bytes m's key and headers take in its record (0
// for a message without them): what they add to the message's size.
func KafkaSize(m *Message) int {
	n := 0
	if m.Key != nil {
		n += uvarintLen(len(m.Key)) + len(m.Key)
	}
	if len(m.Headers) > 0 {
		n += uvarintLen(len(m.Headers))
		for _, h := range m.Headers {
			n += uvarintLen(len(h.Key)) + len(h.Key) + uvarintLen(len(h.Value)+1) + len(h.Value)
		}
	}
	return n
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// AppendMessage appends one message entry (length, flags, seqno, tail):
// tail is AppendTail's output, its first byte the message's flags.
func AppendMessage(dst []byte, hasSeq bool, seq int64, tail []byte) []byte {
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = tail[0]
	n := 1
	if hasSeq {
		head[0] |= flagHasSeqNo
		n += binary.PutVarint(head[1:], seq)
	}
	dst = binary.AppendUvarint(dst, uint64(n+len(tail)-1))
	dst = append(dst, head[:n]...)
	return append(dst, tail[1:]...)
}

// MsgDecoder decodes messages of a batch payload into a reused Message.
// Strings are allocated only when they differ from the previous message's
// (producer ids, group ids, attributes and header keys usually repeat
// within a batch), so they stay valid after the scan callback; byte slices
// (Body, Key, header values) point into the payload, and the Attrs and
// Headers slices are reused by the next Decode.
type MsgDecoder struct {
	m       Message
	attrs   []Attr
	headers []Header
}

// Release drops what d holds of the last payload it decoded (the byte
// slices into it), keeping its strings and slices for reuse: a decoder
// kept between scans (in a sync.Pool) then pins no payload.
func (d *MsgDecoder) Release() {
	d.m.Body, d.m.Key, d.m.Headers, d.m.Attrs = nil, nil, nil, nil
	for i := range d.headers {
		d.headers[i].Value = nil
	}
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
	r := ByteReader{B: entry}
	flags := r.Byte()
	if flags&^flagsKnown != 0 {
		return nil, fmt.Errorf("%w: bad message flags %#x", ErrCorrupt, flags)
	}
	m.HasSeqNo, m.SeqNo = flags&flagHasSeqNo != 0, 0
	if m.HasSeqNo {
		m.SeqNo = r.Varint()
	}
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
	m.Attrs = nil
	if n > 0 {
		m.Attrs = d.attrs
	}
	if err := d.decodeKafka(&r, flags); err != nil {
		return nil, err
	}
	m.Body = r.B
	if m.NullBody && len(m.Body) > 0 {
		return nil, fmt.Errorf("%w: null body with %d bytes", ErrCorrupt, len(m.Body))
	}
	return m, nil
}

// decodeKafka reads the key and headers flags marks into d.m, and its
// null body flag.
func (d *MsgDecoder) decodeKafka(r *ByteReader, flags byte) error {
	m := &d.m
	m.Key, m.Headers, m.NullBody = nil, nil, flags&flagNullBody != 0
	if r.Err {
		return fmt.Errorf("%w: bad message", ErrCorrupt)
	}
	if flags&flagKey != 0 {
		m.Key = r.Bytes()
		if m.Key == nil {
			m.Key = []byte{}
		}
	}
	if flags&flagHeaders != 0 {
		n := r.Uvarint()
		if r.Err || n == 0 || n > uint64(len(r.B)) {
			return fmt.Errorf("%w: bad message headers", ErrCorrupt)
		}
		prev := d.headers
		d.headers = d.headers[:0]
		for i := 0; i < int(n); i++ {
			var pk string
			if i < len(prev) {
				pk = prev[i].Key // read before append overwrites it
			}
			h := Header{Key: reuse(pk, r.Bytes())}
			if vn := r.Uvarint(); vn > 0 && !r.Err {
				if vn-1 > uint64(len(r.B)) {
					return fmt.Errorf("%w: bad message header", ErrCorrupt)
				}
				h.Value = r.B[: vn-1 : vn-1]
				r.B = r.B[vn-1:]
			}
			d.headers = append(d.headers, h)
		}
		m.Headers = d.headers
	}
	if r.Err {
		return fmt.Errorf("%w: bad message", ErrCorrupt)
	}
	return nil
}

// SplitEntry splits a message entry (AppendMessage's) into its seqno, if
// it has one, and its tail (AppendTail's: it starts with the entry's
// flags, bit 0 cleared). The tail is entry itself when the entry has no
// seqno, else a copy.
func SplitEntry(entry []byte) (hasSeq bool, seq int64, tail []byte, err error) {
	r := ByteReader{B: entry}
	flags := r.Byte()
	hasSeq = flags&flagHasSeqNo != 0
	if hasSeq {
		seq = r.Varint()
	}
	if r.Err {
		return false, 0, nil, fmt.Errorf("%w: bad message", ErrCorrupt)
	}
	if !hasSeq {
		return false, 0, entry, nil
	}
	tail = make([]byte, 1+len(r.B))
	tail[0] = flags &^ flagHasSeqNo
	copy(tail[1:], r.B)
	return hasSeq, seq, tail, nil
}

// Checksum is the CRC32C of a batch payload, as headers store it.
func Checksum(payload []byte) uint32 { return crc32.Checksum(payload, crcTable) }

func CheckCRC(h BatchHeader, payload []byte) error {
	if Checksum(payload) != h.CRC {
		return fmt.Errorf("%w: batch at offset %d: checksum mismatch", ErrCorrupt, h.Base)
	}
	return nil
}
