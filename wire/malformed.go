package wire

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A message whose body does not decode is an ERROR in PostgreSQL (08P01),
// not the end of the connection: its body has been read, so the stream of
// messages is still in step. PostgreSQL then goes on as after any error:
// a bad Sync or Query gets its ReadyForQuery, a bad extended-protocol
// message starts the discarding up to Sync, and while discarding, bodies
// are not even looked at.

// malformed handles err from Receive when it is a body that did not
// decode, and reports whether it did (the connection goes on).
func (c *conn) malformed(err error) bool {
	if c.readErr != nil {
		return false
	}
	kind, msg, ok := decodeErrorKind(err)
	if !ok {
		return false
	}
	switch kind {
	case 'd', 'c', 'f':
		return true // COPY messages outside COPY are ignored unread
	}
	if c.ignoreTillSync && kind != 'S' {
		return true
	}
	c.sendError(newError("08P01", msg))
	switch kind {
	case 'S':
		c.ignoreTillSync = false
		c.sync()
	case 'Q', 'F':
		c.readyForQuery()
	default:
		c.ignoreTillSync = true
	}
	return true
}

// decodeErrorKind tells pgproto3's body decoding errors from the others:
// the message type they are for and PostgreSQL's words for them.
// pgproto3 does not give the body back, so the words are the likeliest:
// a string without its NUL, a Bind cut short, leftover bytes.
func decodeErrorKind(err error) (kind byte, msg string, ok bool) {
	if errors.Is(err, io.EOF) {
		// bytes.Buffer.ReadBytes found no NUL (Parse, Execute): reader
		// EOFs come as io.ErrUnexpectedEOF with readErr set.
		return 'P', "invalid string in message", true
	}
	t := fmt.Sprintf("%T", err)
	if t != "*pgproto3.invalidMessageFormatErr" && t != "*pgproto3.invalidMessageLenErr" {
		return 0, "", false
	}
	name, _, _ := strings.Cut(err.Error(), " ")
	kinds := map[string]byte{"Bind": 'B', "Close": 'C', "Describe": 'D', "Execute": 'E', "Flush": 'H', "Parse": 'P',
		"Query": 'Q', "Sync": 'S', "FunctionCall": 'F', "CopyData": 'd', "CopyDone": 'c', "CopyFail": 'f', "Terminate": 'X'}
	kind, ok = kinds[name]
	if !ok {
		return 0, "", false
	}
	msg = "invalid message format"
	if kind == 'B' {
		msg = "insufficient data left in message"
	}
	return kind, msg, true
}

// checkUTF8 refuses query text that is not UTF-8, as PostgreSQL does for
// every string of a message (22021): its message shows the bytes of the
// first invalid character, as many as its first byte says it has.
func checkUTF8(s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	n := 1
	switch b := s[i]; {
	case b >= 0xc0 && b < 0xe0:
		n = 2
	case b >= 0xe0 && b < 0xf0:
		n = 3
	case b >= 0xf0 && b < 0xf8:
		n = 4
	}
	n = min(n, len(s)-i)
	hex := make([]string, n)
	for j := range hex {
		hex[j] = fmt.Sprintf("0x%02x", s[i+j])
	}
	return newError("22021", "invalid byte sequence for encoding \"UTF8\": "+strings.Join(hex, " "))
}

// frameError handles the errors that lose the message framing as
// PostgreSQL does, and reports whether err was one: a length below 4
// closes the connection without a word (PostgreSQL only logs it), an
// unknown message type is FATAL 08P01 "invalid frontend message type".
func frameError(c *conn, err error) bool {
	s := err.Error()
	switch {
	case strings.HasPrefix(s, "invalid message length: "):
		c.fatal, c.dead = true, true
		return true
	case strings.HasPrefix(s, "unknown message type: "):
		t, _ := strings.CutPrefix(s, "unknown message type: ")
		if r, size := utf8.DecodeRuneInString(t); size == len(t) && r < 0x100 {
			c.sendErrorSeverity("FATAL", newError("08P01", fmt.Sprintf("invalid frontend message type %d", r)))
			_ = c.bw.Flush()
			c.fatal = true
			return true
		}
	}
	return false
}
