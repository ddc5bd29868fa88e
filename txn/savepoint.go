package txn

import (
	"maps"

	"topicgate/sql/pgerror"
)

// Mark is a point in a transaction block that RollbackTo returns to: a
// SAVEPOINT. It records how much was staged and read by then, and the
// block's state (a ROLLBACK TO SAVEPOINT also clears a failure that came
// after it).
type Mark struct {
	state     State
	topics    int   // len(writes)
	inMemory  []int // len(Messages) of each of those writes
	staged    []int // len(Staged) of each
	messages  int
	bytes     int64
	memBytes  int64
	spills    int
	reads     map[ReadKey]readState
	readOrder int
	seqnos    map[producerKey]staged
}

// Mark returns the transaction's current point.
func (t *Txn) Mark() Mark {
	m := Mark{state: t.state, topics: len(t.writes), messages: t.messages, bytes: t.bytes, memBytes: t.memBytes,
		spills: t.spills, readOrder: len(t.readOrder), reads: make(map[ReadKey]readState, len(t.reads))}
	for _, w := range t.writes {
		m.inMemory = append(m.inMemory, len(w.Messages))
		m.staged = append(m.staged, len(w.Staged))
	}
	for k, r := range t.reads {
		m.reads[k] = *r
	}
	m.seqnos = maps.Clone(t.seqnos)
	return m
}

// RollbackTo discards what was staged and read since m and returns the
// transaction to m's state. Messages spilled to the store since m cannot
// be taken apart from those staged before it (a spill moves every
// in-memory message into one batch per topic), so a mark older than a
// spill is refused (0A000) and the transaction stays as it was.
func (t *Txn) RollbackTo(m Mark) error {
	if t.spills != m.spills {
		return pgerror.Newf(pgerror.CodeFeatureNotSupported,
			"ROLLBACK TO SAVEPOINT is not supported after the transaction spilled staged messages to the store (more than %d bytes staged since the savepoint); roll back the whole transaction", t.SpillBytes)
	}
	for i := m.topics; i < len(t.writes); i++ {
		delete(t.byTopic, t.writes[i].Topic)
	}
	t.writes = t.writes[:m.topics]
	for i := range t.writes {
		w := &t.writes[i]
		clear(w.Messages[m.inMemory[i]:]) // drop the bodies now
		w.Messages = w.Messages[:m.inMemory[i]]
		w.Staged = w.Staged[:m.staged[i]]
	}
	t.messages, t.bytes, t.memBytes = m.messages, m.bytes, m.memBytes
	for _, k := range t.readOrder[m.readOrder:] {
		delete(t.reads, k)
	}
	t.readOrder = t.readOrder[:m.readOrder]
	for k, r := range m.reads {
		*t.reads[k] = r
	}
	t.seqnos = maps.Clone(m.seqnos)
	t.state = m.state
	return nil
}
