package pebblestore

import (
	"sort"
	"testing"
	"time"

	"topicgate/topicstore"
)

// TestSharedOrderAcrossSplit: with keep_messages_order a group's messages
// in a child wait until the group's messages in the parent (and the
// grandparent) are finished, whichever partition the round robin starts
// with; ungrouped messages and other groups are not held back; a parent
// whose window does not reach its end holds every group of its children.
func TestSharedOrderAcrossSplit(t *testing.T) {
	mk := func(groups ...string) *shPart {
		p := &shPart{}
		for _, g := range groups {
			p.ents = append(p.ents, shEntry{group: g})
		}
		return p
	}
	ends := func(ns ...int64) []*partition {
		out := make([]*partition, len(ns))
		for i, n := range ns {
			out[i] = &partition{}
			out[i].visibleEnd.Store(n)
		}
		return out
	}
	sorted := func(rs []topicstore.MsgRef) []topicstore.MsgRef {
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].Partition != rs[j].Partition {
				return rs[i].Partition < rs[j].Partition
			}
			return rs[i].Offset < rs[j].Offset
		})
		return rs
	}
	for rr := 0; rr < 3; rr++ {
		// 0 split into 1 and 2; group a spans 0 and 1, b only in 2.
		c := &shCore{cfg: shConfig{timeout: time.Second, keepOrder: true}, window: 10, rr: rr}
		c.parts = []*shPart{mk("a", "a"), mk("a", "", "a"), mk("b")}
		c.tree = shTree{parent: []int32{-1, 0, 0}, parts: ends(2, 3, 1), split: true}
		got := sorted(c.pick(100, 10, 1, 200))
		eq(t, got, []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 1, Offset: 1}, {Partition: 2, Offset: 0}}) // a from the parent only
		var eff shEffects
		eq(t, c.act(100, 1, topicstore.ActionAck, topicstore.MsgRef{Partition: 0, Offset: 0}, time.Time{}, &eff), topicstore.OutcomeDone)
		eq(t, sorted(c.pick(100, 10, 1, 200)), []topicstore.MsgRef{{Partition: 0, Offset: 1}}) // still the parent's a
		eq(t, c.act(100, 1, topicstore.ActionAck, topicstore.MsgRef{Partition: 0, Offset: 1}, time.Time{}, &eff), topicstore.OutcomeDone)
		eq(t, sorted(c.pick(100, 10, 1, 200)), []topicstore.MsgRef{{Partition: 1, Offset: 0}}) // the parent is done with a
	}

	// A grandparent's unfinished message holds the grandchild's group too.
	c := &shCore{cfg: shConfig{timeout: time.Second, keepOrder: true}, window: 10}
	c.parts = []*shPart{mk("a"), mk(), mk(), mk("a")}
	c.tree = shTree{parent: []int32{-1, 0, 0, 1}, parts: ends(1, 0, 0, 1), split: true}
	c.parts[0].ents[0].state = shAcquired
	eq(t, c.pick(100, 10, 1, 200), []topicstore.MsgRef(nil))

	// A parent not loaded to its end: the child's groups wait, ungrouped go.
	c = &shCore{cfg: shConfig{timeout: time.Second, keepOrder: true}, window: 10}
	c.parts = []*shPart{mk("x"), mk("a", "")}
	c.tree = shTree{parent: []int32{-1, 0}, parts: ends(5, 2), split: true}
	eq(t, sorted(c.pick(100, 10, 1, 200)), []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 1, Offset: 1}})

	// Without keep_messages_order parents and children are read freely.
	c = &shCore{cfg: shConfig{timeout: time.Second}, window: 10}
	c.parts = []*shPart{mk("a"), mk("a")}
	c.tree = shTree{parent: []int32{-1, 0}, parts: ends(1, 1), split: true}
	eq(t, sorted(c.pick(100, 10, 1, 200)), []topicstore.MsgRef{{Partition: 0, Offset: 0}, {Partition: 1, Offset: 0}})
}
