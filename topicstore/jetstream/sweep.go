package jetstream

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Sweeping what dead gateways staged. A gateway's staged chunks
// (<prefix>.t.<gateway>.<transaction>, stage.go) are referenced by a
// commit or discarded by the gateway itself; one that dies with open
// transactions leaves them behind. The holder of the maintenance lease
// sweeps them: the chunks, not referenced by any record, of every gateway
// whose heartbeat (groups.go; a gateway renews it while it has open
// stagings) expired a TTL ago or that never had one, once its newest
// chunk is a TTL old.
//
// A gateway only cut off from the cluster is not dead, and may come back
// and commit what it staged. A fence keeps that from referencing swept
// chunks: before deleting anything the sweeper publishes a fence on the
// gateway's subject <prefix>.f.<gateway>, conditional on the subject's
// last sequence as folded, and deletes only chunks stored before the
// fence. Every commit batch that joins staged chunks carries a fence
// check on the same subject, conditional the same way, so of a commit
// and a fence racing one is refused; and a commit whose staging opened
// before a fence this gateway has folded is refused by the plan with
// ErrStagingSwept (40001: the transaction is retried whole). Both are
// one subject's compare-and-set, so no sweep ever deletes a chunk a
// commit references.

// Header of a sweep fence: the sweeping gateway.
const hFence = "Tg-Fence"

// wideOpen reports whether gateway gw has a wide transaction without a
// decision (wide.go). It runs under s.mu.
func (s *Store) wideOpen(gw string) bool {
	for _, x := range s.fold.wide.open {
		if x.gw == gw {
			return true
		}
	}
	return false
}

// abortDead aborts the wide transactions of every gateway whose heartbeat
// expired: the maintenance lease holder's part of wide.go.
func (s *Store) abortDead() {
	s.mu.Lock()
	orphans := s.orphansLocked(func(*wideTxn) bool { return true })
	s.mu.Unlock()
	s.abortAll(orphans)
}

// sweptState is, as folded, every gateway's staged chunks not yet swept
// and its fence subject.
//
// It holds only stagings that may still need sweeping: one whose every
// chunk a record references is forgotten then (referenced), and one its
// gateway discarded or a sweep deleted is forgotten when the fold meets
// the "gone" marker published on its subject (markGone). A marker that is
// not stored (the cluster did not answer) leaves the staging to the sweep
// once its gateway is dead, which deletes what is left and marks it
// again. So the
// state is bounded by the stagings open or in doubt, not by every
// staging ever.
type sweptState struct {
	subjects map[string]*stagedSubject // by subject
	chunks   map[uint64]chunkState     // every chunk's sequence
	fences   map[string]*fenceState    // by gateway
}

// stagedSubject is one staging's chunks.
type stagedSubject struct {
	key    string // <gateway>.<transaction>
	gw     string
	seqs   []uint64
	refs   int // chunks a record references
	newest time.Time
}

// chunkState is one staged chunk: its staging, and whether a record
// references it.
type chunkState struct {
	ss  *stagedSubject
	ref bool
}

// fenceState is a gateway's fence subject: its last sequence (a fence or
// a commit's fence check) and its last fence's.
type fenceState struct {
	last, fence uint64
}

func (w *sweptState) chunk(tok []string, h nats.Header, seq uint64, ts time.Time) {
	if len(tok) != 3 {
		return
	}
	key := tok[1] + "." + tok[2]
	if v := h.Get(hGone); v != "" {
		// A "gone" marker (markGone): the chunks before its bound go.
		below, _ := strconv.ParseUint(v, 10, 64)
		if below == 0 {
			below = seq
		}
		w.forgetBelow(w.subjects[key], below)
		return
	}
	if w.subjects == nil {
		w.subjects, w.chunks = map[string]*stagedSubject{}, map[uint64]chunkState{}
	}
	ss := w.subjects[key]
	if ss == nil {
		ss = &stagedSubject{key: key, gw: tok[1]}
		w.subjects[key] = ss
	}
	ss.seqs = append(ss.seqs, seq)
	ss.newest = ts
	w.chunks[seq] = chunkState{ss: ss}
}

// referenced marks chunk seq referenced by a record; a staging whose
// every chunk is referenced is forgotten: there is nothing of it to sweep.
func (w *sweptState) referenced(seq uint64) {
	c, ok := w.chunks[seq]
	if !ok || c.ref {
		return
	}
	c.ref = true
	w.chunks[seq] = c
	if c.ss.refs++; c.ss.refs == len(c.ss.seqs) {
		w.forget(c.ss)
	}
}

// forgetBelow drops the chunks of staging ss (nil: none) stored before
// sequence below, and the staging when none is left.
func (w *sweptState) forgetBelow(ss *stagedSubject, below uint64) {
	if ss == nil {
		return
	}
	kept, refs := ss.seqs[:0:0], 0
	for _, seq := range ss.seqs {
		if seq < below {
			delete(w.chunks, seq)
			continue
		}
		kept = append(kept, seq)
		if w.chunks[seq].ref {
			refs++
		}
	}
	if len(kept) == 0 {
		delete(w.subjects, ss.key)
		return
	}
	ss.seqs, ss.refs = kept, refs
}

// forget drops staging ss (nil: none) and its chunks.
func (w *sweptState) forget(ss *stagedSubject) {
	if ss == nil {
		return
	}
	for _, seq := range ss.seqs {
		delete(w.chunks, seq)
	}
	delete(w.subjects, ss.key)
}

// markGone publishes the "gone" marker of a staging on its subject:
// every fold forgets its chunks stored before below (0: before the
// marker), and a rollup (rollup set) deletes every chunk before it in the
// same step, also one that landed late, after a purge. The publisher
// deletes the marker once its own fold applied it; should it never learn
// the marker was stored, or die, the marker expires (goneTTL).
func (s *Store) markGone(ctx context.Context, subject string, below uint64, rollup bool) error {
	m := nats.NewMsg(subject)
	m.Header.Set(hGone, strconv.FormatUint(below, 10))
	m.Header.Set(natsjs.MsgTTLHeader, goneTTL.String())
	if rollup {
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
	}
	rctx, cancel := s.request(ctx)
	seq, err := s.io.publish(rctx, m)
	cancel()
	if err != nil {
		return s.unavailable(err)
	}
	rctx, cancel = s.request(ctx)
	err = s.io.waitApplied(rctx, seq)
	cancel()
	if err != nil {
		return err
	}
	rctx, cancel = s.request(ctx)
	err = s.io.deleteMsg(rctx, seq)
	cancel()
	if err != nil {
		return s.unavailable(err)
	}
	return nil
}

// hGone is a staging's "gone" marker: every fold forgets the staging's
// chunks stored before that sequence (0: before the marker).
const hGone = "Tg-Gone"

// goneTTL is how long a "gone" marker its publisher did not delete stays
// in the stream.
const goneTTL = time.Hour

func (w *sweptState) fence(tok []string, h nats.Header, seq uint64) {
	if len(tok) != 2 {
		return
	}
	if w.fences == nil {
		w.fences = map[string]*fenceState{}
	}
	f := w.fences[tok[1]]
	if f == nil {
		f = &fenceState{}
		w.fences[tok[1]] = f
	}
	f.last = seq
	if h.Get(hFence) != "" {
		f.fence = seq
	}
}

// check refuses a commit of gateway gw's stagings opened at openedAt if
// a fence of gw came after. It runs under s.mu.
func (w *sweptState) check(gw string, openedAt uint64) error {
	if f := w.fences[gw]; f != nil && f.fence > openedAt {
		return fmt.Errorf("%w: this gateway was taken for dead (out of touch with the cluster longer than its session TTL) after the transaction staged it", topicstore.ErrStagingSwept)
	}
	return nil
}

// sweepStaged sweeps the staged chunks of dead gateways and reports how
// many it deleted.
func (s *Store) sweepStaged(ctx context.Context) (int, error) {
	now := s.opts.Clock()
	ttl := s.groups.ttl
	if ttl <= 0 {
		ttl = DefaultGroupTTL
	}
	type victim struct {
		expect, fence, maxSeq uint64
		newest                time.Time
	}
	dead := map[string]*victim{}
	s.mu.Lock()
	for _, ss := range s.fold.swept.subjects {
		if ss.gw == s.stage.gw {
			continue
		}
		if b := s.fold.members.beats[ss.gw]; b != nil && now.Sub(b.until) < ttl {
			continue // alive, or not dead long enough
		}
		if s.wideOpen(ss.gw) {
			continue // a wide transaction of it is undecided: abortDead first
		}
		v := dead[ss.gw]
		if v == nil {
			v = &victim{}
			if f := s.fold.swept.fences[ss.gw]; f != nil {
				v.expect, v.fence = f.last, f.fence
			}
			dead[ss.gw] = v
		}
		v.newest = later(v.newest, ss.newest)
		v.maxSeq = max(v.maxSeq, ss.seqs[len(ss.seqs)-1])
	}
	s.mu.Unlock()
	gws := make([]string, 0, len(dead))
	for gw := range dead {
		gws = append(gws, gw)
	}
	sort.Strings(gws)
	deleted := 0
	for _, gw := range gws {
		v := dead[gw]
		if now.Sub(v.newest) < ttl {
			continue // it staged a moment ago: its heartbeat may not be folded yet
		}
		fence := v.fence
		if fence <= v.maxSeq { // a fence after every chunk of it is there already (a sweep before a restart)
			// A link of its chain (chain.go): none of its batches planned
			// before can land after it.
			m := nats.NewMsg(s.chainSubject(gw))
			m.Header.Set(hFence, s.stage.gw)
			m.Header.Set(hPrev, strconv.FormatUint(v.expect, 10))
			expect(m, v.expect)
			rctx, cancel := s.request(ctx)
			seq, err := s.io.publish(rctx, m)
			cancel()
			if err != nil {
				if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
					continue // it committed meanwhile: alive after all; the next sweep looks again
				}
				return deleted, s.unavailable(err)
			}
			rctx, cancel = s.request(ctx)
			err = s.io.waitApplied(rctx, seq)
			cancel()
			if err != nil {
				return deleted, err
			}
			fence = seq
		}
		n, err := s.deleteUnreferenced(ctx, gw, fence)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// deleteUnreferenced deletes gateway gw's chunks stored before fence that
// no record references, a staging's subject at once when none of it is,
// and forgets them.
func (s *Store) deleteUnreferenced(ctx context.Context, gw string, fence uint64) (int, error) {
	type job struct {
		subject string
		key     string
		seqs    []uint64 // to delete one by one; nil: the whole staging (a rollup)
		n       int
	}
	var jobs []job
	s.mu.Lock()
	keys := make([]string, 0, len(s.fold.swept.subjects))
	for key := range s.fold.swept.subjects {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		ss := s.fold.swept.subjects[key]
		if ss.gw != gw {
			continue
		}
		var loose []uint64
		refs := false
		for _, seq := range ss.seqs {
			switch {
			case seq >= fence:
			case s.fold.swept.chunks[seq].ref:
				refs = true
			default:
				loose = append(loose, seq)
			}
		}
		j := job{subject: s.prefix + ".t." + key, key: key, n: len(loose)}
		if refs {
			j.seqs = loose // a commit joined some of it: those stay
			if len(loose) == 0 {
				j.seqs = []uint64{}
			}
		}
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	deleted := 0
	for _, j := range jobs {
		for _, seq := range j.seqs { // none when the marker's rollup deletes the whole staging
			rctx, cancel := s.request(ctx)
			err := s.io.deleteMsg(rctx, seq)
			cancel()
			if err != nil {
				return deleted, s.unavailable(err)
			}
		}
		deleted += j.n
		// Every gateway forgets what was deleted: a staging none of
		// which a record references goes whole (a rollup: a chunk that
		// landed late goes too, and the fence refuses its commit); of
		// one that is referenced in part, what came before the fence.
		if err := s.markGone(ctx, j.subject, fence, j.seqs == nil); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
