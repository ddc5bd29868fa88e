package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Snapshots of the fold: a gateway starts in bounded time.
//
// A gateway's state is a fold of every message the stream holds, and the
// stream holds every record batch retention keeps: a gateway starting on
// millions of retained batches would fold millions of headers. Everything
// else the stream holds is live state (catalog records, producers,
// positions, shared-consumer states, leases, the role catalog: their
// subjects roll up or are purged, and a start from a snapshot replays
// them, foldFilters), so only what record batches (d.<topic>.<partition>) make
// of the fold is large: each partition's index and its counters, the
// topics' writers, the initial positions consumers took from the index.
// A snapshot is exactly that part, as of one stream sequence S.
//
// Writing one (maybeSnapshot, by the maintenance lease holder once the
// stream has grown by Options.SnapshotEvery messages since the last):
//
//  1. it publishes a point message on <prefix>.n; its sequence is S. Every
//     gateway folding it computes a digest of its own state at S
//     (fold.State.Digest: the catalog and the partitions' record batches), and the
//     writer also encodes its record-batch state there, under the fold's
//     lock, so both are of S exactly;
//  2. it stores the encoding in the JetStream object store bucket
//     TG_SNAP_<stream> (object "fold": the newest replaces the one
//     before; the object store checks a SHA-256 digest on every read);
//  3. it publishes a done message on <prefix>.n naming S and the digest.
//     Every gateway that folded the point compares its own digest with it
//     and reports a difference loudly: an error log and
//     topicgate_cluster_snapshot_mismatches_total, since two gateways
//     that folded the same messages must hold the same state.
//
// Starting from one (startFold): the gateway reads the object (any error,
// a digest that does not match, or a format version it does not know: a
// warning and a full replay), folds every message up to S but record
// batches through an ordered consumer filtered on the other subjects (the
// server skips the record batches' blocks), installs the snapshot's
// record-batch state (but a topic dropped since, whose tombstone rolled
// its creation up), and folds the stream from S+1 on as always. A
// snapshot that does not fit what the catalog says at S (another number
// of partitions, a topic it lacks) is not used: the gateway starts again
// with a full replay, with a warning. Record batches retention purged
// after S are in the snapshot and leave the index at the retention start
// message that purged them, which comes after S; a wide transaction open
// at S has its record-batch intents in the snapshot.

// snapObject is the snapshot's name in its bucket.
const snapObject = "fold"

// DefaultSnapshotEvery is Options.SnapshotEvery's default.
const DefaultSnapshotEvery = 200_000

// snapCapture is the snapshot this gateway writes, under s.mu.
type snapCapture struct {
	capture bool   // this gateway wrote point and wants its encoding there
	encoded []byte // the encoding at point (capture)
}

// snapBucket is the object store bucket of the stream's snapshots.
func (s *Store) snapBucket() string { return "TG_SNAP_" + s.opts.Stream }

// snapPoint encodes the fold at the point this gateway wrote, seq, for
// writeSnapshot (a fold hook). It runs under s.mu.
func (s *Store) snapPoint(seq uint64, holder string, digest uint64) {
	if s.snapOut.capture && holder == s.stage.gw {
		var created time.Time
		if s.stream != nil {
			if info := s.stream.CachedInfo(); info != nil {
				created = info.Created
			}
		}
		s.snapOut.encoded, s.snapOut.capture = s.fold.EncodeSnapshot(s.opts.Stream, created, seq, digest), false
	}
}

// snapMismatch reports that this gateway's fold differs from the
// snapshot writer's at sequence at (a fold hook).
func (s *Store) snapMismatch(at, digest, want uint64) {
	s.snapMismatches.Add(1)
	s.opts.Logger.Error("this gateway's state differs from the snapshot writer's at the same stream sequence: the gateways disagree on what the stream holds",
		"stream", s.opts.Stream, "sequence", at, "digest", strconv.FormatUint(digest, 16), "writer", strconv.FormatUint(want, 16))
}

// snapTimeout bounds reading or writing one snapshot: tens of megabytes
// for millions of retained batches, longer than one request's timeout.
func (s *Store) snapTimeout() time.Duration { return max(s.opts.Timeout, time.Minute) }

// maybeSnapshot writes a snapshot when the stream has grown by
// Options.SnapshotEvery messages since the last one, and by a quarter of
// the record batches the fold holds. The maintenance lease holder calls
// it.
func (s *Store) maybeSnapshot(ctx context.Context) error {
	every := s.opts.SnapshotEvery
	if every == 0 {
		every = DefaultSnapshotEvery
	}
	if every < 0 {
		return nil
	}
	s.mu.Lock()
	// A snapshot costs in proportion to the batches it holds: one is
	// written once the stream grew by a quarter of them too, so that
	// writing snapshots costs a bounded share of what folding does.
	var recs int
	for _, t := range s.fold.ByID {
		for _, ps := range t.Parts {
			recs += len(ps.Recs)
		}
	}
	since := s.applied - min(s.fold.Snap.Last, s.applied)
	due := since >= uint64(every) && since >= uint64(recs/4)
	s.mu.Unlock()
	if !due {
		return nil
	}
	return s.writeSnapshot(ctx)
}

// writeSnapshot writes a snapshot of the fold at a point it publishes
// (see above).
func (s *Store) writeSnapshot(ctx context.Context) error {
	s.mu.Lock()
	s.snapOut.capture, s.snapOut.encoded = true, nil
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.snapOut.capture, s.snapOut.encoded = false, nil
		s.mu.Unlock()
	}()
	m := nats.NewMsg(s.subj.Of(fold.KindSnap))
	m.Header.Set(fold.HSnap, "point")
	m.Header.Set(fold.HHolder, s.stage.gw)
	m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	rctx, cancel := s.request(ctx)
	ack, err := s.js.PublishMsg(rctx, m)
	cancel()
	if err != nil {
		return fmt.Errorf("publishing a snapshot point: %w", s.unavailable(err))
	}
	if err := s.waitApplied(ctx, ack.Sequence); err != nil {
		return err
	}
	s.mu.Lock()
	data, point, digest := s.snapOut.encoded, s.fold.Snap.Point, s.fold.Snap.Digest
	s.mu.Unlock()
	if data == nil || point != ack.Sequence {
		return fmt.Errorf("the fold did not capture the snapshot point at sequence %d", ack.Sequence)
	}
	ctx, cancel = context.WithTimeout(ctx, s.snapTimeout())
	defer cancel()
	obs, err := s.js.CreateOrUpdateObjectStore(ctx, natsjs.ObjectStoreConfig{Bucket: s.snapBucket(), Replicas: s.opts.Replicas,
		Storage: natsjs.FileStorage, Description: "topicgate: snapshots of the fold of stream " + s.opts.Stream})
	if err != nil {
		return fmt.Errorf("the snapshot bucket: %w", s.unavailable(err))
	}
	if _, err := obs.PutBytes(ctx, snapObject, data); err != nil {
		return fmt.Errorf("storing a snapshot of %d bytes: %w", len(data), s.unavailable(err))
	}
	d := nats.NewMsg(s.subj.Of(fold.KindSnap))
	d.Header.Set(fold.HSnap, "done")
	d.Header.Set(fold.HSnapSeq, strconv.FormatUint(point, 10))
	d.Header.Set(fold.HSnapHash, strconv.FormatUint(digest, 16))
	d.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	rctx, cancel = s.request(ctx)
	defer cancel()
	dack, err := s.js.PublishMsg(rctx, d)
	if err != nil {
		return fmt.Errorf("publishing a snapshot's notice: %w", s.unavailable(err))
	}
	s.snapWritten.Add(1)
	return s.waitApplied(ctx, dack.Sequence)
}
