package queue

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/sharedcore"
)

// Host is what the shared consumers need of the store.
type Host interface {
	// Lock and Unlock are the store's lock: the fold's state (Config.Fold)
	// and the consumers' caches (Config.Caches) are read and changed only
	// under it.
	sync.Locker
	// Closed reports, under the lock, whether the store is closed.
	Closed() bool
	// Scan is the store's Scan: the messages of a partition's range.
	topicstore.Scanner
	// Window is each partition's acquisition window, in messages.
	Window() int64
	// NewRequest is a request to the committer on behalf of ctx's
	// statement and session, with its deadline.
	NewRequest(ctx context.Context, session uint32) *plan.Request
	// Submit hands cr to the committer and waits for its outcome (once
	// handed over, whatever cr's context does: it may commit).
	Submit(cr *plan.Request) error
}

// Config is what the shared consumers know of their gateway.
type Config struct {
	Gateway uint64             // this gateway's id: the Gateway of its lock holders
	Clock   func() time.Time   // the store's clock, which lock deadlines are compared with
	Fold    *fold.State        // the fold's state, under the host's lock
	Caches  *plan.SharedCaches // the consumers' caches, under the host's lock
}

// Queue is a gateway's shared consumers: topicstore.SharedStore, each
// call a step through the store's committer.
type Queue struct {
	cfg Config
	h   Host
	// expired counts the acquires whose locks ended before they were
	// stored (AcquireAsync).
	expired atomic.Int64
}

var _ topicstore.SharedStore = (*Queue)(nil)

// New returns the shared consumers of a store.
func New(cfg Config, h Host) *Queue {
	return &Queue{cfg: cfg, h: h}
}

// ExpiredAcquires is how many acquires found their locks ended once they
// were stored, and took their step again (topicstore.ClusterStats).
func (q *Queue) ExpiredAcquires() int64 { return q.expired.Load() }

func noWait() error { return nil }

// holder is session's lock holder on this gateway.
func (q *Queue) holder(session uint32) sharedcore.Holder {
	return sharedcore.Holder{Gateway: q.cfg.Gateway, Session: session}
}

// closed reports whether the store is closed.
func (q *Queue) closed() bool {
	q.h.Lock()
	defer q.h.Unlock()
	return q.h.Closed()
}

// Acks makes a commit's acknowledgements steps of its request (the
// store's commit calls it as it prepares one), with the consumers'
// windows loaded.
func (q *Queue) Acks(ctx context.Context, acks []topicstore.SharedAck) ([]*plan.Step, error) {
	var steps []*plan.Step
	filled := map[[2]string]bool{}
	for _, a := range acks {
		if k := [2]string{a.Topic, a.Consumer}; !filled[k] {
			filled[k] = true
			if err := q.fill(ctx, a.Topic, a.Consumer); err != nil {
				return nil, err
			}
		}
		steps = append(steps, &plan.Step{Kind: plan.StepAck, Topic: a.Topic, Consumer: a.Consumer, Holder: q.holder(a.Session), Refs: a.Refs})
	}
	return steps, nil
}

// run runs one step through the committer: the consumer's window
// loaded first, the step sent again with the bodies its dead-letter moves
// need when the plan asks for them.
func (q *Queue) run(ctx context.Context, st *plan.Step) error {
	if q.closed() {
		return topicstore.ErrClosed
	}
	if refs := q.movesAhead(st); len(refs) > 0 {
		if err := q.readBodies(ctx, st, refs); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		if err := q.fill(ctx, st.Topic, st.Consumer); err != nil {
			return err
		}
		// The step's session paces like a commit's (jetstream's pace.go):
		// a group holding a worker's acquire does not wait for that
		// worker.
		cr := q.h.NewRequest(ctx, st.Holder.Session)
		cr.Steps = []*plan.Step{st}
		err := q.h.Submit(cr)
		var nb *plan.NeedBodiesError
		if !errors.As(err, &nb) || attempt >= 3 {
			return err
		}
		if err := q.readBodies(ctx, st, nb.Refs); err != nil {
			return err
		}
	}
}
