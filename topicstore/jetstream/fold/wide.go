package fold

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// WideTxn is a wide transaction as folded: intents with no decision yet.
type WideTxn struct {
	Gw      string
	N       uint64
	intents []Intent
	Topics  []uint64 // the topics it holds
}

type Intent struct {
	Subject string
	H       nats.Header
	Seq     uint64
}

// Wide is the wide transactions as folded.
type Wide struct {
	Open    map[string]*WideTxn // by "<gateway> <number>"
	Locked  map[uint64]int      // topic id -> open transactions holding it
	Decided map[string]uint64   // per gateway: its highest transaction number decided
	// done are the decided transactions whose decision is not retired yet
	// (jetstream/wide), by "<gateway> <number>".
	Done map[string]*DoneTxn
	// filtered is set while the fold replays the stream up to a snapshot
	// without its record batches (jetstream/snapshot): the transactions
	// decided then lack their record-batch intents until install.
	Filtered bool
}

func WideKey(gw string, n uint64) string { return gw + " " + strconv.FormatUint(n, 10) }

// applyIntent holds an intent aside (jetstream/wide's doc says why).
func (f *State) applyIntent(v string, tok []string, subject string, h nats.Header, seq uint64) error {
	gw, ns, _ := strings.Cut(v, " ")
	n, err := strconv.ParseUint(ns, 10, 64)
	if err != nil {
		return fmt.Errorf("bad %s header %q", HTxn, v)
	}
	w := &f.Wide
	if n <= w.Decided[gw] {
		// Decided already: a late intent (the chain refuses those; kept
		// safe) is void.
		f.bumpSeq(tok, seq)
		return nil
	}
	if w.Open == nil {
		w.Open, w.Locked = map[string]*WideTxn{}, map[uint64]int{}
	}
	key := WideKey(gw, n)
	x := w.Open[key]
	if x == nil {
		x = &WideTxn{Gw: gw, N: n}
		w.Open[key] = x
	}
	x.intents = append(x.intents, Intent{Subject: subject, H: h, Seq: seq})
	if id, err := strconv.ParseUint(tok[1], 10, 64); err == nil && !containsID(x.Topics, id) {
		x.Topics = append(x.Topics, id)
		w.Locked[id]++
	}
	return nil
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// applyDecision folds a decision: the transaction's intents take effect
// (commit) or only their sequences do (abort); or a retirement marker
// (jetstream/wide).
func (f *State) applyDecision(tok []string, h nats.Header, seq uint64, ts time.Time) error {
	if len(tok) != 3 {
		return nil
	}
	gw := tok[1]
	n, err := strconv.ParseUint(tok[2], 10, 64)
	if err != nil {
		return nil
	}
	commit := h.Get(HDecide) == "commit"
	w := &f.Wide
	if h.Get(HGone) != "" {
		return f.applyRetired(gw, n, commit)
	}
	if w.Decided == nil {
		w.Decided = map[string]uint64{}
	}
	w.Decided[gw] = max(w.Decided[gw], n)
	f.noteDone(gw, n, seq, ts, commit)
	if x := w.Open[WideKey(gw, n)]; x != nil {
		f.Wide.Done[WideKey(gw, n)].Intents = x.intents
		if err := f.closeWide(x, commit, false); err != nil {
			return err
		}
	}
	f.hooks.Decided(gw, n, commit)
	return nil
}

// closeWide ends open transaction x as decided: its topics are free
// again, and its intents take effect (commit) or only their sequences do
// (abort). skipMoved leaves out the intents whose subject the fold has
// folded a later message on (a decision learnt late: jetstream/wide).
func (f *State) closeWide(x *WideTxn, commit, skipMoved bool) error {
	w := &f.Wide
	delete(w.Open, WideKey(x.Gw, x.N))
	for _, id := range x.Topics {
		if w.Locked[id]--; w.Locked[id] <= 0 {
			delete(w.Locked, id)
		}
		if t := f.ByID[id]; t != nil {
			t.notify()
		}
	}
	for _, in := range x.intents {
		itok := f.subj.Tokens(in.Subject)
		if skipMoved && f.subjectMoved(itok, in.Seq) {
			continue
		}
		if !commit {
			f.bumpSeq(itok, in.Seq)
			continue
		}
		h := make(nats.Header, len(in.H))
		for k, v := range in.H {
			if k != HTxn {
				h[k] = v
			}
		}
		if err := f.Apply(in.Subject, h, in.Seq, time.Time{}); err != nil {
			return fmt.Errorf("wide transaction %s %d, intent at sequence %d: %w", x.Gw, x.N, in.Seq, err)
		}
	}
	return nil
}

// bumpSeq makes seq the last sequence of a subject whose state does not
// change: an intent void by an abort.
func (f *State) bumpSeq(tok []string, seq uint64) {
	if len(tok) < 3 {
		return
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return
	}
	t := f.ByID[id]
	if t == nil {
		return
	}
	switch {
	case tok[0] == KindData && len(tok) == 3:
		if p, err := strconv.Atoi(tok[2]); err == nil && p < len(t.Parts) {
			t.Parts[p].LastSeq = seq
		}
	case tok[0] == KindProducer && len(tok) == 3:
		raw, err := hex.DecodeString(tok[2])
		if err != nil {
			return
		}
		if ps := t.Prods[string(raw)]; ps != nil {
			ps.Seq = seq
			ps.Pending++ // an intent replaces nothing
			ps.Void = true
		} else {
			t.Prods[string(raw)] = &Producer{Seq: seq, Void: true} // no state: a fresh producer
		}
	case tok[0] == KindPosition && len(tok) == 4:
		raw, herr := hex.DecodeString(tok[2])
		p, perr := strconv.Atoi(tok[3])
		if herr != nil || perr != nil {
			return
		}
		c := string(raw)
		if t.Pos[c] == nil {
			t.Pos[c] = map[int32]*Position{}
		}
		if ps := t.Pos[c][int32(p)]; ps != nil {
			ps.Seq, ps.void = seq, true
		} else {
			t.Pos[c][int32(p)] = &Position{Seq: seq, Reset: true, void: true}
		}
	case tok[0] == KindShared && len(tok) == 4:
		_ = f.applyShared(t, tok, nats.Header{}, seq)
		if raw, err := hex.DecodeString(tok[2]); err == nil {
			if p, err := strconv.Atoi(tok[3]); err == nil {
				if pf := f.SharedTopicOf(t.Rec.ID).Consumer(string(raw)).Parts[int32(p)]; pf != nil {
					pf.void = true
				}
			}
		}
	}
}

// DoneTxn is a decided wide transaction whose decision is not retired.
type DoneTxn struct {
	Gw      string
	N       uint64
	Seq     uint64    // the decision's stream sequence
	At      time.Time // when it was stored
	Commit  bool
	Intents []Intent
	// partial: decided during a filtered replay, and install found no
	// list of its record-batch intents in the snapshot; never retired by
	// this gateway.
	Partial bool
}

// noteDone records decision seq of gateway gw's transaction n.
func (f *State) noteDone(gw string, n, seq uint64, ts time.Time, commit bool) {
	w := &f.Wide
	if w.Done == nil {
		w.Done = map[string]*DoneTxn{}
	}
	if ts.IsZero() {
		ts = f.clock()
	}
	w.Done[WideKey(gw, n)] = &DoneTxn{Gw: gw, N: n, Seq: seq, At: ts, Commit: commit, Partial: w.Filtered}
}

// applyRetired folds a retirement marker: the transaction is forgotten,
// and one still open here is decided by the marker (jetstream/wide says
// when).
func (f *State) applyRetired(gw string, n uint64, commit bool) error {
	w := &f.Wide
	key := WideKey(gw, n)
	delete(w.Done, key)
	x := w.Open[key]
	if x == nil {
		return nil
	}
	if w.Decided == nil {
		w.Decided = map[string]uint64{}
	}
	w.Decided[gw] = max(w.Decided[gw], n)
	f.hooks.RetiredLate(gw, n, len(x.intents))
	if err := f.closeWide(x, commit, true); err != nil {
		return err
	}
	f.hooks.Decided(gw, n, commit)
	return nil
}

// subjectMoved reports whether the fold holds a later message than seq
// on the subject of tok.
func (f *State) subjectMoved(tok []string, seq uint64) bool {
	last, _, ok := f.SubjectLast(tok)
	return ok && last > seq
}

// SubjectLast is the last sequence the fold holds for the topic subject
// of tok (record batches, producers, positions, shared-consumer states),
// and whether that message is an intent an abort voided (the subject's
// state is then in a message before it); ok false: it holds none (the
// topic, producer, consumer is gone) or the subject is of another kind.
func (f *State) SubjectLast(tok []string) (last uint64, void, ok bool) {
	if len(tok) < 3 {
		return 0, false, false
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return 0, false, false
	}
	t := f.ByID[id]
	if t == nil {
		return 0, false, false
	}
	switch {
	case tok[0] == KindData && len(tok) == 3:
		if p, err := strconv.Atoi(tok[2]); err == nil && p < len(t.Parts) {
			return t.Parts[p].LastSeq, false, true
		}
	case tok[0] == KindProducer && len(tok) == 3:
		if raw, err := hex.DecodeString(tok[2]); err == nil {
			if ps := t.Prods[string(raw)]; ps != nil {
				return ps.Seq, ps.Void, true
			}
		}
	case tok[0] == KindPosition && len(tok) == 4:
		raw, herr := hex.DecodeString(tok[2])
		p, perr := strconv.Atoi(tok[3])
		if herr == nil && perr == nil {
			if ps := t.Pos[string(raw)][int32(p)]; ps != nil {
				return ps.Seq, ps.void, true
			}
		}
	case tok[0] == KindShared && len(tok) == 4:
		raw, herr := hex.DecodeString(tok[2])
		p, perr := strconv.Atoi(tok[3])
		if st := f.sh.topics[id]; st != nil && herr == nil && perr == nil {
			if c := st.cons[string(raw)]; c != nil {
				if pf := c.Parts[int32(p)]; pf != nil {
					return pf.Seq, pf.void, true
				}
			}
		}
	}
	return 0, false, false
}
