package jetstream

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
)

// Snapshots of the fold: a gateway starts in bounded time.
//
// A gateway's state is a fold of every message the stream holds, and the
// stream holds every record batch retention keeps: a gateway starting on
// millions of retained batches would fold millions of headers. Everything
// else the stream holds is live state (catalog records, producers,
// positions, shared-consumer states, leases: their subjects roll up or
// are purged), so only what record batches (d.<topic>.<partition>) make
// of the fold is large: each partition's index and its counters, the
// topics' writers, the initial positions consumers took from the index.
// A snapshot is exactly that part, as of one stream sequence S.
//
// Writing one (maybeSnapshot, by the maintenance lease holder once the
// stream has grown by Options.SnapshotEvery messages since the last):
//
//  1. it publishes a point message on <prefix>.n; its sequence is S. Every
//     gateway folding it computes a digest of its own state at S
//     (foldDigest: the catalog and the partitions' record batches), and the
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

// Headers of <prefix>.n messages.
const (
	hSnap     = "Tg-Snap"      // "point" or "done"
	hSnapSeq  = "Tg-Snap-Seq"  // done: the point's sequence
	hSnapHash = "Tg-Snap-Hash" // done: the writer's digest at the point (hex)
)

// snapVersion is the snapshot format this gateway writes and reads; a
// gateway that finds a newer one replays the stream instead.
const snapVersion = 1

// snapMagic opens every snapshot.
var snapMagic = []byte("TGSNAP")

// snapObject is the snapshot's name in its bucket.
const snapObject = "fold"

// DefaultSnapshotEvery is Options.SnapshotEvery's default.
const DefaultSnapshotEvery = 200_000

// errSnapshotUnusable: the snapshot does not fit the catalog; Open starts
// again without it.
var errSnapshotUnusable = errors.New("the fold's snapshot does not fit the stream")

// snapState is what the fold knows of snapshots, under s.mu.
type snapState struct {
	point  uint64 // the last point folded
	digest uint64 // this gateway's foldDigest at point
	last   uint64 // the sequence the newest snapshot covers (its done folded)
	lastAt time.Time
	from   uint64 // the snapshot this gateway started from (0: none)
}

// snapCapture is the snapshot this gateway writes, under s.mu.
type snapCapture struct {
	capture bool   // this gateway wrote point and wants its encoding there
	encoded []byte // the encoding at point (capture)
}

// snapSubject is the subject of snapshot points and notices.
func (s *Store) snapSubject() string { return s.prefix + ".n" }

// snapBucket is the object store bucket of the stream's snapshots.
func (s *Store) snapBucket() string { return "TG_SNAP_" + s.opts.Stream }

// applySnap folds a point or a done message. It runs under s.mu.
func (f *foldState) applySnap(h nats.Header, seq uint64, ts time.Time) {
	switch h.Get(hSnap) {
	case "point":
		f.snap.point, f.snap.digest = seq, f.foldDigest(ts)
		f.hooks.snapPoint(seq, h.Get(hHolder), f.snap.digest)
	case "done":
		at, _ := strconv.ParseUint(h.Get(hSnapSeq), 10, 64)
		want, _ := strconv.ParseUint(h.Get(hSnapHash), 16, 64)
		f.snap.last, f.snap.lastAt = at, time.Now()
		if at == f.snap.point && at != 0 && want != f.snap.digest {
			f.hooks.snapMismatch(at, f.snap.digest, want)
		}
	}
}

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
		s.snapOut.encoded, s.snapOut.capture = s.fold.encodeSnapshot(s.opts.Stream, created, seq, digest), false
	}
}

// snapMismatch reports that this gateway's fold differs from the
// snapshot writer's at sequence at (a fold hook).
func (s *Store) snapMismatch(at, digest, want uint64) {
	s.snapMismatches.Add(1)
	s.opts.Logger.Error("this gateway's state differs from the snapshot writer's at the same stream sequence: the gateways disagree on what the stream holds",
		"stream", s.opts.Stream, "sequence", at, "digest", strconv.FormatUint(digest, 16), "writer", strconv.FormatUint(want, 16))
}

// foldDigest hashes what every gateway that folded the same messages
// holds alike at the same stream sequence: the catalog and each
// partition's offsets, counters and record batches (a running sum of
// their hashes, recHash). Producers, positions and retention starts are
// left out: their subjects roll up, and a fold a moment behind skips a
// message a later one rolled up, holding the state before it until it
// folds the later one (the simulation found it: TestSimCommitProtocol's
// verifyDigests); record batches and catalog records are not rolled up.
// at is the point's stream time (unused: kept for a check by time). It
// runs under s.mu.
func (f *foldState) foldDigest(at time.Time) uint64 {
	_ = at
	h := fnv.New64a()
	var b []byte
	ids := make([]uint64, 0, len(f.byID))
	for id := range f.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		t := f.byID[id]
		b = binary.AppendUvarint(b[:0], id)
		b = binary.AppendUvarint(b, t.catSeq)
		for _, ps := range t.parts {
			b = binary.AppendVarint(b, ps.start)
			b = binary.AppendVarint(b, ps.end)
			b = binary.AppendVarint(b, ps.bytes)
			b = binary.AppendVarint(b, ps.retained)
			b = binary.AppendUvarint(b, ps.lastSeq)
			b = binary.AppendUvarint(b, uint64(len(ps.recs)))
			b = binary.AppendUvarint(b, ps.sum)
		}
		h.Write(b)
	}
	return h.Sum64()
}

// recHash is one record batch's share of its partition's digest: the
// partition keeps the sum of its batches' hashes, added as a batch comes
// and subtracted as retention removes it, so the digest costs nothing per
// batch.
func recHash(r recIdx) uint64 {
	x := r.seq*0x9e3779b97f4a7c15 ^ uint64(r.base)*0xbf58476d1ce4e5b9 ^ uint64(r.count())*0x94d049bb133111eb ^
		uint64(r.writtenAt)*0xd6e8feb86659fd93 ^ uint64(r.bytes())*0xa0761d6478bd642f
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	return x
}

// snapMeta is a snapshot's small part (JSON); its record batches follow
// it in binary, topic by topic and partition by partition in its order.
type snapMeta struct {
	Stream  string      `json:"stream"`
	Created time.Time   `json:"created"` // the stream's: one of the same name made again is another
	Seq     uint64      `json:"seq"`
	Digest  string      `json:"digest"`
	Topics  []snapTopic `json:"topics"`
	Intents []snapIntnt `json:"intents,omitempty"`
	// Done lists the decided wide transactions not retired at Seq, with
	// their record-batch intents (wide_retire.go); DoneListed says the
	// snapshot lists them (one written before it does not).
	Done       []snapDone `json:"done,omitempty"`
	DoneListed bool       `json:"done_listed,omitempty"`
}

// snapDone is a decided wide transaction whose decision is not retired.
type snapDone struct {
	Gw      string      `json:"gw"`
	N       uint64      `json:"n"`
	Intents []snapIntnt `json:"intents,omitempty"` // its record-batch intents
}

type snapTopic struct {
	ID      uint64                     `json:"id"`
	Parts   []snapPart                 `json:"parts"`
	Writers map[string]int64           `json:"writers,omitempty"` // unix micros
	Initial map[string]map[int32]int64 `json:"initial,omitempty"`
}

type snapPart struct {
	Start     int64                  `json:"start"`
	End       int64                  `json:"end"`
	Bytes     int64                  `json:"bytes"`
	LastSeq   uint64                 `json:"last_seq"`
	StartSeq  uint64                 `json:"start_seq"`
	CutSeq    uint64                 `json:"cut_seq,omitempty"`
	LastWrite int64                  `json:"last_write,omitempty"` // unix micros; 0: never
	Bucket    topicstore.WriteBucket `json:"bucket"`
	Meter     *topicstore.WriteMeter `json:"meter,omitempty"`
	Recs      int                    `json:"recs"`
}

// snapIntnt is a record-batch intent of a wide transaction open at the
// snapshot's sequence.
type snapIntnt struct {
	Subject string      `json:"subject"`
	Seq     uint64      `json:"seq"`
	Header  nats.Header `json:"header"`
}

// encodeSnapshot encodes the record-batch part of the fold at seq (see
// above). It runs under s.mu.
func (f *foldState) encodeSnapshot(stream string, created time.Time, seq, digest uint64) []byte {
	meta := snapMeta{Stream: stream, Created: created, Seq: seq, Digest: strconv.FormatUint(digest, 16)}
	ids := make([]uint64, 0, len(f.byID))
	for id := range f.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	n := 0
	for _, id := range ids {
		t := f.byID[id]
		st := snapTopic{ID: id, Writers: map[string]int64{}, Initial: t.initial}
		for gw, at := range t.writers {
			st.Writers[gw] = at.UnixMicro()
		}
		for _, ps := range t.parts {
			sp := snapPart{Start: ps.start, End: ps.end, Bytes: ps.bytes, LastSeq: ps.lastSeq, StartSeq: ps.startSeq, CutSeq: ps.cutSeq,
				Bucket: ps.bucket, Meter: ps.meter, Recs: len(ps.recs)}
			if !ps.lastWrite.IsZero() {
				sp.LastWrite = ps.lastWrite.UnixMicro()
			}
			n += len(ps.recs)
			st.Parts = append(st.Parts, sp)
		}
		meta.Topics = append(meta.Topics, st)
	}
	for _, x := range f.wide.open {
		for _, in := range x.intents {
			if strings.HasPrefix(in.subject, f.prefix+".d.") {
				meta.Intents = append(meta.Intents, snapIntnt{Subject: in.subject, Seq: in.seq, Header: in.h})
			}
		}
	}
	meta.DoneListed = true
	for _, d := range f.wide.done {
		sd := snapDone{Gw: d.gw, N: d.n}
		for _, in := range d.intents {
			if strings.HasPrefix(in.subject, f.prefix+".d.") {
				sd.Intents = append(sd.Intents, snapIntnt{Subject: in.subject, Seq: in.seq, Header: in.h})
			}
		}
		meta.Done = append(meta.Done, sd)
	}
	sort.Slice(meta.Done, func(i, j int) bool {
		if meta.Done[i].Gw != meta.Done[j].Gw {
			return meta.Done[i].Gw < meta.Done[j].Gw
		}
		return meta.Done[i].N < meta.Done[j].N
	})
	js, _ := json.Marshal(meta) // plain data: it cannot fail
	out := make([]byte, 0, len(js)+n*12+32)
	out = append(out, snapMagic...)
	out = binary.AppendUvarint(out, snapVersion)
	out = binary.AppendUvarint(out, uint64(len(js)))
	out = append(out, js...)
	for _, id := range ids {
		for _, ps := range f.byID[id].parts {
			var prevSeq uint64
			var prevAt int64
			for _, r := range ps.recs {
				out = binary.AppendUvarint(out, r.seq-prevSeq)
				out = binary.AppendVarint(out, r.base)
				out = binary.AppendVarint(out, r.count())
				out = binary.AppendVarint(out, r.writtenAt-prevAt)
				out = binary.AppendVarint(out, r.bytes())
				out = binary.AppendUvarint(out, ps.refs[r.seq])
				prevSeq, prevAt = r.seq, r.writtenAt
			}
		}
	}
	return out
}

// snapshot is a decoded snapshot.
type snapshot struct {
	meta snapMeta
	recs [][][]recIdx          // by topic, by partition (meta's order)
	refs [][]map[uint64]uint64 // their reference records' staged messages, by record sequence
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
	for _, t := range s.fold.byID {
		for _, ps := range t.parts {
			recs += len(ps.recs)
		}
	}
	since := s.applied - min(s.fold.snap.last, s.applied)
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
	m := nats.NewMsg(s.snapSubject())
	m.Header.Set(hSnap, "point")
	m.Header.Set(hHolder, s.stage.gw)
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
	data, point, digest := s.snapOut.encoded, s.fold.snap.point, s.fold.snap.digest
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
	d := nats.NewMsg(s.snapSubject())
	d.Header.Set(hSnap, "done")
	d.Header.Set(hSnapSeq, strconv.FormatUint(point, 10))
	d.Header.Set(hSnapHash, strconv.FormatUint(digest, 16))
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
