package txn

import "topicgate/topicstore"

// A transaction's INSERT reports, like PostgreSQL's INSERT ... ON CONFLICT
// DO NOTHING, how many rows it adds: the messages its commit will write,
// not those it will skip as duplicates of a (producer_id, seqno) already
// stored or already staged by the same transaction. The store decides
// dedup again at COMMIT and is the authority: only a concurrent writer of
// the same producer_id between the INSERT and the COMMIT makes the two
// differ (the commit then reports the duplicates it skipped as NOTICEs).

// producerKey names a producer of a topic.
type producerKey struct{ topic, producer string }

// SeqNoLookup returns a producer's highest stored seqno (ok false: the
// store knows no live producer of that id, so nothing of it is a
// duplicate).
type SeqNoLookup func(topic, producer string) (maxSeqNo int64, ok bool)

// Admit counts the messages of msgs that the commit will write rather
// than skip as duplicates, given what the store holds (lookup) and what
// the transaction staged before them, and records msgs' seqnos as staged.
// Call it for messages about to be staged, in staging order.
func (t *Txn) Admit(topic string, msgs []topicstore.Message, lookup SeqNoLookup) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		if m.ProducerID == "" {
			n++
			continue
		}
		k := producerKey{topic, m.ProducerID}
		max, seen := t.seqnos[k]
		if !seen {
			max, seen = lookup(topic, m.ProducerID)
		}
		switch {
		case !m.HasSeqNo:
			max++ // the store numbers it after the producer's last
		case seen && m.SeqNo <= max:
			continue // a duplicate: the commit will skip it
		default:
			max = m.SeqNo
		}
		seen = true
		if t.seqnos == nil {
			t.seqnos = map[producerKey]int64{}
		}
		t.seqnos[k] = max
		n++
	}
	return n
}
