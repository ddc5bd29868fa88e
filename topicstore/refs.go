package topicstore

import (
	"cmp"
	"context"
	"slices"
)

// Scanner is the part of a Store that ReadRefs needs.
type Scanner interface {
	Scan(ctx context.Context, topic string, r ScanRange, fn func(m *Message) bool) error
}

// ReadRefs reads the messages refs name (copies, Message.CloneIn: their
// slices are the caller's, the bodies of one call in shared arenas), as
// ScanRefs does; a message that is not there
// (retention deleted it) is missing from the result. Shared consumers use
// it to hand out what they picked.
func ReadRefs(ctx context.Context, s Scanner, topic string, refs []MsgRef) (map[MsgRef]Message, error) {
	got := make(map[MsgRef]Message, len(refs))
	var arena []byte
	left := len(refs)
	err := ScanRefs(ctx, s, topic, refs, func(i int, m *Message) {
		got[refs[i]] = m.CloneIn(&arena, len(m.Body)*left)
		left--
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// ScanRefs calls fn for each message refs name that is there, i its index
// in refs and m the store's (valid during the call only, as in Scan), in
// (partition, offset) order: one Scan per partition, from its first ref
// to its last. A ref named twice is called twice.
func ScanRefs(ctx context.Context, s Scanner, topic string, refs []MsgRef, fn func(i int, m *Message)) error {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(refs[a].Partition, refs[b].Partition); c != 0 {
			return c
		}
		return cmp.Compare(refs[a].Offset, refs[b].Offset)
	})
	for len(order) > 0 {
		pi, n := refs[order[0]].Partition, 1
		for n < len(order) && refs[order[n]].Partition == pi {
			n++
		}
		run, k := order[:n], 0
		order = order[n:]
		r := ScanRange{Partition: pi, Start: refs[run[0]].Offset, End: refs[run[n-1]].Offset + 1}
		err := s.Scan(ctx, topic, r, func(m *Message) bool {
			for k < len(run) && refs[run[k]].Offset < m.Offset {
				k++
			}
			for k < len(run) && refs[run[k]].Offset == m.Offset {
				fn(run[k], m)
				k++
			}
			return k < len(run)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
