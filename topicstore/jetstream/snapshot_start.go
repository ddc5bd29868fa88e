package jetstream

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
)

// Starting from a snapshot: the newest one is loaded and decoded, the
// stream's non-record subjects are replayed up to its point, it is
// installed, and the fold goes on from the message after it (see
// snapshot.go for what a snapshot holds and when one is taken).

// decodeSnapshot decodes what encodeSnapshot wrote.
func decodeSnapshot(b []byte) (*snapshot, error) {
	if !bytes.HasPrefix(b, snapMagic) {
		return nil, errors.New("not a topicgate snapshot")
	}
	b = b[len(snapMagic):]
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("truncated")
	}
	if v != snapVersion {
		return nil, fmt.Errorf("format version %d, this gateway reads version %d", v, snapVersion)
	}
	b = b[n:]
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return nil, errors.New("truncated")
	}
	sn := &snapshot{}
	if err := json.Unmarshal(b[n:n+int(l)], &sn.meta); err != nil {
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
	for _, t := range sn.meta.Topics {
		parts := make([][]recIdx, len(t.Parts))
		prefs := make([]map[uint64]uint64, len(t.Parts))
		for p, sp := range t.Parts {
			if sp.Recs < 0 || sp.Recs > len(b) {
				return nil, errors.New("truncated")
			}
			recs := make([]recIdx, sp.Recs)
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
					prefs[p][r.seq] = ref
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
// folded every other message up to its sequence. It runs under s.mu.
func (f *foldState) install(sn *snapshot) error {
	covered := 0
	for i, st := range sn.meta.Topics {
		t := f.byID[st.ID]
		if t == nil {
			// Dropped since: its tombstone rolled its creation up.
			continue
		}
		covered++
		if len(t.parts) != len(st.Parts) {
			return fmt.Errorf("%w: topic %d has %d partitions at sequence %d, the catalog says %d", errSnapshotUnusable, st.ID, len(st.Parts), sn.meta.Seq, len(t.parts))
		}
		for p, sp := range st.Parts {
			ps := t.parts[p]
			ps.recs, ps.start, ps.end, ps.bytes = sn.recs[i][p], sp.Start, sp.End, sp.Bytes
			ps.lastSeq, ps.startSeq, ps.cutSeq, ps.bucket, ps.meter = sp.LastSeq, sp.StartSeq, sp.CutSeq, sp.Bucket, sp.Meter
			ps.lastWrite = time.Time{}
			if sp.LastWrite != 0 {
				ps.lastWrite = time.UnixMicro(sp.LastWrite).UTC()
			}
			ps.retained, ps.sum, ps.refs = 0, 0, sn.refs[i][p]
			for _, r := range ps.recs {
				ps.retained += r.bytes()
				ps.sum += recHash(r)
			}
			for _, ref := range ps.refs {
				f.swept.referenced(ref)
			}
		}
		t.writers = map[string]time.Time{}
		for gw, at := range st.Writers {
			t.writers[gw] = time.UnixMicro(at).UTC()
		}
		t.initial = map[string]map[int32]int64{}
		for c, m := range st.Initial {
			t.initial[c] = m
		}
	}
	if covered != len(f.byID) {
		return fmt.Errorf("%w: it holds %d of the %d topics the catalog has at sequence %d", errSnapshotUnusable, covered, len(f.byID), sn.meta.Seq)
	}
	for _, in := range sn.meta.Intents {
		tok := strings.Split(strings.TrimPrefix(in.Subject, f.prefix+"."), ".")
		if err := f.applyIntent(in.Header.Get(hTxn), tok, in.Subject, in.Header, in.Seq); err != nil {
			return err
		}
	}
	for _, x := range f.wide.open {
		sort.Slice(x.intents, func(i, j int) bool { return x.intents[i].seq < x.intents[j].seq })
	}
	f.installDone(sn.meta)
	f.snap.from = sn.meta.Seq
	// The point at the snapshot's sequence was folded without the record
	// batches: its digest is not this state's.
	f.snap.point = 0
	return nil
}

// loadSnapshot reads and decodes the stream's newest snapshot; nil when
// there is none or it cannot be used (with a warning: the gateway
// replays the stream instead).
func (s *Store) loadSnapshot(ctx context.Context) *snapshot {
	ctx, cancel := context.WithTimeout(ctx, s.snapTimeout())
	defer cancel()
	warn := func(why string, err error) *snapshot {
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
	sn, err := decodeSnapshot(data)
	if err != nil {
		return warn("decoding the snapshot", err)
	}
	info := s.stream.CachedInfo()
	if info == nil || sn.meta.Created.IsZero() || !sn.meta.Created.Equal(info.Created) || info.State.LastSeq < sn.meta.Seq {
		return warn("the snapshot is of another stream of that name", nil)
	}
	return sn
}

// foldFilters are the subjects of every message the fold applies but
// record batches: what a start from a snapshot replays up to it.
func (s *Store) foldFilters() []string {
	out := []string{s.prefix + ".l", s.prefix + ".n", s.prefix + ".cn"}
	for _, k := range []string{"c", "t", "f", "x", "m", "h", "p", "e", "o", "s", "r"} {
		out = append(out, s.prefix+"."+k+".>")
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
	s.fold.wide.filtered = true
	s.mu.Unlock()
	if err := s.replayFiltered(ctx, sn.meta.Seq); err != nil {
		return 0, err
	}
	s.mu.Lock()
	err := s.fold.install(sn)
	if err == nil {
		s.applied = sn.meta.Seq
	}
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	s.opts.Logger.Info("started from the fold's snapshot", "stream", s.opts.Stream, "sequence", sn.meta.Seq, "took", time.Since(began).Round(time.Millisecond))
	return sn.meta.Seq, nil
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

// installDone gives the decided transactions the filtered replay found
// their record-batch intents from the snapshot (meta); with a snapshot
// that does not list them, they stay partial: this gateway never retires
// their decisions. It runs under s.mu.
func (f *foldState) installDone(meta snapMeta) {
	f.wide.filtered = false
	if !meta.DoneListed {
		return
	}
	for _, sd := range meta.Done {
		d := f.wide.done[wideKey(sd.Gw, sd.N)]
		if d == nil {
			continue // retired since the snapshot
		}
		for _, in := range sd.Intents {
			d.intents = append(d.intents, intent{subject: in.Subject, h: in.Header, seq: in.Seq})
		}
		sort.Slice(d.intents, func(i, j int) bool { return d.intents[i].seq < d.intents[j].seq })
	}
	for _, d := range f.wide.done {
		d.partial = false
	}
}
