package txn

import (
	"context"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// State is a transaction's state as ReadyForQuery reports it.
type State byte

// States.
const (
	Idle   State = 'I' // no transaction block
	Open   State = 'T' // inside BEGIN ... COMMIT
	Failed State = 'E' // a statement failed; waiting for ROLLBACK
)

// ErrFailed is Commit's answer for a transaction in the failed state: it
// rolls back, publishing nothing (PostgreSQL answers such a COMMIT with
// ROLLBACK).
var ErrFailed = pgerror.New(pgerror.CodeInFailedSQLTransaction, "current transaction is aborted: it was rolled back")

// DefaultMaxStagedBytes bounds one transaction's staged message bytes
// (body bytes + 64 per message), in memory and spilled together.
const DefaultMaxStagedBytes = 16 << 30

// DefaultSpillBytes is how many staged bytes a transaction keeps in memory
// before it spills them to the store (see Txn.SpillBytes).
const DefaultSpillBytes = 8 << 20

// Txn is one transaction block's state. It is owned by one session and not
// safe for concurrent use.
type Txn struct {
	ID        uint64
	Started   time.Time
	state     State
	writes    []topicstore.TopicWrite
	byTopic   map[string]int
	messages  int
	bytes     int64
	maxStaged int64
	reads     map[ReadKey]*readState
	readOrder []ReadKey
	// SpillBytes: once the messages held in memory exceed it, Stage
	// spills them to the Stager (default DefaultSpillBytes; < 0 never).
	SpillBytes int64
	stager     topicstore.Stager
	memBytes   int64 // staged bytes held in memory
	spilled    bool  // the stager holds data of this transaction
	spills     int   // how many spills happened (Mark, RollbackTo)
	// acks are the shared-consumer messages COMMIT acknowledges.
	acks []topicstore.SharedAck
	// fences are the producers the commit is conditional on (Fence).
	fences []topicstore.ProducerFence
	// seqnos are the highest seqno staged per producer (dedup.go).
	seqnos map[producerKey]staged
	// atLeastOnce: an autocommit consumer read whose rows reached the
	// client; a position moved by another session since the read keeps
	// the other's value instead of failing the commit (AtLeastOnce).
	atLeastOnce bool
	// autocommit: the implicit transaction of one autocommit statement
	// (Conn.Statement), not a block's.
	autocommit bool
}

// AtLeastOnce marks the transaction as an autocommit read whose rows were
// delivered: its commit tolerates positions moved since the read (they
// keep the other session's value; some rows may come again), and skips
// the session's check.
func (t *Txn) AtLeastOnce() { t.atLeastOnce = true }

// restart reuses a finished transaction as a new one.
func (t *Txn) restart(id uint64, now time.Time) {
	t.ID, t.Started, t.state, t.atLeastOnce, t.autocommit = id, now, Open, false, true
}

// SetAcks sets the shared-consumer messages COMMIT acknowledges, atomically
// with the writes and positions.
func (t *Txn) SetAcks(acks []topicstore.SharedAck) { t.acks = acks }

// Fence makes the commit conditional on a producer (topicstore's
// ProducerFence): a Kafka transactional producer's commit fails whole,
// with topicstore.ErrFenced, once a newer instance of it registered.
func (t *Txn) Fence(f topicstore.ProducerFence) { t.fences = append(t.fences, f) }

// SetPosition sets where the commit moves a consumer's position in a
// partition, whatever it is then (a Kafka transactional offset commit):
// the last call for a partition wins.
func (t *Txn) SetPosition(k ReadKey, offset int64) { t.RecordRead(k, -1, offset, 0) }

// ReadKey names a consumer's partition the transaction read from.
type ReadKey struct {
	Topic, Consumer string
	Partition       int32
}

// readState is what the transaction read from one partition: the committed
// offset it started from (checked again at commit) and the next offset.
type readState struct {
	expect, next, bytes int64
}

// Begin starts a transaction block.
func Begin(id uint64, now time.Time, maxStaged int64) *Txn {
	if maxStaged <= 0 {
		maxStaged = DefaultMaxStagedBytes
	}
	return &Txn{ID: id, Started: now, state: Open, byTopic: map[string]int{}, maxStaged: maxStaged, SpillBytes: DefaultSpillBytes}
}

// SetStager lets the transaction spill staged messages to st.
func (t *Txn) SetStager(st topicstore.Stager) { t.stager = st }

// State returns the transaction's state.
func (t *Txn) State() State { return t.state }

// Fail moves the transaction to the failed state.
func (t *Txn) Fail() { t.state = Failed }

// Stage adds messages for topic. The messages are owned by the Txn from
// now on. When the messages held in memory exceed SpillBytes they are
// handed to the Stager (validated, encoded and stored outside the
// partitions) and only small descriptors stay; an error then (a message
// the topic refuses, a store failure) fails the statement, and the
// transaction must roll back.
func (t *Txn) Stage(topic string, msgs []topicstore.Message) error {
	var size int64
	for i := range msgs {
		size += int64(msgs[i].Size()) + 64
	}
	if t.bytes+size > t.maxStaged {
		return pgerror.Newf(pgerror.CodeProgramLimitExceeded,
			"transaction %d would stage %d bytes, more than the limit of %d bytes", t.ID, t.bytes+size, t.maxStaged).
			WithHint("Commit in smaller transactions.")
	}
	i, ok := t.byTopic[topic]
	if !ok {
		i = len(t.writes)
		t.byTopic[topic] = i
		t.writes = append(t.writes, topicstore.TopicWrite{Topic: topic})
	}
	if w := &t.writes[i]; len(w.Messages) == 0 {
		w.Messages = msgs // the caller hands msgs over; nothing to copy
	} else {
		w.Messages = append(w.Messages, msgs...)
	}
	t.messages += len(msgs)
	t.bytes += size
	t.memBytes += size
	if t.stager != nil && t.SpillBytes >= 0 && t.memBytes > t.SpillBytes {
		return t.spill()
	}
	return nil
}

// spill hands every in-memory message to the stager, topic by topic; the
// staged batches come before later in-memory messages at commit, so the
// order of each topic's messages is kept.
func (t *Txn) spill() error {
	t.spills++
	for i := range t.writes {
		w := &t.writes[i]
		if len(w.Messages) == 0 {
			continue
		}
		t.spilled = true
		sb, err := t.stager.StageBatch(context.Background(), t.ID, w.Topic, w.Messages)
		if err != nil {
			return StoreError(err, w.Topic)
		}
		w.Staged = append(w.Staged, sb)
		clear(w.Messages) // drop the bodies now
		w.Messages = nil
	}
	t.memBytes = 0
	return nil
}

// Staged reports the staged message count and bytes.
func (t *Txn) Staged() (messages int, bytes int64) { return t.messages, t.bytes }

// Topics lists the topics the transaction writes to.
func (t *Txn) Topics() []string {
	out := make([]string, len(t.writes))
	for i, w := range t.writes {
		out[i] = w.Topic
	}
	return out
}

// ReadPos returns where the transaction's reads of k continue, if it read
// from k.
func (t *Txn) ReadPos(k ReadKey) (int64, bool) {
	r, ok := t.reads[k]
	if !ok {
		return 0, false
	}
	return r.next, true
}

// InFlight returns the bytes read from k and not yet committed.
func (t *Txn) InFlight(k ReadKey) int64 {
	if r, ok := t.reads[k]; ok {
		return r.bytes
	}
	return 0
}

// RecordRead notes that the transaction read k up to next (exclusive),
// starting from the committed offset expect (only the first read's expect
// is kept: the commit checks that nobody moved the position since).
func (t *Txn) RecordRead(k ReadKey, expect, next, bytes int64) {
	if t.reads == nil {
		t.reads = map[ReadKey]*readState{}
	}
	r, ok := t.reads[k]
	if !ok {
		r = &readState{expect: expect, next: expect}
		t.reads[k] = r
		t.readOrder = append(t.readOrder, k)
	}
	r.next = next
	r.bytes += bytes
}

// Reads lists the partitions the transaction read from.
func (t *Txn) Reads() []ReadKey { return t.readOrder }

// Request builds the commit request: staged writes and the positions of
// everything read, each conditional on the position it started from.
func (t *Txn) Request() *topicstore.CommitRequest {
	req := &topicstore.CommitRequest{Writes: t.writes, Acks: t.acks, Fences: t.fences}
	for _, k := range t.readOrder {
		r := t.reads[k]
		if r.next == r.expect {
			continue
		}
		req.Positions = append(req.Positions, topicstore.PositionUpdate{
			Topic: k.Topic, Consumer: k.Consumer, Partition: k.Partition, Offset: r.next, Expect: r.expect})
	}
	return req
}

// Rollback discards everything staged.
func (t *Txn) Rollback() { t.discard() }

func (t *Txn) discard() {
	if t.spilled && t.stager != nil {
		_ = t.stager.DiscardStaged(t.ID) // on failure the store deletes it at its next start
	}
	t.spilled, t.memBytes = false, 0
	clear(t.byTopic) // kept for a restart
	t.writes, t.messages, t.bytes = nil, 0, 0
	t.reads, t.readOrder = nil, nil
	t.acks, t.seqnos, t.fences = nil, nil, nil
	t.state = Idle
}
