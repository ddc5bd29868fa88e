package jetstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/chain"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/sharedcore"
)

// The committer: one goroutine per gateway runs the groups. What requests
// arrived while the previous batch was in flight are planned together
// (package plan) and published as one atomic batch (group commit), so a
// gateway never has two expectations on one subject in flight (the server
// refuses those, 10164). Each batch begins with its marker on the
// gateway's chain (jetstream/chain), so that a batch whose answer never
// came is resolved, not guessed.
//
// What becomes of a group:
//   - stored: the fold applies it (waitStored: for as long as that takes,
//     since it is committed), and its requests are answered;
//   - refused because the fold was behind (10071, 10164, 10176, 10210):
//     planned again once it caught up, at most maxAttempts times;
//   - not stored (no leader during an election, a batch that never left,
//     one resolved as not stored): published again until each request's
//     deadline (its statement's, else Options.CommitTimeout), when it is
//     answered ErrUnavailable, which says that nothing was stored;
//   - in doubt past the earliest deadline of its requests: answered
//     ErrOutcomeUnknown (08007); the fold settles it later.
//
// A request too wide for one batch goes alone, as a wide transaction
// (jetstream/wide); one touching a topic a wide transaction holds waits
// for it.

// maxAttempts bounds how often a group refused for a stale plan is
// planned again.
const maxAttempts = 64

// maxGroupReqs bounds the requests the committer gathers into one group.
const maxGroupReqs = 256

// settleEvery is how often an idle committer tries again to settle what it
// answered ErrOutcomeUnknown.
const settleEvery = time.Second

// lockPoll is how often requests waiting for a wide transaction's topics
// are planned again when the fold shows nothing new.
const lockPoll = 50 * time.Millisecond

// committer runs the groups until the store closes.
func (s *Store) committer() {
	defer s.wg.Done()
	var queued, blocked []*plan.Request
	var blockedAt uint64
	for {
		if len(queued) == 0 {
			var wake <-chan time.Time
			switch {
			case len(blocked) > 0:
				wake = time.After(lockPoll)
			case s.chain.Answered() || s.wide.Answered():
				wake = time.After(settleEvery)
			}
			select {
			case r := <-s.commits:
				queued = append(queued, r)
			case <-wake:
				s.chain.Settle(context.Background(), true)
				if s.wide.Answered() {
					s.wide.Settle(context.Background())
				}
			case <-s.done:
				s.drain(append(queued, blocked...))
				return
			}
		}
		if len(blocked) > 0 {
			s.mu.Lock()
			moved := s.applied != blockedAt
			s.mu.Unlock()
			if moved || len(queued) == 0 {
				s.wide.AbortOrphans(blocked)
				queued = append(blocked, queued...)
				blocked = nil
			}
		}
	more:
		for len(queued) < maxGroupReqs {
			select {
			case r := <-s.commits:
				queued = append(queued, r)
			default:
				break more
			}
		}
		n := min(len(queued), maxGroupReqs)
		group := s.linger(queued[:n:n])
		queued = queued[n:]
		later, locked := s.runGroup(group)
		queued = append(later, queued...)
		if len(locked) > 0 {
			s.mu.Lock()
			blockedAt = s.applied
			s.mu.Unlock()
			blocked = append(blocked, locked...)
		}
		s.chain.Settle(context.Background(), true)
		if s.wide.Answered() {
			s.wide.Settle(context.Background())
		}
	}
}

// drain fails what is still queued at Close, and what is left of the
// requests put off.
func (s *Store) drain(left []*plan.Request) {
	for _, r := range left {
		r.Out <- plan.Outcome{Err: topicstore.ErrClosed}
	}
	for {
		select {
		case r := <-s.commits:
			r.Out <- plan.Outcome{Err: topicstore.ErrClosed}
		default:
			return
		}
	}
}

// runGroup plans, publishes and settles one group (see above). It returns
// the requests put off: later (the batch was full, or a wide request goes
// on its own next) and locked (a wide transaction holds a topic they
// touch).
func (s *Store) runGroup(group []*plan.Request) (later, locked []*plan.Request) {
	var why error // why the last attempt stored nothing
	replans := 0
	for attempt := 0; ; attempt++ {
		if group = s.expire(group, why); len(group) == 0 {
			return later, locked
		}
		p := s.plan(group)
		later, locked = append(later, p.Later...), append(locked, p.Locked...)
		group = p.Reqs
		if p.Wide {
			o, err := s.wide.Run(p.Batch)
			switch o {
			case chain.Stored, chain.Unknown:
				return later, locked // answered
			case chain.Refused:
				// An expectation failed: plan again once caught up.
				if replans++; replans > maxAttempts {
					p.Settle(s.gaveUp(replans, err))
					return later, locked
				}
				if cerr := s.catchUp(err); cerr != nil && !errors.Is(cerr, topicstore.ErrUnavailable) {
					p.Settle(cerr)
					return later, locked
				}
			default:
				s.backoff(attempt)
			}
			why = err
			continue
		}
		if len(p.Msgs) == 0 {
			p.Settle(nil)
			return later, locked
		}
		deadline := p.Deadline()
		o, last, err := s.chain.PublishResolved(p.Msgs, p.doubt, deadline)
		switch o {
		case chain.Stored:
			s.finish(p.Batch, last, p.Msgs)
			return later, locked
		case chain.Unknown:
			s.mu.Lock()
			p.doubt.Answered = true
			s.chain.Unknown++
			s.mu.Unlock()
			p.Settle(s.chain.ErrOutcome(p.doubt, s.io.now().Sub(p.Started), err))
			return later, locked
		case chain.NotStored:
			why = err
			s.backoff(attempt)
			continue
		}
		// Refused.
		why = err
		code := jsext.ErrorCode(err)
		if code != jsext.ErrCodeWrongLastSequence && code != jsext.ErrCodeWrongLastSequenceConstant &&
			code != jsext.ErrCodeBatchIncomplete && code != jsext.ErrCodeBatchTooManyInflight {
			p.Settle(s.unavailable(err))
			return later, locked
		}
		s.commitReplans.Add(1)
		if replans++; replans > maxAttempts {
			p.Settle(s.gaveUp(replans, err))
			return later, locked
		}
		switch code {
		case jsext.ErrCodeWrongLastSequence:
			if err := s.catchUp(err); err != nil && !errors.Is(err, topicstore.ErrUnavailable) {
				p.Settle(err) // the fold failed
				return later, locked
			}
			if replans > 1 && len(p.Fresh) > 0 {
				// Refused again though caught up: a producer that expired
				// may be expected wrongly (producers.go).
				s.repairProducers(p.Fresh)
			}
		case jsext.ErrCodeWrongLastSequenceConstant, jsext.ErrCodeBatchTooManyInflight:
			// Another write to the same subjects is being proposed: retry
			// once the fold has seen something land, or after a short
			// random while (two gateways must not retry in step).
			s.backoff(min(attempt, 3))
		}
	}
}

// gaveUp is the answer to a group refused too often.
func (s *Store) gaveUp(n int, err error) error {
	return fmt.Errorf("%w: the NATS cluster (%s) refused the commit %d times, each time for a write to the same subjects still in progress or not yet seen by this gateway; nothing of it was stored: %v",
		topicstore.ErrUnavailable, jsext.RedactURLs(s.opts.URLs), n, err)
}

// expire answers the requests of group whose deadline passed, or whose
// statement ended, before the next attempt (so nothing of them is
// stored), and returns the others. why is what kept the last attempt from
// storing it.
func (s *Store) expire(group []*plan.Request, why error) []*plan.Request {
	now := s.io.now()
	keep := group[:0]
	for _, r := range group {
		switch {
		case r.Ctx.Err() != nil:
			r.Out <- plan.Outcome{Err: fmt.Errorf("%w; nothing of the commit was stored", context.Cause(r.Ctx))}
		case !now.Before(r.Deadline):
			r.Out <- plan.Outcome{Err: s.timedOut(r, why)}
		default:
			keep = append(keep, r)
		}
	}
	return keep
}

// timedOut is the answer to a request whose deadline passed with nothing
// of it stored.
func (s *Store) timedOut(r *plan.Request, why error) error {
	reason := "it waited for a wide transaction's topics"
	if why != nil {
		reason = why.Error()
		if i := strings.Index(reason, ": "); errors.Is(why, topicstore.ErrUnavailable) && i >= 0 {
			reason = reason[i+2:]
		}
	}
	return fmt.Errorf("%w: the NATS cluster (%s) did not store the commit within %v (%s); nothing of it was stored",
		topicstore.ErrUnavailable, jsext.RedactURLs(s.opts.URLs), r.Deadline.Sub(r.Received).Round(time.Millisecond), reason)
}

// finish settles a group the stream stored, last being its last sequence:
// the fold applies it, and its requests are answered.
func (s *Store) finish(p *plan.Batch, last uint64, msgs []*nats.Msg) {
	s.commitGroups.Add(1)
	s.commitRequests.Add(int64(len(p.Reqs)))
	s.waitStored(last, msgs)
	s.cacheRecords(last, msgs)
	s.throttle(p)
	p.Settle(nil)
	s.catalog.AutoSplit(p.Wrote)
}

// waitStored waits until the fold has applied a batch the stream stored,
// msgs, whose last sequence is last, for as long as that takes: the batch
// is committed whatever happens, so its requests must not be told
// otherwise. It returns early only when the store closes or its fold
// failed (every later statement reports that).
func (s *Store) waitStored(last uint64, msgs []*nats.Msg) {
	for {
		err := s.waitOwn(context.Background(), last, msgs)
		if err == nil || !errors.Is(err, topicstore.ErrUnavailable) {
			return
		}
	}
}

// cacheRecords puts the record batches of a batch the stream acknowledged
// at ack (its last sequence) in the record cache: readers of what this
// gateway just wrote need no direct get.
func (s *Store) cacheRecords(ack uint64, msgs []*nats.Msg) {
	first := ack - uint64(len(msgs)) + 1
	for i, m := range msgs {
		if s.subj.IsKind(m.Subject, fold.KindData) {
			s.reads.Cache().Put(first+uint64(i), m.Data)
		}
	}
}

// throttle sets each request's write-speed delay: the time the most
// indebted of its partitions needs, now that the fold charged the batch.
func (s *Store) throttle(p *plan.Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Clock()
	for i, parts := range p.Wrote {
		for _, k := range parts {
			t := s.fold.ByID[k.Topic]
			if t == nil || int(k.Part) >= len(t.Parts) {
				continue
			}
			rate, burst := topicstore.ThrottleLimits(&t.Rec.Config)
			if rate == 0 {
				continue
			}
			b := t.Parts[k.Part].Bucket // a copy: the fold owns the bucket
			b.Refill(now, rate, burst)
			p.Res[i].Throttle = max(p.Res[i].Throttle, b.Debt(rate))
		}
	}
}

// catchUp waits until the fold has applied what made a batch stale: the
// sequence a 10071 names, else the stream's last one.
func (s *Store) catchUp(refusal error) error {
	ctx, cancel := s.request(context.Background())
	defer cancel()
	if n, ok := jsext.WrongLast(refusal); ok {
		return s.io.waitApplied(ctx, n)
	}
	return s.io.sync(ctx)
}

// groupPlan is a group's plan (plan.Batch) and, once it is registered
// on the chain, its doubt (jetstream/chain); nil for an empty batch and a
// wide one (jetstream/wide marks each of its batches).
type groupPlan struct {
	*plan.Batch
	doubt *chain.Doubt
}

// plan plans group on the fold (plan.Planner.Plan) and registers the
// batch on the chain.
func (s *Store) plan(group []*plan.Request) *groupPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &groupPlan{Batch: s.planner().Plan(group)}
	if p.Mark {
		s.markBatch(p)
	}
	return p
}

// planner is the commit's planner on this gateway's fold and caches; it
// is used under s.mu.
func (s *Store) planner() *plan.Planner {
	return &plan.Planner{Fold: s.fold, Subj: s.subj, Gw: s.stage.gw, Clock: s.opts.Clock, Now: s.io.now,
		BatchLimit: s.batchLimit(), ProducerExpiry: s.opts.ProducerExpiry, Window: s.shWindow(), Caches: &s.shc}
}

// shWindow is each partition's acquisition window (the planner's, and
// the shared consumers' fill: jetstream/queue).
func (s *Store) shWindow() int64 {
	if s.shWin > 0 {
		return int64(s.shWin)
	}
	return sharedcore.DefaultWindow
}

// markBatch registers the batch's doubt (jetstream/chain) with its
// witness: its first record batch or, without one, its first
// shared-consumer state, or, without either (or when it joins staged
// chunks), a marker put first. It runs under s.mu.
func (s *Store) markBatch(p *groupPlan) {
	staged := false
	for i, r := range p.Reqs {
		staged = staged || p.Errs[i] == nil && r.Staged
	}
	// A batch joining staged chunks carries a link of the chain whatever
	// else it holds: the sweep fences the chain before it deletes chunks
	// (jetstream/maintain), so the link is what refuses a batch planned before the
	// fence.
	if i, prev, ok := p.WitnessIndex(); ok && !staged {
		p.doubt = s.chain.Witness(s.stage.gw, p.Msgs, i, prev, p.Stagings())
		return
	}
	var m *nats.Msg
	m, p.doubt = s.chain.Mark(len(p.Msgs)+1, p.Stagings())
	p.Msgs = append([]*nats.Msg{m}, p.Msgs...)
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

// batchLimit is the most messages one atomic batch may hold.
func (s *Store) batchLimit() int {
	if s.maxBatch > 0 {
		return s.maxBatch
	}
	return jsext.MaxBatchMsgs
}
