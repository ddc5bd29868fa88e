package jetstream

import (
	"context"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/jetstream/queue"
)

// What the shared consumers (jetstream/queue) need of the store beyond
// the lock host.go gives every room: its reads, its window and its
// committer, so that a step is planned and published with the commits
// (and in the simulation run where the simulation says: Store.inline).

var _ queue.Host = host{}

func (h host) Scan(ctx context.Context, topic string, r topicstore.ScanRange, fn func(m *topicstore.Message) bool) error {
	return h.s.Scan(ctx, topic, r, fn)
}

func (h host) Window() int64 { return h.s.shWindow() }

func (h host) NewRequest(ctx context.Context, session uint32) *plan.Request {
	return h.s.newRequest(ctx, session)
}

// Submit hands a step's request to the committer and waits for it (once
// handed over, whatever its context does: it may commit).
func (h host) Submit(cr *plan.Request) error {
	s := h.s
	if s.inline != nil {
		s.inline(cr)
		return (<-cr.Out).Err
	}
	select {
	case <-s.done:
		return topicstore.ErrClosed
	case s.commits <- cr:
		return (<-cr.Out).Err
	}
}
