package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
)

// Starting from a snapshot: the newest one is loaded and decoded, the
// stream's non-record subjects are replayed up to its point, it is
// installed, and the fold goes on from the message after it (see
// write.go for what a snapshot holds and when one is taken).

// load reads and decodes the stream's newest snapshot; nil when
// there is none or it cannot be used (with a warning: the gateway
// replays the stream instead).
func (sn *Snapshots) load(ctx context.Context) *fold.Snapshot {
	ctx, cancel := context.WithTimeout(ctx, sn.timeout())
	defer cancel()
	warn := func(why string, err error) *fold.Snapshot {
		sn.cfg.Logger.Warn("not starting from the fold's snapshot: replaying the whole stream", "stream", sn.cfg.Stream, "why", why, "err", err)
		return nil
	}
	obs, err := sn.host.JetStream().ObjectStore(ctx, sn.Bucket())
	if errors.Is(err, natsjs.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return warn("the snapshot bucket", err)
	}
	data, err := obs.GetBytes(ctx, Object)
	if errors.Is(err, natsjs.ErrObjectNotFound) {
		return nil
	}
	if err != nil {
		return warn("reading the snapshot (a digest mismatch is corruption)", err)
	}
	snap, err := fold.DecodeSnapshot(data)
	if err != nil {
		return warn("decoding the snapshot", err)
	}
	info := sn.host.Stream().CachedInfo()
	if info == nil || snap.Meta.Created.IsZero() || !snap.Meta.Created.Equal(info.Created) || info.State.LastSeq < snap.Meta.Seq {
		return warn("the snapshot is of another stream of that name", nil)
	}
	return snap
}

// filters are the subjects of every message the fold applies but
// record batches: what a start from a snapshot replays up to it.
func (sn *Snapshots) filters() []string {
	subj := sn.cfg.Subjects
	out := []string{subj.Of(fold.KindLease), subj.Of(fold.KindSnap), subj.Of(fold.KindNumbers), subj.Of(fold.KindRoles)}
	for _, k := range []string{fold.KindCatalog, fold.KindStaged, fold.KindChain, fold.KindDecision, fold.KindMember, fold.KindBeat,
		fold.KindProducer, fold.KindExpiry, fold.KindPosition, fold.KindShared, fold.KindStart} {
		out = append(out, subj.Filter(k))
	}
	return out
}

// Start starts the fold from the newest snapshot (see above) and returns
// its sequence, or 0 when there is none to start from.
func (sn *Snapshots) Start(ctx context.Context) (uint64, error) {
	snap := sn.load(ctx)
	if snap == nil {
		return 0, nil
	}
	began := time.Now()
	h := sn.host
	h.Lock()
	sn.cfg.Fold.Wide.Filtered = true
	h.Unlock()
	if err := sn.replay(ctx, snap.Meta.Seq); err != nil {
		return 0, err
	}
	h.Lock()
	err := sn.cfg.Fold.Install(snap)
	if err == nil {
		h.SetApplied(snap.Meta.Seq)
	}
	h.Unlock()
	if err != nil {
		return 0, err
	}
	sn.cfg.Logger.Info("started from the fold's snapshot", "stream", sn.cfg.Stream, "sequence", snap.Meta.Seq, "took", time.Since(began).Round(time.Millisecond))
	return snap.Meta.Seq, nil
}

// replay folds every message up to sequence to but record batches
// (filters), with an ordered consumer of its own.
func (sn *Snapshots) replay(ctx context.Context, to uint64) error {
	h := sn.host
	rctx, cancel := sn.request(ctx)
	cons, err := h.Stream().OrderedConsumer(rctx, natsjs.OrderedConsumerConfig{
		FilterSubjects: sn.filters(), HeadersOnly: true, DeliverPolicy: natsjs.DeliverAllPolicy})
	if err != nil {
		cancel()
		return h.Unavailable(err)
	}
	info, err := cons.Info(rctx)
	cancel()
	if err != nil {
		return h.Unavailable(err)
	}
	if info.NumPending == 0 {
		return nil
	}
	for idle := false; ; {
		// What is stored is there at once: a pull that does not wait, and
		// one that waits only after one came back empty.
		fetch := func() (natsjs.MessageBatch, error) { return cons.FetchNoWait(sn.cfg.Pull) }
		if idle {
			fetch = func() (natsjs.MessageBatch, error) {
				return cons.Fetch(sn.cfg.Pull, natsjs.FetchMaxWait(sn.cfg.Timeout))
			}
		}
		batch, err := fetch()
		if err != nil {
			return h.Unavailable(err)
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
			h.FoldAt(md.Sequence.Stream, m.Subject(), m.Headers(), md.Timestamp)
			got++
			done = md.NumPending == 0
		}
		if err := batch.Error(); err != nil {
			return h.Unavailable(err)
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
