package pebblestore

import "testing"

// TestSeekHintsFind: a remembered batch answers for its own offsets and
// for the offset just after it (where the next batch starts), nothing else.
func TestSeekHintsFind(t *testing.T) {
	var h seekHints
	h.note(100, 50)
	for _, tc := range []struct {
		off  int64
		base int64
		ok   bool
	}{
		{99, 0, false}, {100, 100, true}, {149, 100, true}, {150, 150, true}, {151, 0, false},
	} {
		base, ok := h.find(tc.off)
		if ok != tc.ok || base != tc.base {
			t.Errorf("find(%d) = %d, %v; want %d, %v", tc.off, base, ok, tc.base, tc.ok)
		}
	}
	h.note(150, 10)
	if base, ok := h.find(150); !ok || base != 150 {
		t.Errorf("find(150) after the next batch = %d, %v; want 150, true", base, ok)
	}
}
