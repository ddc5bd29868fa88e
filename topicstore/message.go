package topicstore

import (
	"bytes"
	"fmt"
	"slices"
)

// What a message is beyond its fields: its size as MaxMessageSize limits
// it, the checks every backend applies to it before writing, and a copy
// that outlives a Scan callback.

// Size is the message's size as MaxMessageSize limits it: its
// uncompressed body plus its Kafka key and headers as stored (KafkaSize).
// Attributes are not counted, as before Kafka records existed.
func (m *Message) Size() int { return len(m.Body) + KafkaSize(m) }

// CheckMessage applies the checks of a message's own that every backend
// makes on Commit and StageBatch (the topic's are the backend's): its
// size, and that a null body has no bytes.
func CheckMessage(m *Message) error {
	if m.NullBody && len(m.Body) > 0 {
		return fmt.Errorf("%w: a null body with %d bytes", ErrInvalidMessage, len(m.Body))
	}
	if n := m.Size(); n > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrMessageTooLarge, n, MaxMessageSize)
	}
	return nil
}

// Clone returns a copy of m whose Body, Attrs, Key and Headers are its
// own: a message a Scan callback saw, kept after the callback returns.
func (m *Message) Clone() Message {
	c := *m
	c.Body, c.Attrs, c.Key = bytes.Clone(m.Body), slices.Clone(m.Attrs), bytes.Clone(m.Key)
	if m.Headers != nil {
		c.Headers = make([]Header, len(m.Headers))
		for i, h := range m.Headers {
			c.Headers[i] = Header{Key: h.Key, Value: bytes.Clone(h.Value)}
		}
	}
	return c
}
