package rowexec

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"topicgate/planner/plantree"
	"topicgate/topicstore"
)

// MsgRow exposes a stored message as a row of message columns. Columns are
// computed on demand, so a query that never reads data never decompresses
// a body. m and its slices are only valid during the store's Scan callback;
// values returned by Col are copies that outlive it.
type MsgRow struct {
	m       *topicstore.Message
	data    []byte
	decoded bool
	// Arena, when set, is where copies of bodies go.
	Arena *Arena
	// Acquired is set for shared-consumer reads (after Reset, which
	// clears it): delivery_count and locked_until read it.
	Acquired *topicstore.Acquired
}

// Arena hands out byte slices carved from large chunks, so reading many
// messages costs one allocation per chunk instead of one per body.
type Arena struct{ buf []byte }

const arenaChunk = 64 << 10

func (a *Arena) copy(b []byte) []byte {
	if len(b) > arenaChunk/4 {
		return append([]byte(nil), b...)
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaChunk)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// Reset makes r the row of m.
func (r *MsgRow) Reset(m *topicstore.Message) {
	r.m = m
	r.data = nil
	r.decoded = false
	r.Acquired = nil
}

// MsgAttrs implements eval.AttrsRow: attrs ->> 'k' reads the message's
// attributes directly.
func (r *MsgRow) MsgAttrs() []topicstore.Attr { return r.m.Attrs }

func (r *MsgRow) Col(i int) (any, error) {
	m := r.m
	switch plantree.MsgCol(i) {
	case plantree.ColPartition:
		return int64(m.Partition), nil
	case plantree.ColOffset:
		return m.Offset, nil
	case plantree.ColSeqNo:
		if !m.HasSeqNo {
			return nil, nil
		}
		return m.SeqNo, nil
	case plantree.ColProducerID:
		if m.ProducerID == "" {
			return nil, nil
		}
		return m.ProducerID, nil
	case plantree.ColMessageGroupID:
		if m.MessageGroupID == "" {
			return nil, nil
		}
		return m.MessageGroupID, nil
	case plantree.ColCreatedAt:
		return m.CreatedAt, nil
	case plantree.ColWrittenAt:
		return m.WrittenAt, nil
	case plantree.ColCodec:
		return m.Codec.String(), nil
	case plantree.ColAttrs:
		return attrsJSON(m.Attrs), nil
	case plantree.ColData:
		if m.NullBody {
			return nil, nil
		}
		if !r.decoded {
			if m.Codec == topicstore.CodecRaw || m.Codec == 0 {
				if r.Arena != nil {
					r.data = r.Arena.copy(m.Body)
				} else {
					r.data = append([]byte(nil), m.Body...)
				}
			} else {
				d, err := m.Decode()
				if err != nil {
					return nil, err
				}
				r.data = d
			}
			r.decoded = true
		}
		return r.data, nil
	case plantree.ColDelay:
		if m.Delay == 0 {
			return nil, nil
		}
		return m.Delay, nil
	case plantree.ColKey:
		if m.Key == nil {
			return nil, nil
		}
		if r.Arena != nil {
			return r.Arena.copy(m.Key), nil
		}
		return append([]byte{}, m.Key...), nil
	case plantree.ColHeaders:
		return HeadersJSON(m.Headers), nil
	case plantree.ColDeliveryCount:
		if r.Acquired == nil {
			return nil, nil
		}
		return int64(r.Acquired.DeliveryCount), nil
	case plantree.ColLockedUntil:
		if r.Acquired == nil {
			return nil, nil
		}
		return r.Acquired.LockedUntil, nil
	}
	return nil, nil
}

// attrsJSON renders attributes as jsonb text: keys ordered shorter first,
// then bytewise, as PostgreSQL prints jsonb.
func attrsJSON(attrs []topicstore.Attr) string {
	if len(attrs) == 0 {
		return "{}"
	}
	idx := make([]int, len(attrs))
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0; j-- {
			a, b := attrs[idx[j]].Key, attrs[idx[j-1]].Key
			if len(a) < len(b) || (len(a) == len(b) && a < b) {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			} else {
				break
			}
		}
	}
	var b strings.Builder
	b.WriteByte('{')
	for n, i := range idx {
		if n > 0 {
			b.WriteString(", ")
		}
		writeJSONString(&b, attrs[i].Key)
		b.WriteString(": ")
		writeJSONString(&b, attrs[i].Value)
	}
	b.WriteByte('}')
	return b.String()
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(c)>>4, 16))
				b.WriteString(strconv.FormatInt(int64(c)&15, 16))
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		i++
	}
	b.WriteByte('"')
}
