package jetstream

import (
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Outcomes in doubt, and the chain.
//
// A batch is in doubt from the moment its commit message left until the
// gateway knows whether the stream stored it (the ack was lost, came too
// late, or the connection dropped after the commit message went out; a
// stopped leader may even store it later). Every batch has a witness: a
// message of it on a subject where JetStream's compare-and-set makes the
// order decidable. It is the batch's first record batch when it has one
// (published expecting the partition's last sequence, marked Tg-Commit),
// else its first shared-consumer state, else a marker put first in the
// batch on the gateway's chain, <prefix>.f.<gateway>, whose links each
// name their predecessor (Tg-Prev) and are published expecting it. Only
// one message can ever follow a given sequence on the witness's subject:
// the first published expecting it. So the batch is stored if and only if
// its witness follows the sequence it expected, and to learn which, the
// gateway publishes a resolution on that subject expecting the same
// sequence and changing nothing (an empty record batch, a state of no
// generation, a chain link). Either the resolution is stored, and the
// batch never can be (its expectation fails from then on), or it is
// refused with the sequence of what does follow, and once the fold has
// applied that sequence it knows whether that was the witness. A fold
// that finds after the expected sequence a message expecting another
// (the one that followed was rolled up before this fold got it) marks the
// batch lost: unknown for ever. The witness costs a header, not a
// message (a marker cost 13% of the batches a single record makes: raw
// atomic batches of one and two messages, 8.6k and 7.5k a second here).
//
// Nothing in doubt is ever discarded: a batch whose outcome stays unknown
// past its requests' deadlines is answered with ErrOutcomeUnknown (08007),
// its stagings are kept, and the committer resolves it in the background
// or the fold settles it when the next write to the witness's subject
// arrives.
//
// The sweep's fences on a dead gateway's chain (jetstream/maintain) and the aborts
// of its wide transactions (wide.go) are links of the chain too, so a
// marked batch of a gateway taken for dead that wakes up is refused.
// Nothing rolls the chain up: a gateway purges its own chain below the
// links it no longer needs (purgeChain).

// marker registers a batch of n messages and returns its first message:
// the marker linking it to this gateway's chain as its fold has it
// (chain.State.Marker). It runs under s.mu.
func (s *Store) marker(n int, txns []uint64) (*nats.Msg, *chain.Doubt) {
	return s.chain.Marker(s.subj.Chain(s.stage.gw), s.fold.ChainLast(s.stage.gw), n, txns)
}

// witness registers a batch, msgs, whose message i, a record batch
// expecting prev on its subject, is its witness (chain.State.Witness). It
// runs under s.mu.
func (s *Store) witness(msgs []*nats.Msg, i int, prev uint64, txns []uint64) *chain.Doubt {
	return s.chain.Witness(s.stage.gw, msgs, i, prev, txns)
}

// witnessed decides the doubts watching subject by the message at seq
// that the fold applies (a fold hook: chain.State.Witnessed). It runs
// under s.mu.
func (s *Store) witnessed(subject string, h nats.Header, seq uint64) {
	if s.chain.Witnessed(s.stage.gw, subject, h, seq) {
		s.cond.Broadcast()
	}
}

// linked decides this gateway's doubts by a link of its chain at seq,
// whose predecessor the fold held before was at before (a fold hook:
// chain.State.Linked). It runs under s.mu.
func (s *Store) linked(gw string, before uint64, h nats.Header, seq uint64) {
	if gw != s.stage.gw {
		return
	}
	s.chain.Linked(before, h, seq)
	s.cond.Broadcast()
}

// outcome is what the committer knows of a batch it published.
type outcome uint8

const (
	stored    outcome = iota + 1 // the stream stored it (ack, or resolved)
	notStored                    // it is not stored and never will be
	refused                      // the stream refused it (an expectation, a limit): not stored
	unknown                      // in doubt past the deadline
)

// publishResolved publishes a planned batch whose first message is its
// marker (d) and returns what became of it: with its last sequence if it
// was stored; the refusal or the reason if not. A batch whose ack does not
// come is resolved (resolve) until deadline; one still in doubt then is
// unknown, and d stays registered for the fold to decide.
func (s *Store) publishResolved(msgs []*nats.Msg, d *chain.Doubt, deadline time.Time) (outcome, uint64, error) {
	ctx, cancel := s.requestUntil(deadline)
	ack, err := s.io.publishBatch(ctx, msgs)
	cancel()
	switch {
	case err == nil:
		s.settleOwn(d)
		return stored, ack.Sequence, nil
	case jsext.ErrorCode(err) != 0:
		s.settleOwn(d)
		return refused, 0, err
	case errors.Is(err, jsext.ErrBatchNotSent) || noLeader(err):
		// The commit message never reached a leader: nothing stored.
		s.settleOwn(d)
		return notStored, 0, s.unavailable(err)
	}
	// The commit message left and no answer came.
	s.commitDoubts.Add(1)
	o, last, rerr := s.resolve(d, deadline)
	if o == unknown {
		return unknown, 0, fmt.Errorf("%v, then %v", err, rerr)
	}
	s.settleOwn(d)
	if o == notStored {
		return notStored, 0, s.unavailable(err)
	}
	return o, last, nil
}

// settleOwn forgets a doubt the committer settled itself.
func (s *Store) settleOwn(d *chain.Doubt) {
	s.mu.Lock()
	s.chain.Forget(d)
	s.mu.Unlock()
}

// resolve learns whether the batch of d, whose answer never came, was
// stored, and if so its last sequence. It returns unknown when the
// cluster did not let it learn before deadline (or the store closed).
func (s *Store) resolve(d *chain.Doubt, deadline time.Time) (outcome, uint64, error) {
	var last error
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		at, dead, lost, closed := d.At, d.Dead, d.Lost, s.closed
		s.mu.Unlock()
		switch {
		case at != 0:
			return stored, d.Last(), nil
		case dead:
			return notStored, 0, nil
		case lost:
			return unknown, 0, errors.New("this gateway's fold missed what followed the batch on its chain")
		case closed:
			return unknown, 0, topicstore.ErrClosed
		case !s.io.now().Before(deadline):
			if last == nil {
				last = errors.New("no attempt to resolve it was answered")
			}
			return unknown, 0, last
		}
		m := s.resolution(d)
		ctx, cancel := s.requestUntil(deadline)
		_, err := s.io.publish(ctx, m)
		cancel()
		switch code := jsext.ErrorCode(err); {
		case err == nil:
			// The resolution follows d.prev: the batch can never be stored.
			s.mu.Lock()
			if !d.Decided() {
				d.Dead = true
			}
			s.mu.Unlock()
			continue
		case code == jsext.ErrCodeWrongLastSequence:
			// Something follows d.prev (the batch, or an earlier
			// resolution whose answer was lost): the fold tells which.
			if n, ok := jsext.WrongLast(err); ok {
				ctx, cancel := s.requestUntil(deadline)
				last = s.io.waitApplied(ctx, n)
				cancel()
				continue
			}
			last = err
		default:
			// 10164: a publish to the chain is still being proposed (the
			// batch itself, maybe); a timeout, no leader: ask again.
			last = err
		}
		s.backoff(attempt)
	}
}

// resolution is what resolve publishes for d: a message on its witness's
// subject expecting the witness's predecessor that changes nothing: a
// link of the chain; a record batch of no messages at the partition's end
// (its base is the fold's end: the subject has not changed since prev,
// else the resolution is refused); a shared-consumer state of no
// generation, which the fold ignores but for its sequence.
func (s *Store) resolution(d *chain.Doubt) *nats.Msg {
	m := nats.NewMsg(d.Subject)
	m.Header.Set(fold.HResolve, s.stage.gw+" "+strconv.FormatUint(d.ID, 10))
	jsext.Expect(m, d.Prev)
	if d.Marker {
		m.Header.Set(fold.HPrev, strconv.FormatUint(d.Prev, 10))
		return m
	}
	tok := s.subj.Tokens(d.Subject)
	if len(tok) > 0 && tok[0] == fold.KindShared {
		// A shared-consumer state of no generation: the fold takes only
		// its sequence, the state stays the one before it.
		m.Header.Set(fold.HGen, "0")
		return m
	}
	var base, cum int64
	s.mu.Lock()
	if len(tok) == 3 {
		id, _ := strconv.ParseUint(tok[1], 10, 64)
		p, _ := strconv.Atoi(tok[2])
		if t := s.fold.ByID[id]; t != nil && p < len(t.Parts) {
			base, cum = t.Parts[p].End, t.Parts[p].Bytes
		}
	}
	s.mu.Unlock()
	at := s.opts.Clock().UnixMicro()
	rec := make([]byte, topicstore.BatchHeaderLen)
	topicstore.PutBatchHeader(rec, topicstore.BatchHeader{Base: base, Count: 0, WrittenAt: at, CRC: topicstore.Checksum(nil)})
	m.Data = rec
	plan.RecordHeaders(m, s.stage.gw, base, 0, at, 0, cum, 0)
	return m
}

// backoff waits before the attempt+1st try after an answer that said
// nothing was decided: until the fold applies something (a leader took
// another gateway's write) or 10 ms growing to 250 ms, jittered.
func (s *Store) backoff(attempt int) {
	s.mu.Lock()
	from := s.applied
	s.mu.Unlock()
	d := min(10*time.Millisecond<<min(attempt, 5), 250*time.Millisecond)
	s.io.waitAdvance(from, d/2+rand.N(d/2+1))
}

// requestUntil is a request's context: the store's timeout, cut short by
// deadline.
func (s *Store) requestUntil(deadline time.Time) (context.Context, context.CancelFunc) {
	d := min(s.opts.Timeout, deadline.Sub(s.io.now()))
	return context.WithTimeout(context.Background(), max(d, time.Millisecond))
}

// settleDoubts settles the doubts whose requests were answered
// ErrOutcomeUnknown and that the fold has decided since: the stagings of
// a stored batch are committed, those of a batch never stored are
// deleted, those of a lost one left to the sweep. With resolve it first
// resolves those still undecided (the committer does, when its own
// batches are not using the chain). Any goroutine may call it.
func (s *Store) settleDoubts(ctx context.Context, resolve bool) {
	if resolve {
		s.mu.Lock()
		var open []*chain.Doubt
		for _, d := range s.chain.Doubts {
			if d.Answered && !d.Decided() {
				open = append(open, d)
			}
		}
		s.mu.Unlock()
		for _, d := range open {
			_, _, _ = s.resolve(d, s.io.now().Add(s.opts.Timeout))
		}
	}
	var committed, purge, lost []uint64
	s.mu.Lock()
	var keep []*chain.Doubt
	for _, d := range s.chain.Doubts {
		if !d.Answered || !d.Decided() {
			keep = append(keep, d)
			continue
		}
		s.chain.Decided++
		switch {
		case d.At != 0:
			committed = append(committed, d.Txns...)
		case d.Dead:
			purge = append(purge, d.Txns...)
		default:
			s.opts.Logger.Warn("a batch's outcome is lost: this gateway's fold missed what followed it on its chain (purged by another gateway's sweep while this one was away); its stagings are left to the sweep",
				"gateway", s.stage.gw, "batch", d.ID, "stagings", len(d.Txns))
			lost = append(lost, d.Txns...)
		}
	}
	s.chain.Doubts = keep
	s.mu.Unlock()
	s.stage.settle(committed, stagingCommitted)
	s.stage.settle(lost, stagingCommitted)
	s.stage.settle(purge, stagingOpen)
	for _, txn := range purge {
		_ = s.DiscardStaged(txn)
	}
}

// doubtsOpen reports whether a batch answered ErrOutcomeUnknown is not
// settled yet.
func (s *Store) doubtsOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.chain.Doubts {
		if d.Answered {
			return true
		}
	}
	return false
}

// purgeChain deletes this gateway's chain below its last link as folded,
// or below the predecessor of its oldest batch not settled yet (whose
// outcome the link after that predecessor decides), when that moved on.
func (s *Store) purgeChain(ctx context.Context) {
	s.mu.Lock()
	below := s.fold.ChainLast(s.stage.gw)
	for _, d := range s.chain.Doubts {
		below = min(below, d.Prev)
	}
	due := below > s.chain.Purged
	s.mu.Unlock()
	if !due {
		return
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	if err := s.io.purge(rctx, s.subj.Chain(s.stage.gw), below); err == nil {
		s.mu.Lock()
		s.chain.Purged = max(s.chain.Purged, below)
		s.mu.Unlock()
	}
}

// errOutcome builds the answer to the requests of a batch left in doubt.
func (s *Store) errOutcome(d *chain.Doubt, deadline time.Duration, cause error) error {
	return fmt.Errorf("%w: the NATS cluster (%s) received the commit (batch %d of gateway %s) and did not tell within %v whether it stored it (%v); it is stored whole or not at all",
		topicstore.ErrOutcomeUnknown, jsext.RedactURLs(s.opts.URLs), d.ID, s.stage.gw, deadline.Round(time.Millisecond), cause)
}
