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
	c := m.cloneRest()
	c.Body = bytes.Clone(m.Body)
	return c
}

// CloneIn is Clone with the body copied into *arena when it has room for
// it, else into a new arena of want bytes (at most maxArena, at least
// the body's), which *arena becomes: the messages of one read share an
// allocation or two instead of one each. Each copied body's capacity ends
// at its length, and an arena that is full is left to the bodies in it,
// never moved.
func (m *Message) CloneIn(arena *[]byte, want int) Message {
	c := m.cloneRest()
	if m.Body != nil {
		a := *arena
		if cap(a)-len(a) < len(m.Body) || a == nil {
			a = make([]byte, 0, max(min(want, maxArena), len(m.Body)))
		}
		n := len(a)
		a = append(a, m.Body...)
		c.Body = a[n:len(a):len(a)]
		*arena = a
	}
	return c
}

// maxArena bounds a new arena of CloneIn: the bodies of one read are
// kept alive together, and a guess of their size must not reserve much
// more than they take.
const maxArena = 1 << 20

// cloneRest is Clone without the body, which it leaves as m's.
func (m *Message) cloneRest() Message {
	c := *m
	c.Attrs, c.Key = slices.Clone(m.Attrs), bytes.Clone(m.Key)
	if m.Headers != nil {
		c.Headers = make([]Header, len(m.Headers))
		for i, h := range m.Headers {
			c.Headers[i] = Header{Key: h.Key, Value: bytes.Clone(h.Value)}
		}
	}
	return c
}
