package jetstream

import (
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Ending wide transactions that lost their way: aborting one whose batch
// failed or whose gateway died, and settling this gateway's own whose
// outcome a request was told is unknown (wide.go says what a wide
// transaction is).

// abortWide publishes an abort of gateway gw's wide transaction n unless
// it is decided, and reports its decision: committed (known), aborted
// (known), or not known by deadline. foreign: gw is another gateway, taken
// for dead; the abort then carries a link on its chain.
func (s *Store) abortWide(gw string, n uint64, deadline time.Time, foreign bool) (committed, known bool, err error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		if gw == s.stage.gw {
			if o := s.wideOwn.mine[n]; o != nil && o.decided {
				s.mu.Unlock()
				return o.committed, true, nil
			}
		} else if s.fold.Wide.Decided[gw] >= n && s.fold.Wide.Open[fold.WideKey(gw, n)] == nil {
			s.mu.Unlock()
			return false, true, nil // decided; a resolver needs no more
		}
		closed := s.closed
		var link *nats.Msg
		var d *chain.Doubt
		if foreign {
			link = nats.NewMsg(s.subj.Chain(gw))
			last := s.fold.ChainLast(gw)
			link.Header.Set(fold.HAbort, strconv.FormatUint(n, 10))
			link.Header.Set(fold.HPrev, strconv.FormatUint(last, 10))
			jsext.Expect(link, last)
		} else {
			link, d = s.chain.Mark(2, nil)
			link.Header.Set(fold.HDecide, strconv.FormatUint(n, 10))
		}
		s.mu.Unlock()
		if closed || !s.io.now().Before(deadline) {
			if d != nil {
				s.chain.SettleOwn(d)
			}
			if err == nil {
				err = topicstore.ErrClosed
				if !closed {
					err = fmt.Errorf("no answer before the deadline")
				}
			}
			return false, false, err
		}
		x := nats.NewMsg(s.subj.Decision(gw, n))
		x.Header.Set(fold.HDecide, "abort")
		jsext.Expect(x, 0)
		batch := []*nats.Msg{link, x}
		if d != nil {
			o, last, perr := s.chain.PublishResolved(batch, d, deadline)
			switch o {
			case chain.Stored:
				// This abort is the decision: the fold applies it, and the
				// next turn finds it decided.
				ctx, cancel := s.requestUntil(deadline)
				err = s.io.waitApplied(ctx, last)
				cancel()
				continue
			case chain.Refused:
				// The decision is there already, or the fold was behind
				// on the chain: catch up and look again.
				err = perr
				if wl, ok := jsext.WrongLast(perr); ok {
					ctx, cancel := s.requestUntil(deadline)
					err = s.io.waitApplied(ctx, wl)
					cancel()
					continue
				}
			case chain.Unknown:
				s.mu.Lock()
				d.Answered, d.Txns = true, nil
				s.mu.Unlock()
				err = perr
			default:
				err = perr
			}
			s.backoff(attempt)
			continue
		}
		ctx, cancel := s.requestUntil(deadline)
		ack, perr := s.io.publishBatch(ctx, batch)
		cancel()
		switch {
		case perr == nil:
			ctx, cancel := s.requestUntil(deadline)
			err = s.io.waitApplied(ctx, ack.Sequence)
			cancel()
			continue
		case jsext.ErrorCode(perr) == jsext.ErrCodeWrongLastSequence:
			if wl, ok := jsext.WrongLast(perr); ok {
				ctx, cancel := s.requestUntil(deadline)
				err = s.io.waitApplied(ctx, wl)
				cancel()
				continue
			}
		}
		err = perr
		s.backoff(attempt)
	}
}

// requestUntil is a request's context: the store's timeout, cut short by
// deadline.
func (s *Store) requestUntil(deadline time.Time) (context.Context, context.CancelFunc) {
	d := min(s.opts.Timeout, deadline.Sub(s.io.now()))
	return context.WithTimeout(context.Background(), max(d, time.Millisecond))
}

// abortOrphans aborts the wide transactions, holding a topic one of
// blocked touches, whose gateway's heartbeat expired: their gateway died
// between its intents and its decision.
func (s *Store) abortOrphans(blocked []*plan.Request) {
	s.mu.Lock()
	held := map[uint64]bool{}
	for _, r := range blocked {
		for _, w := range r.Writes {
			if t := s.fold.ByName[w.Topic]; t != nil {
				held[t.Rec.ID] = true
			}
		}
		for _, u := range r.Pos {
			if t := s.fold.ByName[u.Topic]; t != nil {
				held[t.Rec.ID] = true
			}
		}
		for _, st := range r.Steps {
			if t := s.fold.ByName[st.Topic]; t != nil {
				held[t.Rec.ID] = true
			}
		}
	}
	orphans := s.orphansLocked(func(x *fold.WideTxn) bool {
		for _, id := range x.Topics {
			if held[id] {
				return true
			}
		}
		return false
	})
	s.mu.Unlock()
	s.abortAll(orphans)
}

// orphan names a wide transaction to abort.
type orphan struct {
	gw string
	n  uint64
}

// orphansLocked lists the open wide transactions of other gateways whose
// heartbeat expired, that match want (sorted, so that the order is the
// same on every run). It runs under s.mu.
func (s *Store) orphansLocked(want func(*fold.WideTxn) bool) []orphan {
	now := s.opts.Clock()
	var out []orphan
	for _, x := range s.fold.Wide.Open {
		if x.Gw == s.stage.gw || !want(x) {
			continue
		}
		if b := s.fold.Groups.Beats[x.Gw]; b != nil && !now.After(b.Until) {
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

// abortDead aborts the wide transactions of every gateway whose heartbeat
// expired: the maintenance lease holder's part of wide.go
// (maintJobs).
func (s *Store) abortDead() {
	s.mu.Lock()
	orphans := s.orphansLocked(func(*fold.WideTxn) bool { return true })
	s.mu.Unlock()
	s.abortAll(orphans)
}

// abortAll aborts the orphans, each within the store's timeout.
func (s *Store) abortAll(orphans []orphan) {
	for _, o := range orphans {
		_, _, _ = s.abortWide(o.gw, o.n, s.io.now().Add(s.opts.Timeout), true)
	}
}

// wideAnswered reports whether a wide transaction of this gateway was
// answered ErrOutcomeUnknown and is not settled yet.
func (s *Store) wideAnswered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.wideOwn.mine {
		if o.answered {
			return true
		}
	}
	return false
}

// settleWide settles this gateway's wide transactions whose requests were
// answered ErrOutcomeUnknown: once the fold has their decision their
// stagings are committed or deleted; an undecided one is aborted (which
// decides it, whichever way). Any goroutine may call it.
func (s *Store) settleWide(ctx context.Context) {
	s.mu.Lock()
	var undecided []uint64
	var committed, purge []uint64
	for n, o := range s.wideOwn.mine {
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
		delete(s.wideOwn.mine, n)
	}
	s.mu.Unlock()
	sort.Slice(undecided, func(i, j int) bool { return undecided[i] < undecided[j] })
	for _, n := range undecided {
		_, _, _ = s.abortWide(s.stage.gw, n, s.io.now().Add(s.opts.Timeout), false)
	}
	s.stage.settle(committed, stagingCommitted)
	s.stage.settle(purge, stagingOpen)
	for _, txn := range purge {
		_ = s.DiscardStaged(txn)
	}
}
