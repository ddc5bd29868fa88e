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

// DefaultMaxStagedBytes bounds one transaction's staged message bytes.
const DefaultMaxStagedBytes = 256 << 20

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
}

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
	return &Txn{ID: id, Started: now, state: Open, byTopic: map[string]int{}, maxStaged: maxStaged}
}

// State returns the transaction's state.
func (t *Txn) State() State { return t.state }

// Fail moves the transaction to the failed state.
func (t *Txn) Fail() { t.state = Failed }

// Stage adds messages for topic. The messages are owned by the Txn from
// now on.
func (t *Txn) Stage(topic string, msgs []topicstore.Message) error {
	var size int64
	for i := range msgs {
		size += int64(len(msgs[i].Body)) + 64
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
	t.writes[i].Messages = append(t.writes[i].Messages, msgs...)
	t.messages += len(msgs)
	t.bytes += size
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
	req := &topicstore.CommitRequest{Writes: t.writes}
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

// Commit publishes the staged writes and moves the read positions in one
// atomic store commit. It returns the per-topic write results in staging
// order.
func (t *Txn) Commit(ctx context.Context, st topicstore.Store) (topicstore.CommitResult, error) {
	defer t.discard()
	if t.state == Failed {
		return topicstore.CommitResult{}, nil
	}
	req := t.Request()
	if len(req.Writes) == 0 && len(req.Positions) == 0 {
		return topicstore.CommitResult{}, nil
	}
	return st.Commit(ctx, req)
}

// Rollback discards everything staged.
func (t *Txn) Rollback() { t.discard() }

func (t *Txn) discard() {
	t.writes, t.byTopic, t.messages, t.bytes = nil, nil, 0, 0
	t.reads, t.readOrder = nil, nil
	t.state = Idle
}
