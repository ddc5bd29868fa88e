package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
	"errors"
	"fmt"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
)

// Starting from a snapshot: the newest one is loaded and decoded, the
// stream's non-record subjects are replayed up to its point, it is
// installed, and the fold goes on from the message after it (see
// snapshot.go for what a snapshot holds and when one is taken).

// loadSnapshot reads and decodes the stream's newest snapshot; nil when
// there is none or it cannot be used (with a warning: the gateway
// replays the stream instead).
func (s *Store) loadSnapshot(ctx context.Context) *fold.Snapshot {
	ctx, cancel := context.WithTimeout(ctx, s.snapTimeout())
	defer cancel()
	warn := func(why string, err error) *fold.Snapshot {
		s.opts.Logger.Warn("not starting from the fold's snapshot: replaying the whole stream", "stream", s.opts.Stream, "why", why, "err", err)
		return nil
	}
	obs, err := s.js.ObjectStore(ctx, s.snapBucket())
	if errors.Is(err, natsjs.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return warn("the snapshot bucket", err)
	}
	data, err := obs.GetBytes(ctx, snapObject)
	if errors.Is(err, natsjs.ErrObjectNotFound) {
		return nil
	}
	if err != nil {
		return warn("reading the snapshot (a digest mismatch is corruption)", err)
	}
	sn, err := fold.DecodeSnapshot(data)
	if err != nil {
		return warn("decoding the snapshot", err)
	}
	info := s.stream.CachedInfo()
	if info == nil || sn.Meta.Created.IsZero() || !sn.Meta.Created.Equal(info.Created) || info.State.LastSeq < sn.Meta.Seq {
		return warn("the snapshot is of another stream of that name", nil)
	}
	return sn
}

// foldFilters are the subjects of every message the fold applies but
// record batches: what a start from a snapshot replays up to it.
func (s *Store) foldFilters() []string {
	out := []string{s.subj.Of(fold.KindLease), s.subj.Of(fold.KindSnap), s.subj.Of(fold.KindNumbers), s.subj.Of(fold.KindRoles)}
	for _, k := range []string{fold.KindCatalog, fold.KindStaged, fold.KindChain, fold.KindDecision, fold.KindMember, fold.KindBeat,
		fold.KindProducer, fold.KindExpiry, fold.KindPosition, fold.KindShared, fold.KindStart} {
		out = append(out, s.subj.Filter(k))
	}
	return out
}

// startFromSnapshot starts the fold from the newest snapshot (see above)
// and returns its sequence, or 0 when there is none to start from.
func (s *Store) startFromSnapshot(ctx context.Context) (uint64, error) {
	sn := s.loadSnapshot(ctx)
	if sn == nil {
		return 0, nil
	}
	began := time.Now()
	s.mu.Lock()
	s.fold.Wide.Filtered = true
	s.mu.Unlock()
	if err := s.replayFiltered(ctx, sn.Meta.Seq); err != nil {
		return 0, err
	}
	s.mu.Lock()
	err := s.fold.Install(sn)
	if err == nil {
		s.applied = sn.Meta.Seq
	}
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	s.opts.Logger.Info("started from the fold's snapshot", "stream", s.opts.Stream, "sequence", sn.Meta.Seq, "took", time.Since(began).Round(time.Millisecond))
	return sn.Meta.Seq, nil
}

// replayFiltered folds every message up to sequence to but record
// batches (foldFilters), with an ordered consumer of its own.
func (s *Store) replayFiltered(ctx context.Context, to uint64) error {
	rctx, cancel := s.request(ctx)
	cons, err := s.stream.OrderedConsumer(rctx, natsjs.OrderedConsumerConfig{
		FilterSubjects: s.foldFilters(), HeadersOnly: true, DeliverPolicy: natsjs.DeliverAllPolicy})
	if err != nil {
		cancel()
		return s.unavailable(err)
	}
	info, err := cons.Info(rctx)
	cancel()
	if err != nil {
		return s.unavailable(err)
	}
	if info.NumPending == 0 {
		return nil
	}
	for idle := false; ; {
		// What is stored is there at once: a pull that does not wait, and
		// one that waits only after one came back empty.
		fetch := func() (natsjs.MessageBatch, error) { return cons.FetchNoWait(foldPull) }
		if idle {
			fetch = func() (natsjs.MessageBatch, error) { return cons.Fetch(foldPull, natsjs.FetchMaxWait(s.opts.Timeout)) }
		}
		batch, err := fetch()
		if err != nil {
			return s.unavailable(err)
		}
		got, done := 0, false
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil || done {
				continue
			}
			if md.Sequence.Stream > to {
				done = true
				continue
			}
			s.foldAt(md.Sequence.Stream, m.Subject(), m.Headers(), md.Timestamp, false)
			got++
			done = md.NumPending == 0
		}
		if err := batch.Error(); err != nil {
			return s.unavailable(err)
		}
		if done {
			return nil
		}
		if got == 0 && !idle {
			idle = true
			continue
		}
		idle = false
		if got == 0 {
			return fmt.Errorf("%w: replaying the stream up to its snapshot (sequence %d) made no progress", topicstore.ErrUnavailable, to)
		}
	}
}
