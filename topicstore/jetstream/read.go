package jetstream

import (
	"context"
	"time"

	"topicgate/topicstore"
)

// The store's reads are the subpackage reads' (jetstream/reads), on the
// store's lock and cluster I/O through host.go.

// Scan implements topicstore.Store (reads.Reads.Scan).
func (s *Store) Scan(ctx context.Context, topic string, r topicstore.ScanRange, fn func(m *topicstore.Message) bool) error {
	return s.reads.Scan(ctx, topic, r, fn)
}

// Producers implements topicstore.Store.
func (s *Store) Producers(topic string) ([]topicstore.ProducerInfo, error) {
	return s.reads.Producers(topic)
}

// Producer implements topicstore.Store.
func (s *Store) Producer(topic, producer string) (topicstore.ProducerInfo, bool) {
	return s.reads.Producer(topic, producer)
}

// Positions implements topicstore.Store.
func (s *Store) Positions(topic, consumer string) (map[int32]int64, error) {
	return s.reads.Positions(topic, consumer)
}

// StoredPositions implements topicstore.Store.
func (s *Store) StoredPositions(topic, consumer string) (map[int32]int64, error) {
	return s.reads.StoredPositions(topic, consumer)
}

// OffsetForTime implements topicstore.Store.
func (s *Store) OffsetForTime(topic string, at time.Time) (map[int32]int64, error) {
	return s.reads.OffsetForTime(topic, at)
}

// Changed implements topicstore.Store (reads.Reads.Changed).
func (s *Store) Changed(topic string) (<-chan struct{}, error) {
	return s.reads.Changed(topic)
}

// SetPosition implements topicstore.Store: an unconditional position
// commit.
func (s *Store) SetPosition(ctx context.Context, topic, consumer string, partition int32, offset int64) error {
	_, err := s.commit(ctx, &topicstore.CommitRequest{Positions: []topicstore.PositionUpdate{
		{Topic: topic, Consumer: consumer, Partition: partition, Offset: offset, Expect: -1}}}, true)
	return err
}

var _ topicstore.WrittenAter = (*Store)(nil)

// WrittenAt implements topicstore.WrittenAter from the fold's index of
// record batches (reads.Reads.WrittenAt): no read from the stream.
func (s *Store) WrittenAt(topic string, part int32, offset int64) (time.Time, bool) {
	return s.reads.WrittenAt(topic, part, offset)
}
