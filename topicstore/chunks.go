package topicstore

import "time"

// Encoding messages for a store, shared by the backends: a message's
// stored form (EncodeTail), and the chunks a staged transaction is cut
// into (Chunker), as Stager.StageBatch promises them.

// CodecOf is the codec a message is stored with (raw when unset).
func CodecOf(m *Message) Codec {
	if m.Codec == 0 {
		return CodecRaw
	}
	return m.Codec
}

// EncodeTail appends m's stored form after the seqno (AppendTail of its
// compressed body) to dst; a message without a created_at gets now. A
// null body is stored empty, whatever the codec.
func EncodeTail(dst []byte, m *Message, now time.Time) ([]byte, Codec, error) {
	c := CodecOf(m)
	var body []byte
	if !m.NullBody {
		var err error
		if body, err = Compress(c, m.Body); err != nil {
			return dst, c, err
		}
	}
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	return AppendTail(dst, m, c, body, created), c, nil
}

// Chunker cuts a staged transaction's messages into chunks: one per
// (explicit partition, producer) class, in order, each closed once it
// holds Target bytes, with the summary the commit decides dedup from.
// Flush receives each finished chunk (Seq unset) and its payload, which
// it may keep.
type Chunker struct {
	Target int
	Now    time.Time
	Flush  func(c StagedChunk, payload []byte) error
	open   map[chunkClass]*chunkBuf
	order  []chunkClass
	tail   []byte
}

type chunkClass struct {
	part     int32
	producer string
}

type chunkBuf struct {
	c   StagedChunk
	buf []byte
}

// Add encodes m into its class's chunk.
func (k *Chunker) Add(m *Message) error {
	if k.open == nil {
		k.open = map[chunkClass]*chunkBuf{}
	}
	cl := chunkClass{max(m.Partition, -1), m.ProducerID}
	cb := k.open[cl]
	if cb == nil {
		cb = &chunkBuf{c: StagedChunk{Partition: cl.part, ProducerID: cl.producer, SeqOK: true}}
		k.open[cl] = cb
		k.order = append(k.order, cl)
	}
	tail, c, err := EncodeTail(k.tail[:0], m, k.Now)
	if err != nil {
		return err
	}
	k.tail = tail
	cb.buf = AppendMessage(cb.buf, m.HasSeqNo, m.SeqNo, tail)
	cc := &cb.c
	cc.Codecs |= 1 << c
	if !m.HasSeqNo || (cc.Count > 0 && m.SeqNo <= cc.SeqMax) {
		cc.SeqOK = false
	}
	if cc.Count == 0 {
		cc.SeqMin = m.SeqNo
	}
	cc.SeqMax = max(cc.SeqMax, m.SeqNo)
	cc.Count++
	if len(cb.buf) >= k.Target {
		delete(k.open, cl)
		return k.flush(cb)
	}
	return nil
}

// Close flushes the chunks still open, in the order their classes began.
func (k *Chunker) Close() error {
	for _, cl := range k.order {
		if cb := k.open[cl]; cb != nil {
			delete(k.open, cl)
			if err := k.flush(cb); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *Chunker) flush(cb *chunkBuf) error {
	cb.c.Bytes, cb.c.CRC = int64(len(cb.buf)), Checksum(cb.buf)
	return k.Flush(cb.c, cb.buf)
}
