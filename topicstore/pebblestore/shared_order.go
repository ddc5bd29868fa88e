package pebblestore

// keep_messages_order across splits (DESIGN.md §1a). A message group's
// messages go on in a child partition when their partition splits, so a
// shared consumer that keeps a group's order must finish (ack, or
// archive, or dead-letter) the group's messages in the parent before it
// hands out the group's messages in a child. The core knows the split
// tree from its topic version (shTree, refreshed with the manager's
// topic); a grouped message of a child is a candidate only if no ancestor
// has an unfinished message of its group. An ancestor whose window does
// not reach its end (more unfinished messages than the window holds) may
// hide any group, so then the child's grouped messages wait altogether.
// Ungrouped messages, and consumers without keep_messages_order, are not
// affected: they read parents and children freely.

// shTree is a topic version's split tree as the shared core sees it.
type shTree struct {
	parent []int32      // per partition: its parent, -1 none
	parts  []*partition // per partition: for its visible end
	split  bool         // some partition has a parent
}

// newShTree reads t's layout.
func newShTree(t *topic) shTree {
	tr := shTree{parent: make([]int32, len(t.parts)), parts: t.parts}
	for i := range tr.parent {
		tr.parent[i] = -1
		if i < len(t.layout.Parts) && t.layout.Parts[i].Parent >= 0 {
			tr.parent[i] = t.layout.Parts[i].Parent
			tr.split = true
		}
	}
	return tr
}

// orderHeld returns the groups that may not be handed out from partition
// pi: held (the groups in flight anywhere) plus every group with an
// unfinished message in an ancestor of pi; all reports that an ancestor's
// groups are not all known (every grouped message of pi waits).
func (c *shCore) orderHeld(pi int, held map[string]bool) (map[string]bool, bool) {
	tr := &c.tree
	if !c.cfg.keepOrder || !tr.split || pi >= len(tr.parent) || tr.parent[pi] < 0 {
		return held, false
	}
	out, copied := held, false
	for a := tr.parent[pi]; a >= 0 && int(a) < len(c.parts) && int(a) < len(tr.parent); a = tr.parent[a] {
		p := c.parts[a]
		if p.loadedEnd() < tr.parts[a].visibleEnd.Load() {
			return held, true
		}
		for i := range p.ents {
			e := &p.ents[i]
			if e.finished() || e.group == "" || out[e.group] {
				continue
			}
			if !copied { // held is the caller's: add to a copy
				out, copied = make(map[string]bool, len(held)+8), true
				for g := range held {
					out[g] = true
				}
			}
			out[e.group] = true
		}
	}
	return out, false
}
