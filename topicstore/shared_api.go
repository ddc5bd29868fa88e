package topicstore

import (
	"context"
	"time"
)

// The shared-consumer part of the store contract: SharedStore, through
// which a shared consumer's messages are acquired, acked, released and
// rejected, and its types.

// MsgRef names one message of a partition.
type MsgRef struct {
	Partition int32
	Offset    int64
}

// AcquireRequest asks a shared consumer for up to Max available messages.
type AcquireRequest struct {
	Topic, Consumer string
	// Session identifies the lock holder (the connection's process id).
	Session uint32
	Max     int
	// Timeout is the lock duration (0 = the consumer's
	// default_processing_timeout, else DefaultProcessingTimeout).
	Timeout time.Duration
	// MaxBytes caps the returned body bytes (0 = none; at least one
	// message is returned).
	MaxBytes int64
	// Watch: the caller waits for messages if none is available; an empty
	// AcquireResult then says what to wait on.
	Watch bool
}

// AcquireResult is what AcquireAsync hands out.
type AcquireResult struct {
	Messages []Acquired
	// Wait blocks until the delivery counts of Messages (and whatever the
	// call finished) are durable. It must be called exactly once, and no
	// message may be shown to anyone before it returned nil.
	Wait func() error
	// With Watch and no Messages: Published is closed the next time
	// messages of the topic are published, Freed the next time a message
	// of the consumer may have become available otherwise (a release, a
	// lock handed back, an ack that lets an ordered group or the window
	// move on, a change of the consumer or the topic); NextReady, if
	// positive, is how long (by the store's clock) until a message becomes
	// available by itself (the earliest lock deadline or end of a delay).
	// A reader waits on all three, then tries again.
	Published, Freed <-chan struct{}
	NextReady        time.Duration
}

// Acquired is a message handed out under a lock. Message's slices are
// owned by the caller.
type Acquired struct {
	Message       Message
	DeliveryCount int
	LockedUntil   time.Time
}

// SharedAction is what a session does with messages it holds.
type SharedAction uint8

// Shared-consumer actions.
const (
	ActionAck     SharedAction = iota + 1 // finished: never delivered again
	ActionRelease                         // available again at once (counts as a failed attempt)
	ActionReject                          // archived, or the dead-letter policy applies
	ActionExtend                          // lock deadline moved to Until
)

// SharedOutcome reports what happened to one referenced message.
type SharedOutcome uint8

// Outcomes of a SharedAction on one message.
const (
	OutcomeDone     SharedOutcome = iota + 1
	OutcomeNotHeld                // not acquired by this session (never, or another session holds it)
	OutcomeExpired                // the session's lock expired; the message went back to the queue
	OutcomeFinished               // already acknowledged or archived
	OutcomeUnknown                // no such message (offset outside the partition)
)

// SharedActionRequest applies Action to Refs held by Session.
type SharedActionRequest struct {
	Topic, Consumer string
	Session         uint32
	Action          SharedAction
	Refs            []MsgRef
	Until           time.Time // ActionExtend
}

// SharedPartitionStats is one partition's shared-consumer state.
type SharedPartitionStats struct {
	Partition                              int32
	StartOffset                            int64 // first offset not yet finished (acked/archived)
	Available, Acquired, Delayed, Archived int64
	OldestUnacked                          time.Time // written_at of the oldest unfinished message; zero if none
	// Deliveries counts the window's unfinished messages (available,
	// delayed and acquired) by how many times each was delivered (an
	// acquired message's count includes its current delivery); nil when
	// none is unfinished.
	Deliveries map[int32]int64
	// Counters since the consumer's state was loaded in this process:
	// messages finished without an ack (rejected,
	// out of attempts under the delete policy, or moved), messages moved
	// to the dead_letter_queue, failed move attempts and the last one's
	// error ("" if none failed).
	ArchivedTotal, DeadLettered, DeadLetterFailures int64
	DeadLetterError                                 string
}

// SharedStore is the shared-consumer part of the store. Acks, archives,
// dead-letter moves and delivery counts are synced before they are
// confirmed or shown; locks live in memory (after a restart every
// unfinished message is available again, on its next delivery count).
type SharedStore interface {
	// Acquire is AcquireAsync followed by its Wait.
	Acquire(ctx context.Context, req AcquireRequest) ([]Acquired, error)
	// AcquireAsync locks up to req.Max available messages and returns them
	// with a Wait for the durability of their delivery counts.
	AcquireAsync(ctx context.Context, req AcquireRequest) (AcquireResult, error)
	SharedAction(ctx context.Context, req SharedActionRequest) ([]SharedOutcome, error)
	// SharedActionAsync decides the outcomes at once and returns wait,
	// which blocks until they are durable; nothing may be confirmed to a
	// client before wait returned nil. It must be called exactly once.
	SharedActionAsync(ctx context.Context, req SharedActionRequest) (outs []SharedOutcome, wait func() error, err error)
	// ReleaseSession releases every lock Session holds (connection closed,
	// transaction rolled back): the messages are available again.
	ReleaseSession(topic, consumer string, session uint32, refs []MsgRef)
	// ReleaseUndelivered hands back refs that Session acquired but whose
	// rows never reached its client: available again, the delivery not
	// counted.
	ReleaseUndelivered(topic, consumer string, session uint32, refs []MsgRef)
	SharedStats(topic, consumer string) ([]SharedPartitionStats, error)
}

// WaitAcquired is SharedStore.Acquire from AcquireAsync's results: the
// messages once Wait returned nil.
func WaitAcquired(res AcquireResult, err error) ([]Acquired, error) {
	if err != nil {
		return nil, err
	}
	if err := res.Wait(); err != nil {
		return nil, err
	}
	return res.Messages, nil
}

// WaitOutcomes is SharedStore.SharedAction from SharedActionAsync's
// results: the outcomes once wait returned nil.
func WaitOutcomes(outs []SharedOutcome, wait func() error, err error) ([]SharedOutcome, error) {
	if err != nil {
		return nil, err
	}
	if err := wait(); err != nil {
		return nil, err
	}
	return outs, nil
}
