package pebblestore

import (
	"context"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/sequencer"
	"topicgate/topicstore/pebblestore/internal/staging"
)

// Staging by reference (topicstore.Stager) is internal/staging's: the
// open stagings, their t/ records and r/ records' recovery. The store
// gives it its failure and Commit's message check (stageHost), claims and
// settles a commit's stagings (commit.go) and writes the release of
// references retention and DROP TOPIC decide (releaseRefs).

// stageHost is what internal/staging needs of the store.
type stageHost struct{ s *PebbleStore }

var _ staging.Host = stageHost{}

func (h stageHost) Err() error { return h.s.err() }

func (h stageHost) Check(name string) (func(m *topicstore.Message) error, error) {
	t, err := h.s.lookup(name)
	if err != nil {
		return nil, err
	}
	return func(m *topicstore.Message) error { return validateMessage(t, name, m) }, nil
}

// StageBatch implements Stager.
func (s *PebbleStore) StageBatch(ctx context.Context, txnID uint64, name string, msgs []topicstore.Message) (topicstore.StagedBatch, error) {
	return s.stage.Stage(ctx, txnID, name, msgs)
}

// DiscardStaged implements Stager.
func (s *PebbleStore) DiscardStaged(txnID uint64) error { return s.stage.Discard(txnID) }

// releaseRefs writes the release of partition part's references up to
// upTo into b (committer only).
func (s *PebbleStore) releaseRefs(b *pebble.Batch, ct *sequencer.Topic, part int32, upTo int64) {
	s.coreMu.Lock()
	sets, gone := s.core.ReleaseRefs(ct, part, upTo)
	s.coreMu.Unlock()
	staging.Release(b, sets, gone)
}

// StagedStats reports the staging state (for tests and monitoring): it
// reads every staged key.
type StagedStats = staging.Stats

// StagedStats reports the staging state.
func (s *PebbleStore) StagedStats() (StagedStats, error) {
	return s.stage.Stats(func() int {
		s.coreMu.Lock()
		defer s.coreMu.Unlock()
		return len(s.core.Refs)
	})
}
