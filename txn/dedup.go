package txn

import (
	"maps"

	"topicgate/topicstore"
)

// A transaction's INSERT reports, like PostgreSQL's INSERT ... ON CONFLICT
// DO NOTHING, how many rows it adds: the messages its commit will write,
// not those it will skip as duplicates of a (producer_id, seqno) already
// stored or already staged by the same transaction. The store decides
// dedup again at COMMIT and is the authority: only a concurrent writer of
// the same producer_id between the INSERT and the COMMIT makes the two
// differ (the commit then reports the duplicates it skipped as NOTICEs).

// producerKey names a producer of a topic.
type producerKey struct{ topic, producer string }

// ProducerLookup returns a producer's stored state (ok false: the store
// knows no live producer of that id, so nothing of it is a duplicate and
// it is bound to no partition); topicstore.Store.Producer is one.
type ProducerLookup func(topic, producer string) (info topicstore.ProducerInfo, ok bool)

// staged is what the transaction staged of one producer: its highest
// seqno, and the partition its messages named (-1: none yet).
type staged struct {
	seqno     int64
	partition int32
}

// Admit counts the messages of msgs that the commit will write rather
// than skip as duplicates, given what the store holds (lookup) and what
// the transaction staged before them, and records msgs' seqnos as staged.
// A message that names a partition other than its producer's (stored, or
// named by an earlier message of the transaction) is refused with a
// *topicstore.ProducerPartitionError, as the commit would refuse it.
// Call it for messages about to be staged, in staging order; after an
// error nothing of msgs is recorded.
func (t *Txn) Admit(topic string, msgs []topicstore.Message, lookup ProducerLookup) (int, error) {
	n := 0
	var seqnos map[producerKey]staged // this call's changes, applied at the end
	for i := range msgs {
		m := &msgs[i]
		if m.ProducerID == "" {
			n++
			continue
		}
		k := producerKey{topic, m.ProducerID}
		st, seen := seqnos[k]
		if !seen {
			st, seen = t.seqnos[k]
		}
		if !seen {
			st.partition = -1
			if info, ok := lookup(topic, m.ProducerID); ok {
				st, seen = staged{info.MaxSeqNo, info.Partition}, true
			}
		}
		if m.Partition >= 0 {
			if st.partition >= 0 && st.partition != m.Partition {
				return 0, &topicstore.ProducerPartitionError{Producer: m.ProducerID, Bound: st.partition, Named: m.Partition}
			}
			st.partition = m.Partition
		}
		max := st.seqno
		switch {
		case !m.HasSeqNo:
			max++ // the store numbers it after the producer's last
		case seen && m.SeqNo <= max:
			continue // a duplicate: the commit will skip it
		default:
			max = m.SeqNo
		}
		if seqnos == nil {
			seqnos = map[producerKey]staged{}
		}
		st.seqno = max
		seqnos[k] = st
		n++
	}
	if t.seqnos == nil && len(seqnos) > 0 {
		t.seqnos = make(map[producerKey]staged, len(seqnos))
	}
	maps.Copy(t.seqnos, seqnos)
	return n, nil
}
