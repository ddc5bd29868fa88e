package wide

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/plan"
)

// Ending wide transactions that lost their way: aborting one whose batch
// failed or whose gateway died, and settling this gateway's own whose
// outcome a request was told is unknown.

// abort publishes an abort of gateway gw's wide transaction n unless it
// is decided, and reports its decision: committed (known), aborted
// (known), or not known by deadline. foreign: gw is another gateway,
// taken for dead; the abort then carries a link on its chain.
func (t *Transactions) abort(gw string, n uint64, deadline time.Time, foreign bool) (committed, known bool, err error) {
	f := t.cfg.Fold
	for attempt := 0; ; attempt++ {
		t.h.Lock()
		if gw == t.cfg.Gateway {
			if o := t.mine[n]; o != nil && o.decided {
				t.h.Unlock()
				return o.committed, true, nil
			}
		} else if f.Wide.Decided[gw] >= n && f.Wide.Open[fold.WideKey(gw, n)] == nil {
			t.h.Unlock()
			return false, true, nil // decided; a resolver needs no more
		}
		closed := t.h.Closed()
		var link *nats.Msg
		var d *chain.Doubt
		if foreign {
			link = nats.NewMsg(t.cfg.Subjects.Chain(gw))
			last := f.ChainLast(gw)
			link.Header.Set(fold.HAbort, strconv.FormatUint(n, 10))
			link.Header.Set(fold.HPrev, strconv.FormatUint(last, 10))
			jsext.Expect(link, last)
		} else {
			link, d = t.cfg.Chain.Mark(2, nil)
			link.Header.Set(fold.HDecide, strconv.FormatUint(n, 10))
		}
		t.h.Unlock()
		if closed || !t.h.Now().Before(deadline) {
			if d != nil {
				t.cfg.Chain.SettleOwn(d)
			}
			if err == nil {
				err = topicstore.ErrClosed
				if !closed {
					err = fmt.Errorf("no answer before the deadline")
				}
			}
			return false, false, err
		}
		x := nats.NewMsg(t.cfg.Subjects.Decision(gw, n))
		x.Header.Set(fold.HDecide, "abort")
		jsext.Expect(x, 0)
		batch := []*nats.Msg{link, x}
		if d != nil {
			o, last, perr := t.cfg.Chain.PublishResolved(batch, d, deadline)
			switch o {
			case chain.Stored:
				// This abort is the decision: the fold applies it, and the
				// next turn finds it decided.
				ctx, cancel := t.requestUntil(deadline)
				err = t.h.WaitApplied(ctx, last)
				cancel()
				continue
			case chain.Refused:
				// The decision is there already, or the fold was behind
				// on the chain: catch up and look again.
				err = perr
				if wl, ok := jsext.WrongLast(perr); ok {
					ctx, cancel := t.requestUntil(deadline)
					err = t.h.WaitApplied(ctx, wl)
					cancel()
					continue
				}
			case chain.Unknown:
				t.h.Lock()
				d.Answered, d.Txns = true, nil
				t.h.Unlock()
				err = perr
			default:
				err = perr
			}
			t.h.Backoff(attempt)
			continue
		}
		ctx, cancel := t.requestUntil(deadline)
		ack, perr := t.h.PublishBatch(ctx, batch)
		cancel()
		switch {
		case perr == nil:
			ctx, cancel := t.requestUntil(deadline)
			err = t.h.WaitApplied(ctx, ack.Sequence)
			cancel()
			continue
		case jsext.ErrorCode(perr) == jsext.ErrCodeWrongLastSequence:
			if wl, ok := jsext.WrongLast(perr); ok {
				ctx, cancel := t.requestUntil(deadline)
				err = t.h.WaitApplied(ctx, wl)
				cancel()
				continue
			}
		}
		err = perr
		t.h.Backoff(attempt)
	}
}

// AbortOrphans aborts the wide transactions, holding a topic one of
// blocked touches, whose gateway's heartbeat expired: their gateway died
// between its intents and its decision.
func (t *Transactions) AbortOrphans(blocked []*plan.Request) {
	f := t.cfg.Fold
	t.h.Lock()
	held := map[uint64]bool{}
	for _, r := range blocked {
		for _, w := range r.Writes {
			if tp := f.ByName[w.Topic]; tp != nil {
				held[tp.Rec.ID] = true
			}
		}
		for _, u := range r.Pos {
			if tp := f.ByName[u.Topic]; tp != nil {
				held[tp.Rec.ID] = true
			}
		}
		for _, st := range r.Steps {
			if tp := f.ByName[st.Topic]; tp != nil {
				held[tp.Rec.ID] = true
			}
		}
	}
	orphans := t.orphansLocked(func(x *fold.WideTxn) bool {
		for _, id := range x.Topics {
			if held[id] {
				return true
			}
		}
		return false
	})
	t.h.Unlock()
	t.abortAll(orphans)
}

// orphan names a wide transaction to abort.
type orphan struct {
	gw string
	n  uint64
}

// orphansLocked lists the open wide transactions of other gateways whose
// heartbeat expired, that match want (sorted, so that the order is the
// same on every run). It runs under the host's lock.
func (t *Transactions) orphansLocked(want func(*fold.WideTxn) bool) []orphan {
	f := t.cfg.Fold
	now := t.cfg.Clock()
	var out []orphan
	for _, x := range f.Wide.Open {
		if x.Gw == t.cfg.Gateway || !want(x) {
			continue
		}
		if b := f.Groups.Beats[x.Gw]; b != nil && !now.After(b.Until) {
			continue // its gateway lives
		}
		out = append(out, orphan{x.Gw, x.N})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].gw != out[j].gw {
			return out[i].gw < out[j].gw
		}
		return out[i].n < out[j].n
	})
	return out
}

// AbortDead aborts the wide transactions of every gateway whose heartbeat
// expired: the maintenance lease holder's part of wide transactions
// (jetstream/maintain's Jobs).
func (t *Transactions) AbortDead() {
	t.h.Lock()
	orphans := t.orphansLocked(func(*fold.WideTxn) bool { return true })
	t.h.Unlock()
	t.abortAll(orphans)
}

// abortAll aborts the orphans, each within the store's timeout.
func (t *Transactions) abortAll(orphans []orphan) {
	for _, o := range orphans {
		_, _, _ = t.abort(o.gw, o.n, t.h.Now().Add(t.cfg.Timeout), true)
	}
}

// Answered reports whether a wide transaction of this gateway was
// answered ErrOutcomeUnknown and is not settled yet.
func (t *Transactions) Answered() bool {
	t.h.Lock()
	defer t.h.Unlock()
	for _, o := range t.mine {
		if o.answered {
			return true
		}
	}
	return false
}

// Settle settles this gateway's wide transactions whose requests were
// answered ErrOutcomeUnknown: once the fold has their decision their
// stagings are committed or deleted; an undecided one is aborted (which
// decides it, whichever way). Any goroutine may call it.
func (t *Transactions) Settle(ctx context.Context) {
	t.h.Lock()
	var undecided []uint64
	var committed, purge []uint64
	for n, o := range t.mine {
		if !o.answered {
			continue
		}
		if !o.decided {
			undecided = append(undecided, n)
			continue
		}
		if o.committed {
			committed = append(committed, o.txns...)
		} else {
			purge = append(purge, o.txns...)
		}
		delete(t.mine, n)
	}
	t.h.Unlock()
	sort.Slice(undecided, func(i, j int) bool { return undecided[i] < undecided[j] })
	for _, n := range undecided {
		_, _, _ = t.abort(t.cfg.Gateway, n, t.h.Now().Add(t.cfg.Timeout), false)
	}
	t.h.SettleStagings(committed, true)
	t.h.SettleStagings(purge, false)
}
