package jetstream

import (
	"context"

	"topicgate/topicstore"
)

// The store's shared consumers (topicstore.SharedStore) are the
// subpackage queue's (jetstream/queue), each call a step through the
// committer, on the store's lock and reads through host_queue.go.

// Acquire implements topicstore.SharedStore.
func (s *Store) Acquire(ctx context.Context, req topicstore.AcquireRequest) ([]topicstore.Acquired, error) {
	return s.queue.Acquire(ctx, req)
}

// AcquireAsync implements topicstore.SharedStore.
func (s *Store) AcquireAsync(ctx context.Context, req topicstore.AcquireRequest) (topicstore.AcquireResult, error) {
	return s.queue.AcquireAsync(ctx, req)
}

// SharedAction implements topicstore.SharedStore.
func (s *Store) SharedAction(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, error) {
	return s.queue.SharedAction(ctx, req)
}

// SharedActionAsync implements topicstore.SharedStore.
func (s *Store) SharedActionAsync(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, func() error, error) {
	return s.queue.SharedActionAsync(ctx, req)
}

// ReleaseSession implements topicstore.SharedStore.
func (s *Store) ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	s.queue.ReleaseSession(topic, consumer, session, refs)
}

// ReleaseUndelivered implements topicstore.SharedStore.
func (s *Store) ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	s.queue.ReleaseUndelivered(topic, consumer, session, refs)
}

// SharedStats implements topicstore.SharedStore.
func (s *Store) SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error) {
	return s.queue.SharedStats(topic, consumer)
}

var _ topicstore.Store = (*Store)(nil)
