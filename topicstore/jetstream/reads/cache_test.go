package reads

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCache: the cache returns what was put, keeps the most recently
// used within its budget (90 bytes here), skips a message over a quarter of it, and a
// negative budget turns it off.
func TestCache(t *testing.T) {
	c := NewCache(90)
	c.Put(1, make([]byte, 20))
	c.Put(2, make([]byte, 20))
	c.Put(3, make([]byte, 20))
	_, ok := c.Get(1) // 1 is now the most recent
	require.True(t, ok)
	c.Put(4, make([]byte, 20))
	c.Put(5, make([]byte, 20)) // 100 bytes: 2, the least recent, goes
	_, ok = c.Get(2)
	require.False(t, ok)
	for _, seq := range []uint64{1, 3, 4, 5} {
		_, ok := c.Get(seq)
		require.True(t, ok, "seq %d", seq)
	}
	c.Put(6, make([]byte, 23)) // over a quarter of the budget
	_, ok = c.Get(6)
	require.False(t, ok)
	hits, misses, bytes := c.Stats()
	require.Equal(t, []int64{5, 2, 80}, []int64{hits, misses, bytes})
	off := NewCache(-1)
	off.Put(1, []byte("x"))
	_, ok = off.Get(1)
	require.False(t, ok)
}
