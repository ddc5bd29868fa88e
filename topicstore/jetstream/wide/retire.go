package wide

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// Retirement retires wide transactions' decisions (doc.go says when).
type Retirement struct {
	cfg Config
	h   Host

	// snapFloor, set by the simulation, replaces the fold's knowledge of
	// snapshots in snapshotsPast: the newest snapshot's sequence.
	snapFloor func() uint64
	// foldedFloor, set by the simulation, is the lowest sequence the live
	// gateways' folds applied: Run retires nothing above it (the
	// simulation's gateways lag far behind in stream terms in no time;
	// Hold stands for it in a cluster).
	foldedFloor func() uint64

	retired atomic.Int64 // decisions this gateway retired
	upTo    uint64       // the highest one's sequence (under the host's lock)
}

// New returns the retirement of a store's decisions.
func New(cfg Config, h Host) *Retirement { return &Retirement{cfg: cfg, h: h} }

// SetFloors replaces, for the simulation, what the fold knows of
// snapshots (snap: the newest snapshot's sequence) and adds a bound on
// what Run retires (folded: the lowest sequence the live gateways'
// folds applied). A gateway never calls it.
func (r *Retirement) SetFloors(snap, folded func() uint64) {
	r.snapFloor, r.foldedFloor = snap, folded
}

// Retired returns how many decisions this gateway retired.
func (r *Retirement) Retired() int64 { return r.retired.Load() }

// UpTo returns the highest sequence of a decision this gateway retired.
// It runs under the host's lock.
func (r *Retirement) UpTo() uint64 { return r.upTo }

// step is what the lease holder does for one intent.
type step struct {
	subject string
	purge   uint64    // > 0: purge the subject below it
	again   *nats.Msg // the intent published again as a plain state
}

// plan decides, for transaction d, what makes its intents go, and
// whether that is all it waits for (ready). It runs under the host's
// lock.
func (r *Retirement) plan(d *fold.DoneTxn) (steps []step, ready bool) {
	f := r.cfg.Fold
	ready = true
	for _, in := range d.Intents {
		tok := r.cfg.Subjects.Tokens(in.Subject)
		if len(tok) < 3 {
			ready = false // not a topic's subject: keep it
			continue
		}
		id, _ := strconv.ParseUint(tok[1], 10, 64)
		if f.ByID[id] == nil {
			continue // its topic was dropped, and everything on its subjects purged
		}
		t := f.ByID[id]
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
			steps = append(steps, step{subject: in.Subject, purge: cut})
			continue
		}
		last, void, ok := f.SubjectLast(tok)
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
			steps = append(steps, step{subject: in.Subject, purge: last})
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
			steps = append(steps, step{subject: in.Subject, again: m})
		default:
			ready = false // the subject's state: until the next write there
		}
	}
	return steps, ready
}

// snapshotsPast reports whether no gateway can start from a snapshot at
// or before seq: the newest written one, and one being written, are
// after it, or none was ever taken. It runs under the host's lock.
func (r *Retirement) snapshotsPast(seq uint64) bool {
	if r.snapFloor != nil {
		return r.snapFloor() > seq
	}
	sn := &r.cfg.Fold.Snap
	if sn.Last == 0 && sn.Point == 0 {
		return true
	}
	return sn.Last > seq && (sn.Point <= sn.Last || sn.Point > seq)
}

// request bounds one request to the cluster by the store's timeout.
func (r *Retirement) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.cfg.Timeout)
}

// Run retires, at now, the decisions the rules (doc.go) allow, and
// returns how many. The maintenance lease holder runs it.
func (r *Retirement) Run(ctx context.Context, now time.Time) (int, error) {
	type job struct {
		d     *fold.DoneTxn
		steps []step
	}
	var jobs []job
	r.h.Lock()
	for _, d := range r.cfg.Fold.Wide.Done {
		if d.Partial || now.Sub(d.At) < r.cfg.Hold || !r.snapshotsPast(d.Seq) ||
			r.foldedFloor != nil && r.foldedFloor() < d.Seq {
			continue
		}
		if steps, ready := r.plan(d); ready {
			jobs = append(jobs, job{d, steps})
		}
	}
	r.h.Unlock()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].d.Seq < jobs[j].d.Seq })
	retired := 0
	for _, j := range jobs {
		ok := true
		for _, st := range j.steps {
			rctx, cancel := r.request(ctx)
			var err error
			if st.again != nil {
				_, err = r.h.Publish(rctx, st.again)
			} else {
				err = r.h.Purge(rctx, st.subject, st.purge)
			}
			cancel()
			if err != nil {
				if st.again != nil && jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
					ok = false // written since: purged at the next run
					continue
				}
				return retired, r.h.Unavailable(err)
			}
		}
		if !ok {
			continue
		}
		m := nats.NewMsg(r.cfg.Subjects.Decision(j.d.Gw, j.d.N))
		m.Header.Set(fold.HGone, "0")
		if j.d.Commit {
			m.Header.Set(fold.HDecide, "commit")
		} else {
			m.Header.Set(fold.HDecide, "abort")
		}
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		m.Header.Set(natsjs.MsgTTLHeader, r.cfg.Hold.String())
		jsext.Expect(m, j.d.Seq)
		rctx, cancel := r.request(ctx)
		_, err := r.h.Publish(rctx, m)
		cancel()
		if err != nil {
			if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence {
				continue // retired by another meanwhile
			}
			return retired, r.h.Unavailable(err)
		}
		retired++
		r.retired.Add(1)
		r.h.Lock()
		r.upTo = max(r.upTo, j.d.Seq)
		r.h.Unlock()
	}
	return retired, nil
}
