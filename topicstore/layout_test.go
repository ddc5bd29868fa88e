package topicstore

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLayoutSplitAndRoute: keying shares the hash space out, a split
// halves a range, and routing finds the owner or the descendant.
func TestLayoutSplitAndRoute(t *testing.T) {
	l := FlatLayout(3)
	require.Equal(t, 3, l.Active())
	_, _, err := l.Split(0)
	require.ErrorIs(t, err, ErrAutoPartitioning, "a flat layout has no ranges")
	l.KeyAll()
	require.True(t, l.Keyed)
	require.Equal(t, uint64(0), l.Parts[0].KeyLo)
	require.Equal(t, l.Parts[0].KeyHi+1, l.Parts[1].KeyLo)
	require.Equal(t, l.Parts[1].KeyHi+1, l.Parts[2].KeyLo)
	require.Equal(t, uint64(math.MaxUint64), l.Parts[2].KeyHi)

	before := l.Clone()
	lo, hi, err := l.Split(1)
	require.NoError(t, err)
	require.Equal(t, [2]int32{3, 4}, [2]int32{lo, hi})
	require.False(t, before.Parts[1].Inactive, "Clone is deep")
	require.Nil(t, before.Parts[1].Children)
	p := before.Parts[1]
	require.Equal(t, PartLayout{Parent: 1, KeyLo: p.KeyLo, KeyHi: p.KeyLo + (p.KeyHi-p.KeyLo)/2}, l.Parts[3])
	require.Equal(t, PartLayout{Parent: 1, KeyLo: l.Parts[3].KeyHi + 1, KeyHi: p.KeyHi}, l.Parts[4])
	require.Equal(t, PartLayout{Inactive: true, Parent: -1, Children: []int32{3, 4}, KeyLo: p.KeyLo, KeyHi: p.KeyHi}, l.Parts[1])
	require.Equal(t, 4, l.Active())
	_, _, err = l.Split(1)
	require.ErrorIs(t, err, ErrPartitionInactive)
	_, _, err = l.Split(9)
	require.ErrorIs(t, err, ErrPartitionNotFound)
	require.Contains(t, []int32{0, 2}, l.Widest(), "the unsplit thirds are wider than the halves")

	for _, h := range []uint64{0, p.KeyLo, l.Parts[3].KeyHi, l.Parts[4].KeyLo, math.MaxUint64} {
		o := l.Owner(h)
		require.False(t, l.Parts[o].Inactive)
		require.True(t, l.Parts[o].KeyLo <= h && h <= l.Parts[o].KeyHi, "hash %x owner %d", h, o)
		if o == 3 || o == 4 {
			require.Equal(t, o, l.Descendant(1, h, true), "the child continuing 1 for hash %x", h)
		}
	}
	require.Equal(t, int32(3), l.Descendant(1, 0, false), "without a key: the first child")
	require.Equal(t, int32(2), l.Descendant(2, 0, true), "an active partition continues itself")
}

// TestKeyHashStable: the hash is part of the stored layout's meaning, so
// it must not change between versions or backends.
func TestKeyHashStable(t *testing.T) {
	require.Equal(t, KeyHash("p1"), KeyHash("p1"))
	require.NotEqual(t, KeyHash("p1")>>60, KeyHash("p2")>>60, "keys differing in the last byte spread over the high bits")
	for k, want := range map[string]uint64{"": 0xefd01f60ba992926, "p1": 0xb849493b38a4039c, "p2": 0x22185a800dc68caa, "orders": 0x32520fbdb4dad5b9} {
		require.Equal(t, want, KeyHash(k), "KeyHash(%q): layouts on disk route by it", k)
	}
}
