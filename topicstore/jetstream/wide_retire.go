package jetstream

import (
	"context"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/jsext"
)

// Retiring wide transactions' decisions, so that the stream does not keep
// one message for every wide transaction ever decided.
//
// A decision is needed by every fold that holds the transaction's intents
// aside: a gateway that replays the stream, or starts from a snapshot
// taken while the transaction was open, or whose fold is behind. So the
// maintenance lease holder retires one (retireDecisions) only when:
//
//  1. it was taken at least Options.DecisionHold ago (a fold further
//     behind than that is the one case left: see below);
//  2. a snapshot of the fold covers a point after it, or none was ever
//     written (so no gateway starts from a snapshot in which the
//     transaction is open);
//  3. none of its intents is left in the stream. The lease holder makes
//     them go: an intent on a subject that has a later message is purged
//     below that message; a committed producer or position intent that is
//     still its subject's last message is published again as a plain
//     state message rolling its subject up; a record batch intent goes
//     with retention (purged below the partition's first retained batch);
//     an aborted intent still its subject's last message, or a record
//     batch still retained, waits.
//
// It then publishes a marker on the decision's subject that rolls it up
// (the decision goes) and says the outcome, with a Nats-TTL of
// DecisionHold: every fold forgets the transaction; a fold that still
// holds its intents (it fell behind by more than DecisionHold) applies the
// outcome to those whose subjects it has folded nothing later on. Only a
// record batch intent folded that far behind can leave such a fold
// failing at the partition's next batch, and a restart mends it.
//
// The decision's subject is empty again after the marker expires; an
// abort published later for the same transaction (by a gateway that
// missed all of it) carries a link expecting the owner's chain as it
// folded it, which the owner's decision batch moved, so it is refused.

// doneTxn is a decided wide transaction whose decision is not retired.
type doneTxn struct {
	gw      string
	n       uint64
	seq     uint64    // the decision's stream sequence
	at      time.Time // when it was stored
	commit  bool
	intents []intent
	// partial: decided during a filtered replay, and install found no
	// list of its record-batch intents in the snapshot; never retired by
	// this gateway.
	partial bool
}

// noteDone records decision seq of gateway gw's transaction n. It runs
// under s.mu.
func (f *foldState) noteDone(gw string, n, seq uint64, ts time.Time, commit bool) {
	w := &f.wide
	if w.done == nil {
		w.done = map[string]*doneTxn{}
	}
	if ts.IsZero() {
		ts = f.clock()
	}
	w.done[wideKey(gw, n)] = &doneTxn{gw: gw, n: n, seq: seq, at: ts, commit: commit, partial: w.filtered}
}

// applyRetired folds a retirement marker: the transaction is forgotten,
// and one still open here is decided by the marker (see above). It runs
// under s.mu.
func (f *foldState) applyRetired(gw string, n uint64, commit bool) error {
	w := &f.wide
	key := wideKey(gw, n)
	delete(w.done, key)
	x := w.open[key]
	if x == nil {
		return nil
	}
	if w.decided == nil {
		w.decided = map[string]uint64{}
	}
	w.decided[gw] = max(w.decided[gw], n)
	f.hooks.retiredLate(gw, n, len(x.intents))
	if err := f.closeWide(x, commit, true); err != nil {
		return err
	}
	f.hooks.decided(gw, n, commit)
	return nil
}

// retiredLate warns that a decision was retired before this gateway's
// fold applied it (a fold hook).
func (s *Store) retiredLate(gw string, n uint64, intents int) {
	s.opts.Logger.Warn("a wide transaction's decision was retired before this gateway folded it: its fold is far behind",
		"gateway", gw, "number", n, "intents", intents)
}

// subjectMoved reports whether the fold holds a later message than seq
// on the subject of tok. It runs under s.mu.
func (f *foldState) subjectMoved(tok []string, seq uint64) bool {
	last, _, ok := f.subjectLast(tok)
	return ok && last > seq
}

// subjectLast is the last sequence the fold holds for the topic subject
// of tok (record batches, producers, positions, shared-consumer states),
// and whether that message is an intent an abort voided (the subject's
// state is then in a message before it); ok false: it holds none (the
// topic, producer, consumer is gone) or the subject is of another kind.
func (f *foldState) subjectLast(tok []string) (last uint64, void, ok bool) {
	if len(tok) < 3 {
		return 0, false, false
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return 0, false, false
	}
	t := f.byID[id]
	if t == nil {
		return 0, false, false
	}
	switch {
	case tok[0] == "d" && len(tok) == 3:
		if p, err := strconv.Atoi(tok[2]); err == nil && p < len(t.parts) {
			return t.parts[p].lastSeq, false, true
		}
	case tok[0] == "p" && len(tok) == 3:
		if raw, err := hex.DecodeString(tok[2]); err == nil {
			if ps := t.prods[string(raw)]; ps != nil {
				return ps.seq, ps.void, true
			}
		}
	case tok[0] == "o" && len(tok) == 4:
		raw, herr := hex.DecodeString(tok[2])
		p, perr := strconv.Atoi(tok[3])
		if herr == nil && perr == nil {
			if ps := t.pos[string(raw)][int32(p)]; ps != nil {
				return ps.seq, ps.void, true
			}
		}
	case tok[0] == "s" && len(tok) == 4:
		raw, herr := hex.DecodeString(tok[2])
		p, perr := strconv.Atoi(tok[3])
		if st := f.sh.topics[id]; st != nil && herr == nil && perr == nil {
			if c := st.cons[string(raw)]; c != nil {
				if pf := c.parts[int32(p)]; pf != nil {
					return pf.seq, pf.void, true
				}
			}
		}
	}
	return 0, false, false
}

// retireStep is what the lease holder does for one intent.
type retireStep struct {
	subject string
	purge   uint64    // > 0: purge the subject below it
	again   *nats.Msg // the intent published again as a plain state
}

// planRetire decides, for transaction d, what makes its intents go, and
// whether that is all it waits for (ready). It runs under s.mu.
func (s *Store) planRetire(d *doneTxn) (steps []retireStep, ready bool) {
	ready = true
	for _, in := range d.intents {
		tok := strings.Split(strings.TrimPrefix(in.subject, s.prefix+"."), ".")
		if len(tok) < 3 {
			ready = false // not a topic's subject: keep it
			continue
		}
		id, _ := strconv.ParseUint(tok[1], 10, 64)
		if s.fold.byID[id] == nil {
			continue // its topic was dropped, and everything on its subjects purged
		}
		t := s.fold.byID[id]
		if tok[0] == "d" {
			p, err := strconv.Atoi(tok[2])
			if err != nil || p >= len(t.parts) {
				continue
			}
			// Retention purges a partition's subject below the batch its
			// cut keeps (again here: the cut's purge may have failed);
			// nothing else is deleted from it.
			cut := t.parts[p].cutSeq
			if in.seq >= cut {
				ready = false // still retained
				continue
			}
			steps = append(steps, retireStep{subject: in.subject, purge: cut})
			continue
		}
		last, void, ok := s.fold.subjectLast(tok)
		switch {
		case !ok && (tok[0] == "p" || tok[0] == "o" || tok[0] == "s"):
			// An expired producer or a dropped consumer: its subject was
			// purged with it.
		case !ok:
			ready = false // a kind no plan writes intents on: keep it
		case last > in.seq && void:
			// The subject's state is in a message before its last (an
			// aborted intent): purging below it would lose it.
			ready = false
		case last > in.seq:
			steps = append(steps, retireStep{subject: in.subject, purge: last})
		case d.commit && (tok[0] == "p" || tok[0] == "o"):
			m := nats.NewMsg(in.subject)
			for k, v := range in.h {
				// The state is in topicgate's headers; the stored intent
				// also carries the server's (its batch's id, sequence).
				if strings.HasPrefix(k, "Tg-") && k != hTxn {
					m.Header[k] = v
				}
			}
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
			expect(m, in.seq)
			steps = append(steps, retireStep{subject: in.subject, again: m})
		default:
			ready = false // the subject's state: until the next write there
		}
	}
	return steps, ready
}

// snapshotsPast reports whether no gateway can start from a snapshot at
// or before seq: the newest written one, and one being written, are
// after it, or none was ever taken. It runs under s.mu.
func (s *Store) snapshotsPast(seq uint64) bool {
	if s.snapFloor != nil {
		return s.snapFloor() > seq
	}
	sn := &s.fold.snap
	if sn.last == 0 && sn.point == 0 {
		return true
	}
	return sn.last > seq && (sn.point <= sn.last || sn.point > seq)
}

// retireDecisions retires, at now, the decisions the rules above allow,
// and returns how many. The maintenance lease holder runs it.
func (s *Store) retireDecisions(ctx context.Context, now time.Time) (int, error) {
	type job struct {
		d     *doneTxn
		steps []retireStep
	}
	var jobs []job
	s.mu.Lock()
	for _, d := range s.fold.wide.done {
		if d.partial || now.Sub(d.at) < s.opts.DecisionHold || !s.snapshotsPast(d.seq) ||
			s.foldedFloor != nil && s.foldedFloor() < d.seq {
			continue
		}
		if steps, ready := s.planRetire(d); ready {
			jobs = append(jobs, job{d, steps})
		}
	}
	s.mu.Unlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].d.seq < jobs[j].d.seq })
	retired := 0
	for _, j := range jobs {
		ok := true
		for _, st := range j.steps {
			rctx, cancel := s.request(ctx)
			var err error
			if st.again != nil {
				_, err = s.io.publish(rctx, st.again)
			} else {
				err = s.io.purge(rctx, st.subject, st.purge)
			}
			cancel()
			if err != nil {
				if st.again != nil && jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
					ok = false // written since: purged at the next run
					continue
				}
				return retired, s.unavailable(err)
			}
		}
		if !ok {
			continue
		}
		m := nats.NewMsg(s.decisionSubject(j.d.gw, j.d.n))
		m.Header.Set(hGone, "0")
		if j.d.commit {
			m.Header.Set(hDecide, "commit")
		} else {
			m.Header.Set(hDecide, "abort")
		}
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		m.Header.Set(natsjs.MsgTTLHeader, s.opts.DecisionHold.String())
		expect(m, j.d.seq)
		rctx, cancel := s.request(ctx)
		_, err := s.io.publish(rctx, m)
		cancel()
		if err != nil {
			if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
				continue // retired by another meanwhile
			}
			return retired, s.unavailable(err)
		}
		retired++
		s.decisionsRetired.Add(1)
		s.mu.Lock()
		s.retiredUpTo = max(s.retiredUpTo, j.d.seq)
		s.mu.Unlock()
	}
	return retired, nil
}
