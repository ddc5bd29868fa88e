package kafka

import (
	"bytes"
	"testing"
)

// FuzzParsePlain: no PLAIN message panics the decoder, and one it
// accepts is three fields with a non-empty user that re-encode to it.
func FuzzParsePlain(f *testing.F) {
	f.Add([]byte("\x00app\x00pw"))
	f.Add([]byte("app\x00app\x00pw"))
	f.Add([]byte("\x00\x00"))
	f.Add([]byte("a\x00b\x00c\x00d"))
	f.Fuzz(func(t *testing.T, token []byte) {
		authzID, user, password, err := parsePlain(token)
		if err != nil {
			return
		}
		if user == "" {
			t.Fatalf("accepted %q with an empty user", token)
		}
		again := []byte(authzID + "\x00" + user + "\x00" + password)
		if !bytes.Equal(again, token) {
			t.Fatalf("%q decoded to %q, %q, %q", token, authzID, user, password)
		}
	})
}
