package plan

import (
	"context"
	"time"
	"topicgate/topicstore"
)

// Request is one commit (or one shared-consumer step) handed to the
// committer: its writes with their messages encoded, the positions it
// moves, its shared-consumer steps, and what the committer needs to answer
// it (Ctx, Deadline, Out). A plan reads the first; Plan and Batch.Settle
// answer on Out (buffered: sending never blocks).
type Request struct {
	Ctx    context.Context
	Writes []Write
	Pos    []topicstore.PositionUpdate
	// Fences are the request's conditions on producers (checkRequest);
	// a producer a fence holds is rewritten unchanged, expecting its
	// subject's last sequence, so another gateway's write to it in
	// between fails the batch.
	Fences []topicstore.ProducerFence
	Exact  bool    // SetPosition: the offset must lie in [start, end]
	Steps  []*Step // shared-consumer steps: a commit's acks, or one SharedStore call (shared.go)
	// Staged says the request joins staged chunks; OpenedAt is the fold
	// sequence its oldest staging opened at (a later sweep fence of this
	// gateway refuses it: fold.Swept).
	Staged   bool
	OpenedAt uint64
	Session  uint32 // the committing session, for the committer's pacing; 0: none
	// Stagings are the transactions whose staged chunks it joins.
	Stagings []uint64
	// Received is when the committer got it; Deadline is when it stops
	// trying to store it (its statement's deadline, else received plus
	// Options.CommitTimeout).
	Received, Deadline time.Time
	Out                chan Outcome
}

// Outcome is a request's answer.
type Outcome struct {
	Res topicstore.CommitResult
	Err error
}

// Write is a TopicWrite with its messages encoded; its staged
// chunks come first.
type Write struct {
	Topic  string
	Staged []topicstore.StagedChunk
	Msgs   []Msg
}

// Msg is one message of a Write, its tail encoded
// (topicstore.EncodeTail).
type Msg struct {
	Partition int32
	Producer  string
	Group     string
	SeqNo     int64
	HasSeqNo  bool
	Tail      []byte
}
