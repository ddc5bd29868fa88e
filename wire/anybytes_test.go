package wire

import (
	"bytes"
	"testing"
)

// TestAnyBytes: anyBytes gives the []byte it points at, as a plain
// conversion does, and allocates nothing.
func TestAnyBytes(t *testing.T) {
	hdrs := [][]byte{[]byte("body one"), nil, {}}
	for i := range hdrs {
		v := anyBytes(&hdrs[i])
		b, ok := v.([]byte)
		if !ok || !bytes.Equal(b, hdrs[i]) || (b == nil) != (hdrs[i] == nil) || cap(b) != cap(hdrs[i]) {
			t.Fatalf("anyBytes(%q) = %#v", hdrs[i], v)
		}
	}
	var sink any
	if n := testing.AllocsPerRun(100, func() { sink = anyBytes(&hdrs[0]) }); n != 0 {
		t.Fatalf("anyBytes allocates %v times", n)
	}
	_ = sink
}
