package consume

import (
	"topicgate/topicstore"
)

// Reading in order across splits (docs/dialect/consumers.md, Splits). A
// split makes its parent inactive and gives it two children; a producer's
// messages go on in a child. So that a streaming consumer reads every
// producer's messages in order, it is given a child only once it has
// finished the parent: the parent is inactive and the consumer's committed
// position is at its end (or retention emptied what was left). A finished
// partition has nothing more to read and is left out of the balance; the
// children that become readable go first to the session that held the
// parent (Group's affinity). Positions count as committed: a
// transaction that read a parent to its end moves on to the children after
// its COMMIT.
//
// Stateless SELECT is not affected (it reads every partition), and shared
// consumers have their own rule (topicstore's keep_messages_order
// candidates).

// readable returns the partitions the consumer may read now, sorted, and
// the child -> parent map of the topic's splits (nil when it has none).
// positions is only consulted when the topic has splits; it is fetched
// lazily by pos, so a topic that never split costs nothing.
func readable(ti topicstore.TopicInfo, pos func() (map[int32]int64, error)) ([]int32, map[int32]int32, error) {
	split := false
	for i := range ti.Partitions {
		if p := &ti.Partitions[i]; p.Parent >= 0 || !p.Active {
			split = true
			break
		}
	}
	if !split {
		return activePartitions(ti), nil, nil
	}
	positions, err := pos()
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[int32]*topicstore.PartitionInfo, len(ti.Partitions))
	parents := make(map[int32]int32, len(ti.Partitions))
	for i := range ti.Partitions {
		p := &ti.Partitions[i]
		byID[p.ID] = p
		if p.Parent >= 0 {
			parents[p.ID] = p.Parent
		}
	}
	finished := func(p *topicstore.PartitionInfo) bool {
		return !p.Active && max(positions[p.ID], p.StartOffset) >= p.EndOffset
	}
	// ready: every ancestor of p is finished (a chain, at most one per split).
	ready := func(p *topicstore.PartitionInfo) bool {
		for a, ok := parents[p.ID]; ok; a, ok = parents[a] {
			ap := byID[a]
			if ap == nil {
				break // deleted by retention: nothing left to read there
			}
			if !finished(ap) {
				return false
			}
		}
		return true
	}
	out := make([]int32, 0, len(ti.Partitions))
	for i := range ti.Partitions {
		p := &ti.Partitions[i]
		if !finished(p) && ready(p) {
			out = append(out, p.ID)
		}
	}
	return out, parents, nil
}

// activePartitions lists every partition of a topic that never split.
func activePartitions(ti topicstore.TopicInfo) []int32 {
	out := make([]int32, 0, len(ti.Partitions))
	for _, p := range ti.Partitions {
		out = append(out, p.ID)
	}
	return out
}
