package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"context"
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

// retiredLate warns that a decision was retired before this gateway's
// fold applied it (a fold hook).
func (s *Store) retiredLate(gw string, n uint64, intents int) {
	s.opts.Logger.Warn("a wide transaction's decision was retired before this gateway folded it: its fold is far behind",
		"gateway", gw, "number", n, "intents", intents)
}

// retireStep is what the lease holder does for one intent.
type retireStep struct {
	subject string
	purge   uint64    // > 0: purge the subject below it
	again   *nats.Msg // the intent published again as a plain state
}

// planRetire decides, for transaction d, what makes its intents go, and
// whether that is all it waits for (ready). It runs under s.mu.
func (s *Store) planRetire(d *fold.DoneTxn) (steps []retireStep, ready bool) {
	ready = true
	for _, in := range d.Intents {
		tok := s.subj.Tokens(in.Subject)
		if len(tok) < 3 {
			ready = false // not a topic's subject: keep it
			continue
		}
		id, _ := strconv.ParseUint(tok[1], 10, 64)
		if s.fold.ByID[id] == nil {
			continue // its topic was dropped, and everything on its subjects purged
		}
		t := s.fold.ByID[id]
		if tok[0] == fold.KindData {
			p, err := strconv.Atoi(tok[2])
			if err != nil || p >= len(t.Parts) {
				continue
			}
			// Retention purges a partition's subject below the batch its
			// cut keeps (again here: the cut's purge may have failed);
			// nothing else is deleted from it.
			cut := t.Parts[p].CutSeq
			if in.Seq >= cut {
				ready = false // still retained
				continue
			}
			steps = append(steps, retireStep{subject: in.Subject, purge: cut})
			continue
		}
		last, void, ok := s.fold.SubjectLast(tok)
		switch {
		case !ok && (tok[0] == fold.KindProducer || tok[0] == fold.KindPosition || tok[0] == fold.KindShared):
			// An expired producer or a dropped consumer: its subject was
			// purged with it.
		case !ok:
			ready = false // a kind no plan writes intents on: keep it
		case last > in.Seq && void:
			// The subject's state is in a message before its last (an
			// aborted intent): purging below it would lose it.
			ready = false
		case last > in.Seq:
			steps = append(steps, retireStep{subject: in.Subject, purge: last})
		case d.Commit && (tok[0] == fold.KindProducer || tok[0] == fold.KindPosition):
			m := nats.NewMsg(in.Subject)
			for k, v := range in.H {
				// The state is in topicgate's headers; the stored intent
				// also carries the server's (its batch's id, sequence).
				if strings.HasPrefix(k, "Tg-") && k != fold.HTxn {
					m.Header[k] = v
				}
			}
			m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
			jsext.Expect(m, in.Seq)
			steps = append(steps, retireStep{subject: in.Subject, again: m})
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
	sn := &s.fold.Snap
	if sn.Last == 0 && sn.Point == 0 {
		return true
	}
	return sn.Last > seq && (sn.Point <= sn.Last || sn.Point > seq)
}

// retireDecisions retires, at now, the decisions the rules above allow,
// and returns how many. The maintenance lease holder runs it.
func (s *Store) retireDecisions(ctx context.Context, now time.Time) (int, error) {
	type job struct {
		d     *fold.DoneTxn
		steps []retireStep
	}
	var jobs []job
	s.mu.Lock()
	for _, d := range s.fold.Wide.Done {
		if d.Partial || now.Sub(d.At) < s.opts.DecisionHold || !s.snapshotsPast(d.Seq) ||
			s.foldedFloor != nil && s.foldedFloor() < d.Seq {
			continue
		}
		if steps, ready := s.planRetire(d); ready {
			jobs = append(jobs, job{d, steps})
		}
	}
	s.mu.Unlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].d.Seq < jobs[j].d.Seq })
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
		m := nats.NewMsg(s.subj.Decision(j.d.Gw, j.d.N))
		m.Header.Set(fold.HGone, "0")
		if j.d.Commit {
			m.Header.Set(fold.HDecide, "commit")
		} else {
			m.Header.Set(fold.HDecide, "abort")
		}
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		m.Header.Set(natsjs.MsgTTLHeader, s.opts.DecisionHold.String())
		jsext.Expect(m, j.d.Seq)
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
		s.retiredUpTo = max(s.retiredUpTo, j.d.Seq)
		s.mu.Unlock()
	}
	return retired, nil
}
