package wide

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/plan"
)

// Host is what wide transactions and the retirement of their decisions
// need of the store: what the chain they publish through needs (the
// store's lock, under which the fold's state, the chain's doubts and this
// gateway's own transactions are read and changed; its cluster I/O; its
// back-off and stagings), and the size of an atomic batch.
type Host interface {
	chain.Host
	// BatchLimit is the most messages one atomic batch may hold.
	BatchLimit() int
}

// Commit is the commit protocol's part of a wide transaction: what the
// committer does with a batch the stream stored and with a request whose
// transaction committed.
type Commit interface {
	// Stored waits until the fold has applied msgs, a batch of intents
	// the stream stored whose last sequence is last, and caches their
	// record batches.
	Stored(last uint64, msgs []*nats.Msg)
	// Finish settles p, whose decision batch msgs the stream stored with
	// last as its last sequence: the fold applies it, and its request is
	// answered.
	Finish(p *plan.Batch, last uint64, msgs []*nats.Msg)
	// Committed answers p's request, whose decision batch, in doubt, was
	// stored after all (the fold applied it).
	Committed(p *plan.Batch)
}

// Config is what wide transactions and the retirement of their
// decisions know of their gateway (the retirement needs only Subjects,
// Fold, Timeout and Hold).
type Config struct {
	Gateway  string           // this gateway's id: its transactions' and its chain's
	Subjects fold.Subjects    // the stream's subjects
	Fold     *fold.State      // the fold's state, read under the host's lock
	Clock    func() time.Time // tells whose heartbeat expired
	Timeout  time.Duration    // bounds each request to the cluster
	// Hold is how long a decision stays in the stream at least after it
	// was taken (Options.DecisionHold), and the Nats-TTL of the marker
	// that retires it.
	Hold   time.Duration
	URLs   []string     // the cluster's nodes, named (redacted) in an answer of outcome unknown
	Logger *slog.Logger // told of a decision retired before this gateway folded it
	// Chain is this gateway's chain: each batch of its transactions is
	// linked to it, and resolved through it when its answer never comes.
	Chain *chain.Chain
}

// Transactions are this gateway's wide transactions, from their first
// intent until their decision is folded and their stagings settled, and
// the aborts of other gateways' that lost their way (doc.go).
type Transactions struct {
	cfg Config
	h   Host
	c   Commit

	// mine are this gateway's transactions whose decision it waits for,
	// under the host's lock.
	mine  map[uint64]*own
	next  uint64       // the last number given out, under the host's lock
	begun atomic.Int64 // transactions this gateway began
}

// own is one of this gateway's wide transactions from its first intent
// until its decision is folded and its stagings settled.
type own struct {
	decided, committed bool
	answered           bool     // its request was told ErrOutcomeUnknown
	txns               []uint64 // the stagings it joins
}

// NewTransactions returns this gateway's wide transactions.
func NewTransactions(cfg Config, h Host, c Commit) *Transactions {
	return &Transactions{cfg: cfg, h: h, c: c}
}

// Begun returns how many wide transactions this gateway began.
func (t *Transactions) Begun() int64 { return t.begun.Load() }

// Unsettled returns how many of this gateway's transactions are not
// settled yet. It runs under the host's lock.
func (t *Transactions) Unsettled() int { return len(t.mine) }

// Decided marks this gateway's wide transaction n decided (the fold's
// Decided hook, for every gateway's gw). It runs under the host's lock.
func (t *Transactions) Decided(gw string, n uint64, commit bool) {
	if gw == t.cfg.Gateway {
		if o := t.mine[n]; o != nil {
			o.decided, o.committed = true, commit
		}
	}
}

// RetiredLate warns that a decision was retired before this gateway's
// fold applied it (the fold's RetiredLate hook).
func (t *Transactions) RetiredLate(gw string, n uint64, intents int) {
	t.cfg.Logger.Warn("a wide transaction's decision was retired before this gateway folded it: its fold is far behind",
		"gateway", gw, "number", n, "intents", intents)
}

// Run commits the one request of p, too wide for one batch, as a wide
// transaction: its intents, then its decision. It settles the request,
// except when it returns chain.Refused or chain.NotStored (nothing
// stored: the committer plans it again) with the reason.
func (t *Transactions) Run(p *plan.Batch) (chain.Outcome, error) {
	t.h.Lock()
	t.next++
	n := t.next
	if t.mine == nil {
		t.mine = map[uint64]*own{}
	}
	o := &own{txns: p.Stagings()}
	t.mine[n] = o
	t.h.Unlock()
	t.begun.Add(1)
	key := fold.WideKey(t.cfg.Gateway, n)
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
	size := t.h.BatchLimit() - 1
	for i := 0; i < len(body); i += size {
		chunk := body[i:min(i+size, len(body))]
		out, last, msgs, err := t.publishLinked(chunk, o.txns, deadline, func(m *nats.Msg) { m.Header.Set(fold.HTxn, key) })
		if out == chain.Stored {
			t.c.Stored(last, msgs)
			continue
		}
		if i == 0 && out != chain.Unknown {
			t.forget(n)
			return out, err // nothing of it was stored
		}
		// Intents may be stored: abort them, so the topics are free again.
		return t.end(p, n, o, out, err, deadline)
	}
	x := nats.NewMsg(t.cfg.Subjects.Decision(t.cfg.Gateway, n))
	x.Header.Set(fold.HDecide, "commit")
	jsext.Expect(x, 0)
	decision := append(append([]*nats.Msg{}, p.Guards...), x)
	out, last, msgs, err := t.publishLinked(decision, o.txns, deadline, func(m *nats.Msg) { m.Header.Set(fold.HDecide, strconv.FormatUint(n, 10)) })
	if out == chain.Stored {
		t.c.Finish(p, last, msgs)
		t.forget(n)
		return chain.Stored, nil
	}
	return t.end(p, n, o, out, err, deadline)
}

// publishLinked publishes msgs behind a marker on the chain (mark sets
// its extra headers), as chain.Chain.PublishResolved does, again after
// each attempt that stored nothing, until deadline. It returns the batch
// it published last.
func (t *Transactions) publishLinked(msgs []*nats.Msg, txns []uint64, deadline time.Time, mark func(*nats.Msg)) (chain.Outcome, uint64, []*nats.Msg, error) {
	for attempt := 0; ; attempt++ {
		t.h.Lock()
		m, d := t.cfg.Chain.Mark(len(msgs)+1, txns)
		t.h.Unlock()
		mark(m)
		batch := append([]*nats.Msg{m}, msgs...)
		o, last, err := t.cfg.Chain.PublishResolved(batch, d, deadline)
		if o == chain.Unknown {
			t.h.Lock()
			d.Answered = true // the wide transaction's own doubt settles its stagings
			d.Txns = nil
			t.h.Unlock()
		}
		if o != chain.NotStored || !t.h.Now().Before(deadline) {
			return o, last, batch, err
		}
		t.h.Backoff(attempt)
	}
}

// end ends wide transaction n of this gateway after an intent or
// decision batch that was not stored, or whose outcome is unknown: it
// learns the decision, aborting the transaction if none was taken, and
// settles the request (committed after all; unknown; or, returned to the
// committer, not stored).
func (t *Transactions) end(p *plan.Batch, n uint64, o *own, out chain.Outcome, why error, deadline time.Time) (chain.Outcome, error) {
	committed, known, err := t.abort(t.cfg.Gateway, n, deadline, false)
	switch {
	case known && committed:
		// A decision batch in doubt was stored after all.
		t.h.Lock()
		t.forgetLocked(n)
		t.h.Unlock()
		t.c.Committed(p)
		return chain.Stored, nil
	case known:
		t.forget(n)
		if out == chain.Refused {
			return chain.Refused, why
		}
		return chain.NotStored, why
	}
	t.h.Lock()
	o.answered = true
	t.cfg.Chain.Unknown++
	t.h.Unlock()
	p.Settle(fmt.Errorf("%w: the NATS cluster (%s) did not tell within %v whether it stored the decision of wide transaction %d of gateway %s (%v, then %v); it is stored whole or not at all",
		topicstore.ErrOutcomeUnknown, jsext.RedactURLs(t.cfg.URLs), t.h.Now().Sub(p.Started).Round(time.Millisecond), n, t.cfg.Gateway, why, err))
	return chain.Unknown, nil
}

func (t *Transactions) forget(n uint64) {
	t.h.Lock()
	t.forgetLocked(n)
	t.h.Unlock()
}

func (t *Transactions) forgetLocked(n uint64) { delete(t.mine, n) }

// requestUntil is a request's context: the store's timeout, cut short by
// deadline.
func (t *Transactions) requestUntil(deadline time.Time) (context.Context, context.CancelFunc) {
	d := min(t.cfg.Timeout, deadline.Sub(t.h.Now()))
	return context.WithTimeout(context.Background(), max(d, time.Millisecond))
}
