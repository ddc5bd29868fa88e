package sequencer

import (
	"fmt"
	"time"

	"topicgate/topicstore"
)

// The core's input, built on the caller's goroutine from a commit
// request whose messages the store has validated against its catalog.

// EncodeMsgs encodes a write's messages for the core into one buffer of
// capacity size (a message without a created_at gets now) and returns
// them with the bytes they take.
func EncodeMsgs(ms []topicstore.Message, size int, now time.Time) ([]Msg, int, error) {
	arena := make([]byte, 0, size)
	ends := make([]int, len(ms))
	var err error
	for j := range ms {
		if arena, _, err = topicstore.EncodeTail(arena, &ms[j], now); err != nil {
			return nil, 0, err
		}
		ends[j] = len(arena)
	}
	msgs := make([]Msg, len(ms))
	startAt := 0
	for j := range ms {
		m := &ms[j]
		msgs[j] = Msg{Partition: m.Partition, ProducerID: m.ProducerID, Group: m.MessageGroupID, SeqNo: m.SeqNo,
			HasSeqNo: m.HasSeqNo, Tail: arena[startAt:ends[j]:ends[j]]}
		startAt = ends[j]
	}
	return msgs, len(arena), nil
}

// StagedOf validates a write's staged batches against its topic (parts
// partitions, accepting the codecs marked in codecs) and returns them for
// the core.
func StagedOf(w *topicstore.TopicWrite, parts int, codecs *[8]bool) ([]Staged, error) {
	var out []Staged
	for _, sb := range w.Staged {
		if sb.Topic != w.Topic {
			return nil, fmt.Errorf("staged batch of topic %q in a write to %q", sb.Topic, w.Topic)
		}
		for _, c := range sb.Chunks {
			if c.Partition >= int32(parts) {
				return nil, fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, w.Topic, c.Partition)
			}
			for codec := topicstore.Codec(0); codec < 8; codec++ {
				if c.Codecs&(1<<codec) != 0 && !codecs[codec] {
					return nil, fmt.Errorf("%w: topic %q does not accept codec %s", topicstore.ErrCodecNotSupported, w.Topic, codec)
				}
			}
			out = append(out, Staged{SID: sb.StageID, Seq: c.Seq, Partition: max(c.Partition, -1),
				ProducerID: c.ProducerID, Count: c.Count, Bytes: c.Bytes, CRC: c.CRC,
				SeqMin: c.SeqMin, SeqMax: c.SeqMax, SeqOK: c.SeqOK})
		}
	}
	return out, nil
}
