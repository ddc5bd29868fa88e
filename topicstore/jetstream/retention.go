package jetstream

import (
	"context"
	"time"

	"topicgate/topicstore/jetstream/catalog"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/retain"
)

// RunRetention implements topicstore.Store: the subpackage retain moves
// the partitions' starts and purges what is below them
// (retain.Retention.Run, on the store's lock and cluster I/O through
// host.go); then it marks deleted the partitions retention drained (a
// catalog change), purges what dropped topics left (jetstream/catalog:
// PurgeLeftovers) and compacts and removes the producers expired at now
// (producers.go).
func (s *Store) RunRetention(ctx context.Context, now time.Time) (int64, error) {
	deleted, err := s.retain.Run(ctx, now)
	if err != nil {
		return deleted, err
	}
	if err := s.retireDrained(ctx); err != nil {
		return deleted, err
	}
	if err := s.catalog.PurgeLeftovers(ctx, now); err != nil {
		return deleted, err
	}
	if _, err := s.compactProducers(ctx, now); err != nil {
		return deleted, err
	}
	_, err = s.expireProducers(ctx, now)
	return deleted, err
}

// retireDrained marks deleted the inactive partitions that retention
// emptied and that every consumer with a stored position has read to
// their end (a layout change, as in the embedded store).
func (s *Store) retireDrained(ctx context.Context) error {
	s.mu.Lock()
	var names []string
	for name, t := range s.fold.ByName {
		if retain.Drained(t) != nil {
			names = append(names, name)
		}
	}
	s.mu.Unlock()
	for _, name := range names {
		err := s.catalog.Change(ctx, name, func(old *fold.Topic) (*fold.CatalogRec, error) {
			if old == nil {
				return nil, catalog.ErrNothing // dropped meanwhile; nil would be a drop
			}
			d := retain.Drained(old)
			if d == nil {
				return nil, catalog.ErrNothing
			}
			rec := old.Rec
			rec.Layout = old.Rec.Layout.Clone()
			for _, p := range d {
				rec.Layout.Parts[p].Deleted = true
			}
			return &rec, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
