package chain

import (
	"strconv"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// Doubt is a batch of this gateway from its plan until the fold knows
// whether it was stored; under the store's lock. Its witness is the
// message by which the fold recognises it: its first record batch, when
// it has one (subject the partition's, carrying Tg-Commit), else a marker
// on the chain, first in the batch.
type Doubt struct {
	ID      uint64 // the batch's number in this process (Tg-Commit)
	Subject string // the witness's subject
	Prev    uint64 // the witness's expectation: the subject's last sequence before it
	Idx     int    // the witness's place in the batch
	N       int    // the batch's messages
	Marker  bool   // the witness is a marker on the chain
	// At is the witness's sequence once the fold saw it follow Prev;
	// Dead: something else followed Prev, so the batch is not stored and
	// never will be; Lost: the fold missed what followed Prev.
	At   uint64
	Dead bool
	Lost bool
	// Answered: the requests were told ErrOutcomeUnknown; what the batch
	// staged is settled by the store once the fold decides.
	Answered bool
	Txns     []uint64 // the stagings the batch joins
}

// Decided reports whether the fold decided the batch: stored (At),
// never to be (Dead) or unknown for ever (Lost).
func (d *Doubt) Decided() bool { return d.At != 0 || d.Dead || d.Lost }

// Last is the batch's last sequence, once its witness was seen at At.
func (d *Doubt) Last() uint64 { return d.At - uint64(d.Idx) + uint64(d.N) - 1 }

// State is this gateway's side of its chain and of its batches in
// doubt; under the store's lock.
type State struct {
	Next   uint64   // the last batch number given out
	Doubts []*Doubt // batches planned and not settled, oldest first
	// Watch are the doubts whose witness is a record batch, by subject.
	Watch   map[string][]*Doubt
	Purged  uint64 // the chain is purged below this sequence
	Decided int64  // doubts the fold decided after their requests were answered (a metric)
	Unknown int64  // batches answered ErrOutcomeUnknown (a metric)
}

// Marker registers a batch of n messages and returns its first message:
// the marker linking it to the chain, whose subject is subject and whose
// last link, as this gateway's fold has it, is at prev. It runs under the
// store's lock.
func (c *State) Marker(subject string, prev uint64, n int, txns []uint64) (*nats.Msg, *Doubt) {
	c.Next++
	d := &Doubt{ID: c.Next, Subject: subject, Prev: prev, N: n, Marker: true, Txns: txns}
	c.Doubts = append(c.Doubts, d)
	m := nats.NewMsg(d.Subject)
	m.Header.Set(fold.HCommit, strconv.FormatUint(d.ID, 10))
	m.Header.Set(fold.HPrev, strconv.FormatUint(d.Prev, 10))
	jsext.Expect(m, d.Prev)
	return m, d
}

// Witness registers a batch, msgs, whose message i, a record batch
// expecting prev on its subject, is its witness, and marks that message.
// It runs under the store's lock.
// The mark names gw, this gateway.
func (c *State) Witness(gw string, msgs []*nats.Msg, i int, prev uint64, txns []uint64) *Doubt {
	c.Next++
	d := &Doubt{ID: c.Next, Subject: msgs[i].Subject, Prev: prev, Idx: i, N: len(msgs), Txns: txns}
	c.Doubts = append(c.Doubts, d)
	if c.Watch == nil {
		c.Watch = map[string][]*Doubt{}
	}
	c.Watch[d.Subject] = append(c.Watch[d.Subject], d)
	msgs[i].Header.Set(fold.HCommit, gw+" "+strconv.FormatUint(d.ID, 10))
	return d
}

// Witnessed decides the doubts watching subject by the message at seq
// that the fold applies: the first one after a doubt's prev is its
// witness, or something else, which its witness can never follow; gw is
// this gateway. It reports whether any doubt watched subject (the store
// then wakes its waiters). It runs under the store's lock.
func (c *State) Witnessed(gw, subject string, h nats.Header, seq uint64) bool {
	ds := c.Watch[subject]
	if len(ds) == 0 {
		return false
	}
	keep := ds[:0]
	commit := h.Get(fold.HCommit)
	// What a message expected is kept in it: the one that followed prev
	// expected prev. One that expected something else, or nothing, comes
	// after a message this fold missed (a state rolled up by the next
	// before this fold got it), which may have been the witness.
	expected, hasExpect := h.Get(natsjs.ExpectedLastSubjSeqHeader), h.Get(natsjs.ExpectedLastSubjSeqSubjHeader) == ""
	for _, d := range ds {
		switch {
		case d.Decided():
			continue
		case seq <= d.Prev:
		case commit == gw+" "+strconv.FormatUint(d.ID, 10):
			d.At = seq
			continue
		case hasExpect && expected == strconv.FormatUint(d.Prev, 10):
			d.Dead = true
			continue
		default:
			d.Lost = true
			continue
		}
		keep = append(keep, d)
	}
	if len(keep) == 0 {
		delete(c.Watch, subject)
	} else {
		c.Watch[subject] = keep
	}
	return true
}

// Linked decides this gateway's doubts by a link of its chain at seq,
// whose predecessor the fold held before was at before (the fold's
// Linked hook, for this gateway's chain). It runs under the store's lock.
func (c *State) Linked(before uint64, h nats.Header, seq uint64) {
	prev := uint64(fold.HeaderInt(h, fold.HPrev))
	if h.Get(fold.HPrev) == "" {
		prev = before // a link written before Tg-Prev: its predecessor is the one folded before it
	}
	id := uint64(fold.HeaderInt(h, fold.HCommit))
	for _, d := range c.Doubts {
		switch {
		case !d.Marker || d.Decided():
		case d.Prev == prev && id == d.ID && id != 0:
			d.At = seq
		case d.Prev == prev:
			d.Dead = true
		case d.Prev >= before && d.Prev < prev:
			// What followed d.prev was deleted before this fold got it.
			d.Lost = true
		}
	}
}

// Forget drops d from the doubts (its requests were answered from what
// the committer learned itself). It runs under the store's lock.
func (c *State) Forget(d *Doubt) {
	for i, x := range c.Doubts {
		if x == d {
			c.Doubts = append(c.Doubts[:i], c.Doubts[i+1:]...)
			break
		}
	}
	if d.Marker {
		return
	}
	ws := c.Watch[d.Subject]
	for i, x := range ws {
		if x == d {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(c.Watch, d.Subject)
	} else {
		c.Watch[d.Subject] = ws
	}
}
