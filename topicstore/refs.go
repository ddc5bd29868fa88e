package topicstore

import (
	"context"
	"slices"
)

// Scanner is the part of a Store that ReadRefs needs.
type Scanner interface {
	Scan(ctx context.Context, topic string, r ScanRange, fn func(m *Message) bool) error
}

// ReadRefs reads the messages refs name (copies, Message.Clone: their
// slices are the caller's), one Scan per partition from its first to its last ref; a
// message that is not there (retention deleted it) is missing from the
// result. Shared consumers use it to hand out what they picked.
func ReadRefs(ctx context.Context, s Scanner, topic string, refs []MsgRef) (map[MsgRef]Message, error) {
	byPart := map[int32][]int64{}
	for _, r := range refs {
		byPart[r.Partition] = append(byPart[r.Partition], r.Offset)
	}
	got := make(map[MsgRef]Message, len(refs))
	for pi, offs := range byPart {
		slices.Sort(offs)
		i := 0
		err := s.Scan(ctx, topic, ScanRange{Partition: pi, Start: offs[0], End: offs[len(offs)-1] + 1}, func(m *Message) bool {
			for i < len(offs) && offs[i] < m.Offset {
				i++
			}
			if i < len(offs) && offs[i] == m.Offset {
				got[MsgRef{Partition: pi, Offset: m.Offset}] = m.Clone()
			}
			return i < len(offs)
		})
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}
