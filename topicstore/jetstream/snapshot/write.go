package snapshot

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/fold"
)

// Snapshots of the fold: a gateway starts in bounded time.
//
// A gateway's state is a fold of every message the stream holds, and the
// stream holds every record batch retention keeps: a gateway starting on
// millions of retained batches would fold millions of headers. Everything
// else the stream holds is live state (catalog records, producers,
// positions, shared-consumer states, leases, the role catalog: their
// subjects roll up or are purged, and a start from a snapshot replays
// them, filters), so only what record batches (d.<topic>.<partition>) make
// of the fold is large: each partition's index and its counters, the
// topics' writers, the initial positions consumers took from the index.
// A snapshot is exactly that part, as of one stream sequence S.
//
// Writing one (Maybe, by the maintenance lease holder once the stream has
// grown by Config.Every messages since the last):
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
// Starting from one (Start, from the store's start of its fold): the
// gateway reads the object (any error, a digest that does not match, or a
// format version it does not know: a warning and a full replay), folds
// every message up to S but record batches through an ordered consumer
// filtered on the other subjects (the server skips the record batches'
// blocks), installs the snapshot's
// record-batch state (but a topic dropped since, whose tombstone rolled
// its creation up), and folds the stream from S+1 on as always. A
// snapshot that does not fit what the catalog says at S (another number
// of partitions, a topic it lacks) is not used: the gateway starts again
// with a full replay, with a warning. Record batches retention purged
// after S are in the snapshot and leave the index at the retention start
// message that purged them, which comes after S; a wide transaction open
// at S has its record-batch intents in the snapshot.

// Object is the snapshot's name in its bucket.
const Object = "fold"

// DefaultEvery is Config.Every's default.
const DefaultEvery = 200_000

// Config is what the snapshots need to know: this gateway's id, the
// stream's name (its bucket's is TG_SNAP_<stream>) and replicas, its
// subjects and the fold, how many messages make a snapshot due
// (DefaultEvery when 0, never when negative), one request's timeout, how
// many messages a pull of the replay asks for, and the logger.
type Config struct {
	Gateway  string
	Stream   string
	Replicas int
	Subjects fold.Subjects
	Fold     *fold.State // read and changed under the host's lock
	Every    int
	Timeout  time.Duration
	Pull     int
	Logger   *slog.Logger
}

// Host is what the snapshots need of the store: its lock, under which
// the fold (Config.Fold) and the sequence it applied are read and
// changed; applying one message of the replay to the fold; waiting until
// the fold applied a sequence; the store's judgement of a cluster error;
// and its JetStream handles (the snapshots' bucket is an object store
// beside the stream, and the replay an ordered consumer of its own).
type Host interface {
	Lock()
	Unlock()
	Applied() uint64       // under the lock: the highest sequence folded
	SetApplied(seq uint64) // under the lock: the fold is installed as of seq
	FoldAt(seq uint64, subject string, h nats.Header, ts time.Time)
	WaitApplied(ctx context.Context, seq uint64) error
	Unavailable(err error) error
	JetStream() natsjs.JetStream
	Stream() natsjs.Stream // nil before the stream is opened
}

// Snapshots writes the fold's snapshots and starts a gateway from the
// newest one.
type Snapshots struct {
	cfg  Config
	host Host

	// Under the host's lock: this gateway wrote the point and wants its
	// encoding there (capture), and the encoding at the point.
	capture bool
	encoded []byte

	mismatches atomic.Int64
	written    atomic.Int64
}

// New returns the snapshots of the stream cfg names, on h.
func New(cfg Config, h Host) *Snapshots { return &Snapshots{cfg: cfg, host: h} }

// Bucket is the object store bucket of the stream's snapshots.
func (sn *Snapshots) Bucket() string { return "TG_SNAP_" + sn.cfg.Stream }

// Written is how many snapshots this gateway wrote.
func (sn *Snapshots) Written() int64 { return sn.written.Load() }

// Mismatches is how many snapshot points found this gateway's fold
// differing from the writer's.
func (sn *Snapshots) Mismatches() int64 { return sn.mismatches.Load() }

// Point encodes the fold at the point this gateway wrote, seq, for Write
// (a fold hook). It runs under the host's lock.
func (sn *Snapshots) Point(seq uint64, holder string, digest uint64) {
	if sn.capture && holder == sn.cfg.Gateway {
		var created time.Time
		if st := sn.host.Stream(); st != nil {
			if info := st.CachedInfo(); info != nil {
				created = info.Created
			}
		}
		sn.encoded, sn.capture = sn.cfg.Fold.EncodeSnapshot(sn.cfg.Stream, created, seq, digest), false
	}
}

// Mismatch reports that this gateway's fold differs from the snapshot
// writer's at sequence at (a fold hook).
func (sn *Snapshots) Mismatch(at, digest, want uint64) {
	sn.mismatches.Add(1)
	sn.cfg.Logger.Error("this gateway's state differs from the snapshot writer's at the same stream sequence: the gateways disagree on what the stream holds",
		"stream", sn.cfg.Stream, "sequence", at, "digest", strconv.FormatUint(digest, 16), "writer", strconv.FormatUint(want, 16))
}

// timeout bounds reading or writing one snapshot: tens of megabytes for
// millions of retained batches, longer than one request's timeout.
func (sn *Snapshots) timeout() time.Duration { return max(sn.cfg.Timeout, time.Minute) }

// request bounds one request to the cluster by the store's timeout.
func (sn *Snapshots) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, sn.cfg.Timeout)
}

// Maybe writes a snapshot when the stream has grown by Config.Every
// messages since the last one, and by a quarter of the record batches
// the fold holds. The maintenance lease holder calls it.
func (sn *Snapshots) Maybe(ctx context.Context) error {
	every := sn.cfg.Every
	if every == 0 {
		every = DefaultEvery
	}
	if every < 0 {
		return nil
	}
	sn.host.Lock()
	// A snapshot costs in proportion to the batches it holds: one is
	// written once the stream grew by a quarter of them too, so that
	// writing snapshots costs a bounded share of what folding does.
	var recs int
	for _, t := range sn.cfg.Fold.ByID {
		for _, ps := range t.Parts {
			recs += len(ps.Recs)
		}
	}
	applied := sn.host.Applied()
	since := applied - min(sn.cfg.Fold.Snap.Last, applied)
	due := since >= uint64(every) && since >= uint64(recs/4)
	sn.host.Unlock()
	if !due {
		return nil
	}
	return sn.Write(ctx)
}

// Write writes a snapshot of the fold at a point it publishes (see
// above).
func (sn *Snapshots) Write(ctx context.Context) error {
	h, js := sn.host, sn.host.JetStream()
	h.Lock()
	sn.capture, sn.encoded = true, nil
	h.Unlock()
	defer func() {
		h.Lock()
		sn.capture, sn.encoded = false, nil
		h.Unlock()
	}()
	m := nats.NewMsg(sn.cfg.Subjects.Of(fold.KindSnap))
	m.Header.Set(fold.HSnap, "point")
	m.Header.Set(fold.HHolder, sn.cfg.Gateway)
	m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	rctx, cancel := sn.request(ctx)
	ack, err := js.PublishMsg(rctx, m)
	cancel()
	if err != nil {
		return fmt.Errorf("publishing a snapshot point: %w", h.Unavailable(err))
	}
	if err := h.WaitApplied(ctx, ack.Sequence); err != nil {
		return err
	}
	h.Lock()
	data, point, digest := sn.encoded, sn.cfg.Fold.Snap.Point, sn.cfg.Fold.Snap.Digest
	h.Unlock()
	if data == nil || point != ack.Sequence {
		return fmt.Errorf("the fold did not capture the snapshot point at sequence %d", ack.Sequence)
	}
	ctx, cancel = context.WithTimeout(ctx, sn.timeout())
	defer cancel()
	obs, err := js.CreateOrUpdateObjectStore(ctx, natsjs.ObjectStoreConfig{Bucket: sn.Bucket(), Replicas: sn.cfg.Replicas,
		Storage: natsjs.FileStorage, Description: "topicgate: snapshots of the fold of stream " + sn.cfg.Stream})
	if err != nil {
		return fmt.Errorf("the snapshot bucket: %w", h.Unavailable(err))
	}
	if _, err := obs.PutBytes(ctx, Object, data); err != nil {
		return fmt.Errorf("storing a snapshot of %d bytes: %w", len(data), h.Unavailable(err))
	}
	d := nats.NewMsg(sn.cfg.Subjects.Of(fold.KindSnap))
	d.Header.Set(fold.HSnap, "done")
	d.Header.Set(fold.HSnapSeq, strconv.FormatUint(point, 10))
	d.Header.Set(fold.HSnapHash, strconv.FormatUint(digest, 16))
	d.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	rctx, cancel = sn.request(ctx)
	defer cancel()
	dack, err := js.PublishMsg(rctx, d)
	if err != nil {
		return fmt.Errorf("publishing a snapshot's notice: %w", h.Unavailable(err))
	}
	sn.written.Add(1)
	return h.WaitApplied(ctx, dack.Sequence)
}
