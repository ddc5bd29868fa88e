package pebblestore

import "topicgate/topicstore/sharedcore"

// keep_messages_order across splits (docs/dialect/shared-consumers.md):
// the rule is the shared core's (sharedcore/order.go); newShTree gives the
// core a topic version's split tree, with each partition's visible end
// read live.

// newShTree reads t's layout.
func newShTree(t *topic) sharedcore.Tree {
	tr := sharedcore.Tree{Parent: make([]int32, len(t.parts))}
	parts := t.parts
	tr.End = func(p int32) int64 { return parts[p].visibleEnd.Load() }
	for i := range tr.Parent {
		tr.Parent[i] = -1
		if i < len(t.layout.Parts) && t.layout.Parts[i].Parent >= 0 {
			tr.Parent[i] = t.layout.Parts[i].Parent
			tr.Split = true
		}
	}
	return tr
}

// holder is a session's lock holder: one process, so no gateway id.
func holder(session uint32) sharedcore.Holder { return sharedcore.Holder{Session: session} }
