package topicstore

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
)

// A topic's partition layout (docs/dialect/auto-partitioning.md). A topic
// with auto-partitioning ('scale_up' or 'paused') is keyed: its active
// partitions own disjoint ranges of a 64-bit hash space, together all of
// it, and a message's key (its producer_id, else its message_group_id)
// goes to the active partition whose range holds the key's hash. A split
// turns one active partition into two active children, the lower and the
// upper half of its range, and makes the parent inactive: readable, never
// written again. Partition IDs are never reused: the children of a split
// get the next two IDs. A topic with auto-partitioning 'disabled' is not
// keyed: all its partitions stay active and producers bind round robin, as
// before layouts existed.
//
// A backend stores the layout with the topic's definition (Pebble: its
// catalog record, as JSON with these tags), so a split is one atomic
// change: a crash leaves the old layout or the new one. The layout and
// KeyHash are pure and shared by every backend, so a key routes to the
// same partition whichever store holds the topic.

// PartLayout is one partition's place in the layout.
type PartLayout struct {
	Inactive bool `json:"inactive,omitempty"`
	// Deleted: an inactive partition that retention emptied and every
	// consumer finished; it holds nothing and never will.
	Deleted  bool    `json:"deleted,omitempty"`
	Parent   int32   `json:"parent"` // -1: none
	Children []int32 `json:"children,omitempty"`
	// KeyLo and KeyHi bound the hashes the partition owns, both
	// inclusive; only meaningful in a keyed layout.
	KeyLo uint64 `json:"lo,omitempty"`
	KeyHi uint64 `json:"hi,omitempty"`
}

// Layout is a topic's partitions in ID order.
type Layout struct {
	Keyed bool         `json:"keyed,omitempty"`
	Parts []PartLayout `json:"parts"`
}

// FlatLayout is n active partitions without key ranges.
func FlatLayout(n int) Layout {
	l := Layout{Parts: make([]PartLayout, n)}
	for i := range l.Parts {
		l.Parts[i].Parent = -1
	}
	return l
}

// KeyAll gives the active partitions of l equal shares of the hash
// space, in ID order, and makes l keyed. Inactive partitions keep what
// they had (they own nothing any more).
func (l *Layout) KeyAll() {
	var active []int
	for i, p := range l.Parts {
		if !p.Inactive {
			active = append(active, i)
		}
	}
	l.Keyed = true
	n := uint64(len(active))
	if n == 0 {
		return
	}
	step := math.MaxUint64/n + 1
	for k, i := range active {
		lo := uint64(k) * step
		hi := lo + step - 1
		if k == len(active)-1 {
			hi = math.MaxUint64
		}
		l.Parts[i].KeyLo, l.Parts[i].KeyHi = lo, hi
	}
}

// Clone deep-copies l.
func (l Layout) Clone() Layout {
	l.Parts = slices.Clone(l.Parts)
	for i := range l.Parts {
		l.Parts[i].Children = slices.Clone(l.Parts[i].Children)
	}
	return l
}

// Active counts the active partitions.
func (l *Layout) Active() int {
	n := 0
	for _, p := range l.Parts {
		if !p.Inactive {
			n++
		}
	}
	return n
}

// Split makes active partition p inactive and appends its two children,
// the lower and the upper half of its range; it returns their IDs.
func (l *Layout) Split(p int32) (lo, hi int32, err error) {
	if int(p) >= len(l.Parts) || p < 0 {
		return 0, 0, fmt.Errorf("%w: partition %d", ErrPartitionNotFound, p)
	}
	par := &l.Parts[p]
	if par.Inactive {
		return 0, 0, fmt.Errorf("%w: partition %d", ErrPartitionInactive, p)
	}
	if !l.Keyed {
		return 0, 0, fmt.Errorf("%w: partition %d has no key range to split: auto_partitioning_strategy is 'disabled'", ErrAutoPartitioning, p)
	}
	if par.KeyLo == par.KeyHi {
		return 0, 0, fmt.Errorf("%w: partition %d owns one key hash and cannot split", ErrAutoPartitioning, p)
	}
	mid := par.KeyLo + (par.KeyHi-par.KeyLo)/2
	lo, hi = int32(len(l.Parts)), int32(len(l.Parts)+1)
	par.Inactive = true
	par.Children = []int32{lo, hi}
	plo, phi := par.KeyLo, par.KeyHi
	l.Parts = append(l.Parts,
		PartLayout{Parent: p, KeyLo: plo, KeyHi: mid},
		PartLayout{Parent: p, KeyLo: mid + 1, KeyHi: phi})
	return lo, hi, nil
}

// Widest returns the active partition with the widest key range (the
// lowest ID among equals), or -1.
func (l *Layout) Widest() int32 {
	best, width := int32(-1), uint64(0)
	for i, p := range l.Parts {
		if !p.Inactive && (best < 0 || p.KeyHi-p.KeyLo > width) {
			best, width = int32(i), p.KeyHi-p.KeyLo
		}
	}
	return best
}

// Owner returns the active partition whose range holds hash h.
func (l *Layout) Owner(h uint64) int32 {
	for i, p := range l.Parts {
		if !p.Inactive && p.KeyLo <= h && h <= p.KeyHi {
			return int32(i)
		}
	}
	return -1 // unreachable for a valid keyed layout
}

// Descendant returns the active partition that continues p for hash h
// (keyed: the active descendant owning h; else the first active
// descendant), or p itself when it is active.
func (l *Layout) Descendant(p int32, h uint64, keyed bool) int32 {
	for l.Parts[p].Inactive && len(l.Parts[p].Children) > 0 {
		next := l.Parts[p].Children[0]
		if keyed {
			for _, c := range l.Parts[p].Children {
				if l.Parts[c].KeyLo <= h && h <= l.Parts[c].KeyHi {
					next = c
				}
			}
		}
		p = next
	}
	return p
}

// KeyHash is the 64-bit hash of a message key: FNV-1a, stable across
// processes and versions as the layout on disk needs, then MurmurHash3's
// finalizer, so that short keys that differ in their last byte ("p1",
// "p2") spread over the high bits that ranges split on.
func KeyHash(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
