package sharedcore

// keep_messages_order across splits (docs/dialect/shared-consumers.md). A
// message group's messages go on in a child partition when their partition
// splits, so a shared consumer that keeps a group's order must finish (ack,
// or archive, or dead-letter) the group's messages in the parent before it
// hands out the group's messages in a child. The core knows the split tree
// from its topic (Tree, refreshed by the backend when the layout changes);
// a grouped message of a child is a candidate only if no ancestor has an
// unfinished message of its group. An ancestor whose window does not reach
// its end (more unfinished messages than the window holds) may hide any
// group, so then the child's grouped messages wait altogether. Ungrouped
// messages, and consumers without keep_messages_order, are not affected:
// they read parents and children freely.

// Tree is a topic's split tree as the core sees it.
type Tree struct {
	Parent []int32             // per partition: its parent, -1 none
	End    func(p int32) int64 // a partition's visible end offset
	Split  bool                // some partition has a parent
}

// orderHeld returns the groups that may not be handed out from partition
// pi: held (the groups in flight anywhere) plus every group with an
// unfinished message in an ancestor of pi; all reports that an ancestor's
// groups are not all known (every grouped message of pi waits).
func (c *Core) orderHeld(pi int, held map[string]bool) (map[string]bool, bool) {
	tr := &c.Tree
	if !c.Cfg.KeepOrder || !tr.Split || pi >= len(tr.Parent) || tr.Parent[pi] < 0 {
		return held, false
	}
	out, copied := held, false
	for a := tr.Parent[pi]; a >= 0 && int(a) < len(c.Parts) && int(a) < len(tr.Parent); a = tr.Parent[a] {
		p := c.Parts[a]
		if p.LoadedEnd() < tr.End(a) {
			return held, true
		}
		for i := range p.Ents {
			e := &p.Ents[i]
			if e.Finished() || e.Group == "" || out[e.Group] {
				continue
			}
			if !copied { // held is the caller's: add to a copy
				out, copied = make(map[string]bool, len(held)+8), true
				for g := range held {
					out[g] = true
				}
			}
			out[e.Group] = true
		}
	}
	return out, false
}
