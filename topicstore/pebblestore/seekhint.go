package pebblestore

import "sync"

// seekHints remembers the (base, count) of record batches a partition's
// readers saw recently, so that a read starting inside one of them seeks
// forward to its exact key (SeekGE) instead of backward (SeekLT). Pebble's
// reverse positioning copies the whole value it lands on; forward
// positioning does not, and consumers read each partition front to back,
// so almost every read starts in a batch the previous read saw. Batches
// are immutable, so a stale hint is never wrong: at worst it names a batch
// retention deleted, and the scan skips forward from there.
type seekHints struct {
	mu    sync.Mutex
	base  [seekHintSlots]int64
	count [seekHintSlots]int32
	next  int
}

const seekHintSlots = 16

// find returns the base of the batch holding offset off when a reader saw
// it, or saw the batch just before it: a partition's batches are
// contiguous, so the one after [base, base+count) starts at base+count.
// (A read bounded by its quota often stops at a batch's end, and the
// next read starts there; the batch it starts in has not been seen.)
func (h *seekHints) find(off int64) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.base {
		if c := h.count[i]; c > 0 && h.base[i] <= off && off <= h.base[i]+int64(c) {
			if off == h.base[i]+int64(c) {
				return off, true
			}
			return h.base[i], true
		}
	}
	return 0, false
}

// note remembers a batch.
func (h *seekHints) note(base int64, count int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.base {
		if h.base[i] == base && h.count[i] > 0 {
			return
		}
	}
	h.base[h.next], h.count[h.next] = base, int32(count)
	h.next = (h.next + 1) % seekHintSlots
}
