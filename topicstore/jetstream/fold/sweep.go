package fold

import (
	"fmt"
	"strconv"
	"time"
	"topicgate/topicstore"

	"github.com/nats-io/nats.go"
)

// Swept is, as folded, every gateway's staged chunks not yet swept
// and its fence subject.
//
// It holds only stagings that may still need sweeping: one whose every
// chunk a record references is forgotten then (referenced), and one its
// gateway discarded or a sweep deleted is forgotten when the fold meets
// the "gone" marker published on its subject (the cluster store's markGone). A marker that is
// not stored (the cluster did not answer) leaves the staging to the sweep
// once its gateway is dead, which deletes what is left and marks it
// again. So the
// state is bounded by the stagings open or in doubt, not by every
// staging ever.
type Swept struct {
	Subjects map[string]*Staging // by subject
	Chunks   map[uint64]Chunk    // every chunk's sequence
	Fences   map[string]*Fence   // by gateway
}

// Staging is one staging's chunks.
type Staging struct {
	key    string // <gateway>.<transaction>
	Gw     string
	Seqs   []uint64
	refs   int // chunks a record references
	Newest time.Time
}

// Chunk is one staged chunk: its staging, and whether a record
// references it.
type Chunk struct {
	ss  *Staging
	Ref bool
}

// Fence is a gateway's fence subject: its last sequence (a fence or
// a commit's fence check) and its last fence's.
type Fence struct {
	Last, Fence uint64
}

func (w *Swept) chunk(tok []string, h nats.Header, seq uint64, ts time.Time) {
	if len(tok) != 3 {
		return
	}
	key := tok[1] + "." + tok[2]
	if v := h.Get(HGone); v != "" {
		// A "gone" marker (markGone): the chunks before its bound go.
		below, _ := strconv.ParseUint(v, 10, 64)
		if below == 0 {
			below = seq
		}
		w.forgetBelow(w.Subjects[key], below)
		return
	}
	if w.Subjects == nil {
		w.Subjects, w.Chunks = map[string]*Staging{}, map[uint64]Chunk{}
	}
	ss := w.Subjects[key]
	if ss == nil {
		ss = &Staging{key: key, Gw: tok[1]}
		w.Subjects[key] = ss
	}
	ss.Seqs = append(ss.Seqs, seq)
	ss.Newest = ts
	w.Chunks[seq] = Chunk{ss: ss}
}

// referenced marks chunk seq referenced by a record; a staging whose
// every chunk is referenced is forgotten: there is nothing of it to sweep.
func (w *Swept) referenced(seq uint64) {
	c, ok := w.Chunks[seq]
	if !ok || c.Ref {
		return
	}
	c.Ref = true
	w.Chunks[seq] = c
	if c.ss.refs++; c.ss.refs == len(c.ss.Seqs) {
		w.forget(c.ss)
	}
}

// forgetBelow drops the chunks of staging ss (nil: none) stored before
// sequence below, and the staging when none is left.
func (w *Swept) forgetBelow(ss *Staging, below uint64) {
	if ss == nil {
		return
	}
	kept, refs := ss.Seqs[:0:0], 0
	for _, seq := range ss.Seqs {
		if seq < below {
			delete(w.Chunks, seq)
			continue
		}
		kept = append(kept, seq)
		if w.Chunks[seq].Ref {
			refs++
		}
	}
	if len(kept) == 0 {
		delete(w.Subjects, ss.key)
		return
	}
	ss.Seqs, ss.refs = kept, refs
}

// forget drops staging ss (nil: none) and its chunks.
func (w *Swept) forget(ss *Staging) {
	if ss == nil {
		return
	}
	for _, seq := range ss.Seqs {
		delete(w.Chunks, seq)
	}
	delete(w.Subjects, ss.key)
}

func (w *Swept) fence(tok []string, h nats.Header, seq uint64) {
	if len(tok) != 2 {
		return
	}
	if w.Fences == nil {
		w.Fences = map[string]*Fence{}
	}
	f := w.Fences[tok[1]]
	if f == nil {
		f = &Fence{}
		w.Fences[tok[1]] = f
	}
	f.Last = seq
	if h.Get(HFence) != "" {
		f.Fence = seq
	}
}

// check refuses a commit of gateway gw's stagings opened at openedAt if
// a fence of gw came after.
func (w *Swept) Check(gw string, openedAt uint64) error {
	if f := w.Fences[gw]; f != nil && f.Fence > openedAt {
		return fmt.Errorf("%w: this gateway was taken for dead (out of touch with the cluster longer than its session TTL) after the transaction staged it", topicstore.ErrStagingSwept)
	}
	return nil
}

// ChainLast is the sequence of gateway gw's last chain link as folded.
func (f *State) ChainLast(gw string) uint64 {
	if f := f.Swept.Fences[gw]; f != nil {
		return f.Last
	}
	return 0
}

// applyChain folds a link of a gateway's chain: the sweep's view of it
// (jetstream/sweep.go); the gateway decides its own doubts by it (linked).
func (f *State) applyChain(tok []string, h nats.Header, seq uint64) error {
	if len(tok) != 2 {
		return nil
	}
	before := f.ChainLast(tok[1])
	f.Swept.fence(tok, h, seq)
	f.hooks.Linked(tok[1], before, h, seq)
	return nil
}
