package jetstream

import (
	"context"
	"fmt"

	"topicgate/topicstore"
)

// Shared consumers (message locks, acks, delivery counts, dead letters)
// are not built on this backend yet: every operation answers
// ErrUnsupported (0A000), and the contract suite runs with the shared
// consumer part unclaimed.

func errShared(what string) error {
	return fmt.Errorf("%w: shared consumers (%s) on the NATS JetStream store", topicstore.ErrUnsupported, what)
}

// Acquire implements topicstore.SharedStore.
func (s *Store) Acquire(ctx context.Context, req topicstore.AcquireRequest) ([]topicstore.Acquired, error) {
	return nil, errShared("acquire")
}

// AcquireAsync implements topicstore.SharedStore.
func (s *Store) AcquireAsync(ctx context.Context, req topicstore.AcquireRequest) (topicstore.AcquireResult, error) {
	return topicstore.AcquireResult{}, errShared("acquire")
}

// SharedAction implements topicstore.SharedStore.
func (s *Store) SharedAction(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, error) {
	return nil, errShared("acknowledge, release, reject, extend")
}

// SharedActionAsync implements topicstore.SharedStore.
func (s *Store) SharedActionAsync(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, func() error, error) {
	return nil, nil, errShared("acknowledge, release, reject, extend")
}

// ReleaseSession implements topicstore.SharedStore: there is nothing to
// release.
func (s *Store) ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef) {}

// ReleaseUndelivered implements topicstore.SharedStore.
func (s *Store) ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
}

// SharedStats implements topicstore.SharedStore.
func (s *Store) SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error) {
	return nil, errShared("statistics")
}

var _ topicstore.Store = (*Store)(nil)
