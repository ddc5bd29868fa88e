package jetstream

import (
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"

	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Wide transactions: a commit too large for one atomic batch (more than
// jsext.MaxBatchMsgs messages: thousands of producers, positions over thousands
// of partitions, a staging of thousands of chunks).
//
// Its messages are published as intents, in as many batches as they take,
// then decided by one message. An intent is the message the commit would
// have published, on its own subject and with its own expectation, and a
// header Tg-Txn naming the transaction ("<gateway> <number>"). The fold
// holds an intent aside: the subject's state does not change, but the
// intent is the subject's last message, so no commit planned on the state
// before it can land on that subject any more. While a transaction has
// intents and no decision it holds the topics they are on: a gateway
// plans no commit that touches them (the plan puts them off as Batch.Locked) until the
// decision, and such requests wait in the committer.
//
// The decision is a message on the transaction's own subject,
// <prefix>.x.<gateway>.<number>, published expecting that subject to be
// empty, so exactly one decision is ever stored: "commit", in a batch with
// the commit's catalog guards and a marker on the gateway's chain, or
// "abort", which anybody may publish. When the fold applies the decision
// it applies the transaction's intents in stream order (commit) or only
// takes their sequences as the subjects' last ones (abort), and releases
// the topics. Readers never see an intent before its decision.
//
// Who aborts: the gateway itself, when one of its intent batches is
// refused (another commit changed a subject first), when its decision
// batch is refused, or to learn the decision of a batch in doubt (an abort
// either lands or finds the decision there); a gateway whose requests wait
// for the topics of a transaction whose gateway's heartbeat expired; and
// the maintenance lease holder, for every such transaction, before it
// sweeps that gateway's staged chunks. An abort published by another
// gateway carries a link on the owner's chain too (expecting its last link
// as folded), so an intent batch the owner publishes after it is refused.
//
// A transaction that aborts is planned again, with a new number, like any
// refused commit; its intents stay in the stream as the subjects' last
// messages until the next commit there (or retention) replaces them.
//
// Once none of a transaction's intents is left in the stream and no
// gateway can need it any more, its decision is retired (the subpackage wide).

// retiredLate warns that a decision was retired before this gateway's
// fold applied it (a fold hook; jetstream/wide retires decisions).
func (s *Store) retiredLate(gw string, n uint64, intents int) {
	s.opts.Logger.Warn("a wide transaction's decision was retired before this gateway folded it: its fold is far behind",
		"gateway", gw, "number", n, "intents", intents)
}

// wideOwn is this gateway's own wide transactions; under s.mu.
type wideOwn struct {
	// mine are this gateway's transactions whose decision it waits for:
	// true once committed, false once aborted, absent while undecided.
	mine map[uint64]*ownWide
	next uint64 // the last number given out
}

// ownWide is one of this gateway's wide transactions from its first intent
// until its decision is folded and its stagings settled.
type ownWide struct {
	decided, committed bool
	answered           bool     // its request was told ErrOutcomeUnknown
	txns               []uint64 // the stagings it joins
}

// decided marks this gateway's wide transaction n decided (a fold hook).
// It runs under s.mu.
func (s *Store) decided(gw string, n uint64, commit bool) {
	if gw == s.stage.gw {
		if o := s.wideOwn.mine[n]; o != nil {
			o.decided, o.committed = true, commit
		}
	}
	s.cond.Broadcast()
}

// runWide commits the one request of p, too wide for one batch, as a wide
// transaction: its intents, then its decision. It settles the request,
// except when it returns chain.Refused or chain.NotStored (nothing
// stored: the committer plans it again) with the reason.
func (s *Store) runWide(p *groupPlan) (chain.Outcome, error) {
	s.mu.Lock()
	s.wideOwn.next++
	n := s.wideOwn.next
	if s.wideOwn.mine == nil {
		s.wideOwn.mine = map[uint64]*ownWide{}
	}
	own := &ownWide{txns: p.Stagings()}
	s.wideOwn.mine[n] = own
	s.mu.Unlock()
	s.commitWide.Add(1)
	key := fold.WideKey(s.stage.gw, n)
	guards := map[*nats.Msg]bool{}
	for _, m := range p.Guards {
		guards[m] = true
	}
	var body []*nats.Msg
	for _, m := range p.Msgs {
		if guards[m] {
			continue
		}
		m.Header.Set(fold.HTxn, key)
		// An intent replaces nothing: an abort must leave the subject's
		// state readable by a fold that replays the stream.
		m.Header.Del(natsjs.MsgRollup)
		body = append(body, m)
	}
	deadline := p.Deadline()
	size := s.batchLimit() - 1
	for i := 0; i < len(body); i += size {
		chunk := body[i:min(i+size, len(body))]
		o, last, msgs, err := s.publishLinked(chunk, own.txns, deadline, func(m *nats.Msg) { m.Header.Set(fold.HTxn, key) })
		if o == chain.Stored {
			s.waitStored(last, msgs)
			s.cacheRecords(last, msgs)
			continue
		}
		if i == 0 && o != chain.Unknown {
			s.forgetWide(n)
			return o, err // nothing of it was stored
		}
		// Intents may be stored: abort them, so the topics are free again.
		return s.endWide(p, n, own, o, err, deadline)
	}
	x := nats.NewMsg(s.subj.Decision(s.stage.gw, n))
	x.Header.Set(fold.HDecide, "commit")
	jsext.Expect(x, 0)
	decision := append(append([]*nats.Msg{}, p.Guards...), x)
	o, last, msgs, err := s.publishLinked(decision, own.txns, deadline, func(m *nats.Msg) { m.Header.Set(fold.HDecide, strconv.FormatUint(n, 10)) })
	if o == chain.Stored {
		s.finish(p, last, msgs)
		s.forgetWide(n)
		return chain.Stored, nil
	}
	return s.endWide(p, n, own, o, err, deadline)
}

// publishLinked publishes msgs behind a marker on the chain (mark sets
// its extra headers), as chain.Chain.PublishResolved does, again after
// each attempt that stored nothing, until deadline. It returns the batch
// it published last.
func (s *Store) publishLinked(msgs []*nats.Msg, txns []uint64, deadline time.Time, mark func(*nats.Msg)) (chain.Outcome, uint64, []*nats.Msg, error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		m, d := s.chain.Mark(len(msgs)+1, txns)
		s.mu.Unlock()
		mark(m)
		batch := append([]*nats.Msg{m}, msgs...)
		o, last, err := s.chain.PublishResolved(batch, d, deadline)
		if o == chain.Unknown {
			s.mu.Lock()
			d.Answered = true // the wide transaction's own doubt settles its stagings
			d.Txns = nil
			s.mu.Unlock()
		}
		if o != chain.NotStored || !s.io.now().Before(deadline) {
			return o, last, batch, err
		}
		s.backoff(attempt)
	}
}

// endWide ends wide transaction n of this gateway after an intent or
// decision batch that was not stored, or whose outcome is unknown: it
// learns the decision, aborting the transaction if none was taken, and
// settles the request (committed after all; unknown; or, returned to the
// committer, not stored).
func (s *Store) endWide(p *groupPlan, n uint64, own *ownWide, o chain.Outcome, why error, deadline time.Time) (chain.Outcome, error) {
	committed, known, err := s.abortWide(s.stage.gw, n, deadline, false)
	switch {
	case known && committed:
		// A decision batch in doubt was stored after all.
		s.mu.Lock()
		s.forgetWideLocked(n)
		s.mu.Unlock()
		s.commitGroups.Add(1)
		s.commitRequests.Add(1)
		s.throttle(p)
		p.Settle(nil)
		s.catalog.AutoSplit(p.Wrote)
		return chain.Stored, nil
	case known:
		s.forgetWide(n)
		if o == chain.Refused {
			return chain.Refused, why
		}
		return chain.NotStored, why
	}
	s.mu.Lock()
	own.answered = true
	s.chain.Unknown++
	s.mu.Unlock()
	p.Settle(fmt.Errorf("%w: the NATS cluster (%s) did not tell within %v whether it stored the decision of wide transaction %d of gateway %s (%v, then %v); it is stored whole or not at all",
		topicstore.ErrOutcomeUnknown, jsext.RedactURLs(s.opts.URLs), s.io.now().Sub(p.Started).Round(time.Millisecond), n, s.stage.gw, why, err))
	return chain.Unknown, nil
}

func (s *Store) forgetWide(n uint64) {
	s.mu.Lock()
	s.forgetWideLocked(n)
	s.mu.Unlock()
}

func (s *Store) forgetWideLocked(n uint64) { delete(s.wideOwn.mine, n) }
