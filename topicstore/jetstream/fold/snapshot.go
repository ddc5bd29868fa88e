package fold

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"time"
	"topicgate/topicstore"

	"github.com/nats-io/nats.go"
)

// Snapshots of the fold: what every gateway computes at a snapshot point
// (Digest), and what record batches made of the state, encoded at a point
// (EncodeSnapshot), decoded (DecodeSnapshot) and installed into a fold
// that has applied every other message up to it (Install). When a
// snapshot is written and how a gateway starts from one: the cluster
// store's subpackage jetstream/snapshot.

// SnapVersion is the snapshot format this gateway writes and reads; a
// gateway that finds a newer one replays the stream instead.
const SnapVersion = 1

// SnapMagic opens every snapshot.
var SnapMagic = []byte("TGSNAP")

// ErrSnapshotUnusable: the snapshot does not fit the catalog; Open starts
// again without it.
var ErrSnapshotUnusable = errors.New("the fold's snapshot does not fit the stream")

// Snap is what the fold knows of snapshots.
type Snap struct {
	Point  uint64 // the last point folded
	Digest uint64 // this gateway's Digest at point
	Last   uint64 // the sequence the newest snapshot covers (its done folded)
	LastAt time.Time
	From   uint64 // the snapshot this gateway started from (0: none)
}

// applySnap folds a point or a done message.
func (f *State) applySnap(h nats.Header, seq uint64, ts time.Time) {
	switch h.Get(HSnap) {
	case "point":
		f.Snap.Point, f.Snap.Digest = seq, f.Digest(ts)
		f.hooks.SnapPoint(seq, h.Get(HHolder), f.Snap.Digest)
	case "done":
		at, _ := strconv.ParseUint(h.Get(HSnapSeq), 10, 64)
		want, _ := strconv.ParseUint(h.Get(HSnapHash), 16, 64)
		f.Snap.Last, f.Snap.LastAt = at, time.Now()
		if at == f.Snap.Point && at != 0 && want != f.Snap.Digest {
			f.hooks.SnapMismatch(at, f.Snap.Digest, want)
		}
	}
}

// Digest hashes what every gateway that folded the same messages
// holds alike at the same stream sequence: the catalog and each
// partition's offsets, counters and record batches (a running sum of
// their hashes, recHash). Producers, positions and retention starts are
// left out: their subjects roll up, and a fold a moment behind skips a
// message a later one rolled up, holding the state before it until it
// folds the later one (the simulation found it: TestSimCommitProtocol's
// verifyDigests); record batches and catalog records are not rolled up.
// at is the point's stream time (unused: kept for a check by time).
func (f *State) Digest(at time.Time) uint64 {
	_ = at
	h := fnv.New64a()
	var b []byte
	ids := make([]uint64, 0, len(f.ByID))
	for id := range f.ByID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		t := f.ByID[id]
		b = binary.AppendUvarint(b[:0], id)
		b = binary.AppendUvarint(b, t.CatSeq)
		for _, ps := range t.Parts {
			b = binary.AppendVarint(b, ps.Start)
			b = binary.AppendVarint(b, ps.End)
			b = binary.AppendVarint(b, ps.Bytes)
			b = binary.AppendVarint(b, ps.retained)
			b = binary.AppendUvarint(b, ps.LastSeq)
			b = binary.AppendUvarint(b, uint64(len(ps.Recs)))
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
func recHash(r Rec) uint64 {
	x := r.Seq*0x9e3779b97f4a7c15 ^ uint64(r.Base)*0xbf58476d1ce4e5b9 ^ uint64(r.Count())*0x94d049bb133111eb ^
		uint64(r.WrittenAt)*0xd6e8feb86659fd93 ^ uint64(r.Bytes())*0xa0761d6478bd642f
	x ^= x >> 31
	x *= 0x7fb5d329728ea185
	x ^= x >> 27
	return x
}

// SnapMeta is a snapshot's small part (JSON); its record batches follow
// it in binary, topic by topic and partition by partition in its order.
type SnapMeta struct {
	Stream  string       `json:"stream"`
	Created time.Time    `json:"created"` // the stream's: one of the same name made again is another
	Seq     uint64       `json:"seq"`
	Digest  string       `json:"digest"`
	Topics  []SnapTopic  `json:"topics"`
	Intents []SnapIntent `json:"intents,omitempty"`
	// Done lists the decided wide transactions not retired at Seq, with
	// their record-batch intents (jetstream/wide); DoneListed says the
	// snapshot lists them (one written before it does not).
	Done       []SnapDone `json:"done,omitempty"`
	DoneListed bool       `json:"done_listed,omitempty"`
}

// SnapDone is a decided wide transaction whose decision is not retired.
type SnapDone struct {
	Gw      string       `json:"gw"`
	N       uint64       `json:"n"`
	Intents []SnapIntent `json:"intents,omitempty"` // its record-batch intents
}

type SnapTopic struct {
	ID      uint64                     `json:"id"`
	Parts   []SnapPart                 `json:"parts"`
	Writers map[string]int64           `json:"writers,omitempty"` // unix micros
	Initial map[string]map[int32]int64 `json:"initial,omitempty"`
}

type SnapPart struct {
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

// SnapIntent is a record-batch intent of a wide transaction open at the
// snapshot's sequence.
type SnapIntent struct {
	Subject string      `json:"subject"`
	Seq     uint64      `json:"seq"`
	Header  nats.Header `json:"header"`
}

// EncodeSnapshot encodes the record-batch part of the fold at seq (see
// above).
func (f *State) EncodeSnapshot(stream string, created time.Time, seq, digest uint64) []byte {
	meta := SnapMeta{Stream: stream, Created: created, Seq: seq, Digest: strconv.FormatUint(digest, 16)}
	ids := make([]uint64, 0, len(f.ByID))
	for id := range f.ByID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	n := 0
	for _, id := range ids {
		t := f.ByID[id]
		st := SnapTopic{ID: id, Writers: map[string]int64{}, Initial: t.Initial}
		for gw, at := range t.Writers {
			st.Writers[gw] = at.UnixMicro()
		}
		for _, ps := range t.Parts {
			sp := SnapPart{Start: ps.Start, End: ps.End, Bytes: ps.Bytes, LastSeq: ps.LastSeq, StartSeq: ps.StartSeq, CutSeq: ps.CutSeq,
				Bucket: ps.Bucket, Meter: ps.Meter, Recs: len(ps.Recs)}
			if !ps.lastWrite.IsZero() {
				sp.LastWrite = ps.lastWrite.UnixMicro()
			}
			n += len(ps.Recs)
			st.Parts = append(st.Parts, sp)
		}
		meta.Topics = append(meta.Topics, st)
	}
	for _, x := range f.Wide.Open {
		for _, in := range x.intents {
			if f.subj.IsKind(in.Subject, KindData) {
				meta.Intents = append(meta.Intents, SnapIntent{Subject: in.Subject, Seq: in.Seq, Header: in.H})
			}
		}
	}
	meta.DoneListed = true
	for _, d := range f.Wide.Done {
		sd := SnapDone{Gw: d.Gw, N: d.N}
		for _, in := range d.Intents {
			if f.subj.IsKind(in.Subject, KindData) {
				sd.Intents = append(sd.Intents, SnapIntent{Subject: in.Subject, Seq: in.Seq, Header: in.H})
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
	out = append(out, SnapMagic...)
	out = binary.AppendUvarint(out, SnapVersion)
	out = binary.AppendUvarint(out, uint64(len(js)))
	out = append(out, js...)
	for _, id := range ids {
		for _, ps := range f.ByID[id].Parts {
			var prevSeq uint64
			var prevAt int64
			for _, r := range ps.Recs {
				out = binary.AppendUvarint(out, r.Seq-prevSeq)
				out = binary.AppendVarint(out, r.Base)
				out = binary.AppendVarint(out, r.Count())
				out = binary.AppendVarint(out, r.WrittenAt-prevAt)
				out = binary.AppendVarint(out, r.Bytes())
				out = binary.AppendUvarint(out, ps.Refs[r.Seq])
				prevSeq, prevAt = r.Seq, r.WrittenAt
			}
		}
	}
	return out
}

// snapshot is a decoded snapshot.
type Snapshot struct {
	Meta SnapMeta
	recs [][][]Rec             // by topic, by partition (meta's order)
	refs [][]map[uint64]uint64 // their reference records' staged messages, by record sequence
}

// DecodeSnapshot decodes what EncodeSnapshot wrote.
func DecodeSnapshot(b []byte) (*Snapshot, error) {
	if !bytes.HasPrefix(b, SnapMagic) {
		return nil, errors.New("not a topicgate snapshot")
	}
	b = b[len(SnapMagic):]
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("truncated")
	}
	if v != SnapVersion {
		return nil, fmt.Errorf("format version %d, this gateway reads version %d", v, SnapVersion)
	}
	b = b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return nil, errors.New("truncated")
	}
	sn := &Snapshot{}
	if err := json.Unmarshal(b[n:n+int(l)], &sn.Meta); err != nil {
		return nil, err
	}
	b = b[n+int(l):]
	bad := false
	uv := func() uint64 {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return x
	}
	iv := func() int64 {
		x, n := binary.Varint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return x
	}
	for _, t := range sn.Meta.Topics {
		parts := make([][]Rec, len(t.Parts))
		prefs := make([]map[uint64]uint64, len(t.Parts))
		for p, sp := range t.Parts {
			if sp.Recs < 0 || sp.Recs > len(b) {
				return nil, errors.New("truncated")
			}
			recs := make([]Rec, sp.Recs)
			var seq uint64
			var at int64
			for i := range recs {
				seq += uv()
				base, count := iv(), iv()
				at += iv()
				r, err := newRecIdx(seq, base, count, at, iv())
				if err != nil {
					return nil, err
				}
				if ref := uv(); ref != 0 {
					if prefs[p] == nil {
						prefs[p] = map[uint64]uint64{}
					}
					prefs[p][r.Seq] = ref
				}
				recs[i] = r
			}
			if bad {
				return nil, errors.New("truncated")
			}
			parts[p] = recs
		}
		sn.recs = append(sn.recs, parts)
		sn.refs = append(sn.refs, prefs)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes past its end", len(b))
	}
	return sn, nil
}

// install puts the snapshot's record-batch state into the fold, which has
// folded every other message up to its sequence.
func (f *State) Install(sn *Snapshot) error {
	covered := 0
	for i, st := range sn.Meta.Topics {
		t := f.ByID[st.ID]
		if t == nil {
			// Dropped since: its tombstone rolled its creation up.
			continue
		}
		covered++
		if len(t.Parts) != len(st.Parts) {
			return fmt.Errorf("%w: topic %d has %d partitions at sequence %d, the catalog says %d", ErrSnapshotUnusable, st.ID, len(st.Parts), sn.Meta.Seq, len(t.Parts))
		}
		for p, sp := range st.Parts {
			ps := t.Parts[p]
			ps.Recs, ps.Start, ps.End, ps.Bytes = sn.recs[i][p], sp.Start, sp.End, sp.Bytes
			ps.LastSeq, ps.StartSeq, ps.CutSeq, ps.Bucket, ps.Meter = sp.LastSeq, sp.StartSeq, sp.CutSeq, sp.Bucket, sp.Meter
			ps.lastWrite = time.Time{}
			if sp.LastWrite != 0 {
				ps.lastWrite = time.UnixMicro(sp.LastWrite).UTC()
			}
			ps.retained, ps.sum, ps.Refs = 0, 0, sn.refs[i][p]
			for _, r := range ps.Recs {
				ps.retained += r.Bytes()
				ps.sum += recHash(r)
			}
			for _, ref := range ps.Refs {
				f.Swept.referenced(ref)
			}
		}
		t.Writers = map[string]time.Time{}
		for gw, at := range st.Writers {
			t.Writers[gw] = time.UnixMicro(at).UTC()
		}
		t.Initial = map[string]map[int32]int64{}
		for c, m := range st.Initial {
			t.Initial[c] = m
		}
	}
	if covered != len(f.ByID) {
		return fmt.Errorf("%w: it holds %d of the %d topics the catalog has at sequence %d", ErrSnapshotUnusable, covered, len(f.ByID), sn.Meta.Seq)
	}
	for _, in := range sn.Meta.Intents {
		tok := f.subj.Tokens(in.Subject)
		if err := f.applyIntent(in.Header.Get(HTxn), tok, in.Subject, in.Header, in.Seq); err != nil {
			return err
		}
	}
	for _, x := range f.Wide.Open {
		sort.Slice(x.intents, func(i, j int) bool { return x.intents[i].Seq < x.intents[j].Seq })
	}
	f.installDone(sn.Meta)
	f.Snap.From = sn.Meta.Seq
	// The point at the snapshot's sequence was folded without the record
	// batches: its digest is not this state's.
	f.Snap.Point = 0
	return nil
}

// installDone gives the decided transactions the filtered replay found
// their record-batch intents from the snapshot (meta); with a snapshot
// that does not list them, they stay partial: this gateway never retires
// their decisions.
func (f *State) installDone(meta SnapMeta) {
	f.Wide.Filtered = false
	if !meta.DoneListed {
		return
	}
	for _, sd := range meta.Done {
		d := f.Wide.Done[WideKey(sd.Gw, sd.N)]
		if d == nil {
			continue // retired since the snapshot
		}
		for _, in := range sd.Intents {
			d.Intents = append(d.Intents, Intent{Subject: in.Subject, H: in.Header, Seq: in.Seq})
		}
		sort.Slice(d.Intents, func(i, j int) bool { return d.Intents[i].Seq < d.Intents[j].Seq })
	}
	for _, d := range f.Wide.Done {
		d.Partial = false
	}
}
