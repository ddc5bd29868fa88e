package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Shared consumers (message locks, acks, delivery counts, dead letters)
// with the embedded store's semantics: the decisions are the shared
// core's (package sharedcore), the state lives in the stream
// (shared_fold.go) and every change is a step in the committer's plan
// (shared_plan.go). What a gateway keeps is a cache: a gateway that dies
// leaves its locks in the cluster's state with their deadlines, and any
// gateway hands the messages out again once those have passed; delivery
// counts, finished states, dead-letter moves and the counters survive
// any gateway. A SharedStore call returns once its state message is
// stored on a quorum (its Wait has nothing left to wait for).
//
// Differences with the embedded store, by design: lock deadlines are
// compared with each gateway's own clock (keep the gateways' clocks in
// sync, as for any lease); the counters of SharedPartitionStats count
// since the consumer was created, cluster-wide, not since this process
// loaded it; a lock survives a gateway's restart (it expires at its
// deadline) where the embedded store's locks are in memory.

func noWait() error { return nil }

// Acquire implements topicstore.SharedStore.
func (s *Store) Acquire(ctx context.Context, req topicstore.AcquireRequest) ([]topicstore.Acquired, error) {
	return topicstore.WaitAcquired(s.AcquireAsync(ctx, req))
}

// AcquireAsync implements topicstore.SharedStore: the locks and delivery
// counts are stored when it returns; Wait finishes the dead-letter moves
// the call's lock expiry started.
func (s *Store) AcquireAsync(ctx context.Context, req topicstore.AcquireRequest) (topicstore.AcquireResult, error) {
	res := topicstore.AcquireResult{Wait: noWait}
	if req.Max <= 0 {
		return res, nil
	}
	var st *shStep
	for attempt := 0; ; attempt++ {
		st = &shStep{kind: stAcquire, topic: req.Topic, consumer: req.Consumer, holder: s.holder(req.Session),
			max: req.Max, timeout: req.Timeout, maxBytes: req.MaxBytes, watch: req.Watch}
		if err := s.sharedRun(ctx, st); err != nil {
			return res, err
		}
		// Locks that ended while the commit taking them waited (out an
		// election longer than the processing timeout) hold nothing:
		// another gateway may have handed the messages out and had them
		// acknowledged meanwhile. They are not handed out; the step is
		// taken again, from the state as it is now.
		if len(st.out.picked) == 0 || s.opts.Clock().Before(st.out.until) {
			break
		}
		s.expiredAcquires.Add(1)
		if attempt == 2 {
			st.out.picked = nil // nothing held: the caller asks again
			break
		}
	}
	refs := make([]topicstore.MsgRef, len(st.out.picked))
	for i, p := range st.out.picked {
		refs[i] = p.ref
	}
	got, err := s.readPicked(ctx, req.Topic, req.Consumer, refs)
	if err != nil {
		s.ReleaseUndelivered(req.Topic, req.Consumer, req.Session, refs)
		return res, err
	}
	for _, p := range st.out.picked {
		if m, ok := got[p.ref]; ok { // a message retention deleted meanwhile is left out
			res.Messages = append(res.Messages, topicstore.Acquired{Message: m, DeliveryCount: int(p.deliv), LockedUntil: st.out.until})
		}
	}
	slices.SortFunc(res.Messages, func(a, b topicstore.Acquired) int {
		if c := cmp.Compare(a.Message.Partition, b.Message.Partition); c != 0 {
			return c
		}
		return cmp.Compare(a.Message.Offset, b.Message.Offset)
	})
	if req.Watch && len(res.Messages) == 0 {
		res.Published, res.Freed, res.NextReady = st.out.published, st.out.freed, st.out.nextReady
		if res.Published == nil { // what was picked is gone: try again at once
			ch := make(chan struct{})
			close(ch)
			res.Published, res.Freed = ch, ch
		}
	}
	if limbo := st.out.limbo; len(limbo) > 0 {
		res.Wait = func() error {
			s.finishMoves(context.Background(), req.Topic, req.Consumer, limbo)
			return nil
		}
	}
	return res, nil
}

// SharedAction implements topicstore.SharedStore.
func (s *Store) SharedAction(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, error) {
	return topicstore.WaitOutcomes(s.SharedActionAsync(ctx, req))
}

// SharedActionAsync implements topicstore.SharedStore: the outcomes are
// stored when it returns (wait has nothing left to do).
func (s *Store) SharedActionAsync(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, func() error, error) {
	st := &shStep{kind: stAct, topic: req.Topic, consumer: req.Consumer, holder: s.holder(req.Session),
		action: req.Action, refs: req.Refs, until: req.Until}
	if err := s.sharedRun(ctx, st); err != nil {
		return nil, nil, err
	}
	s.finishMoves(ctx, req.Topic, req.Consumer, st.out.limbo)
	return st.out.outcomes, noWait, nil
}

// ReleaseSession implements topicstore.SharedStore.
func (s *Store) ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	st := &shStep{kind: stRelease, topic: topic, consumer: consumer, holder: s.holder(session), refs: refs}
	if s.sharedRun(context.Background(), st) == nil {
		s.finishMoves(context.Background(), topic, consumer, st.out.limbo)
	}
}

// ReleaseUndelivered implements topicstore.SharedStore.
func (s *Store) ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	_ = s.sharedRun(context.Background(), &shStep{kind: stUndeliver, topic: topic, consumer: consumer, holder: s.holder(session), refs: refs})
}

// SharedStats implements topicstore.SharedStore: as of after the
// dead-letter moves that lock expiry starts.
func (s *Store) SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error) {
	ctx := context.Background()
	st := &shStep{kind: stStats, topic: topic, consumer: consumer}
	for attempt := 0; ; attempt++ {
		if err := s.sharedRun(ctx, st); err != nil {
			return nil, err
		}
		if len(st.out.limbo) == 0 || attempt >= 2 {
			return st.out.stats, nil
		}
		if err := s.readBodies(ctx, st, st.out.limbo); err != nil {
			return nil, err
		}
	}
}

// sharedAcks makes a commit's acknowledgements steps of its request (a
// committer hook), with the consumers' windows loaded.
func (s *Store) sharedAcks(ctx context.Context, acks []topicstore.SharedAck) ([]*shStep, error) {
	var steps []*shStep
	filled := map[[2]string]bool{}
	for _, a := range acks {
		if k := [2]string{a.Topic, a.Consumer}; !filled[k] {
			filled[k] = true
			if err := s.sharedFill(ctx, a.Topic, a.Consumer); err != nil {
				return nil, err
			}
		}
		steps = append(steps, &shStep{kind: stAck, topic: a.Topic, consumer: a.Consumer, holder: s.holder(a.Session), refs: a.Refs})
	}
	return steps, nil
}

// sharedRun runs one step through the committer: the consumer's window
// loaded first, the step sent again with the bodies its dead-letter moves
// need when the plan asks for them.
func (s *Store) sharedRun(ctx context.Context, st *shStep) error {
	if s.isClosed() {
		return topicstore.ErrClosed
	}
	if refs := s.movesAhead(st); len(refs) > 0 {
		if err := s.readBodies(ctx, st, refs); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		if err := s.sharedFill(ctx, st.topic, st.consumer); err != nil {
			return err
		}
		// The step's session paces like a commit's (pace.go): a group
		// holding a worker's acquire does not wait for that worker.
		cr := s.newRequest(ctx, st.holder.Session)
		cr.sh = []*shStep{st}
		err := s.sharedSubmit(cr)
		var nb *needBodiesError
		if !errors.As(err, &nb) || attempt >= 3 {
			return err
		}
		if err := s.readBodies(ctx, st, nb.refs); err != nil {
			return err
		}
	}
}

// sharedSubmit hands a step's request to the committer and waits for it
// (once handed over, whatever ctx does: it may commit).
func (s *Store) sharedSubmit(cr *commitReq) error {
	if s.inline != nil {
		s.inline(cr)
		return (<-cr.out).err
	}
	select {
	case <-s.done:
		return topicstore.ErrClosed
	case s.commits <- cr:
		return (<-cr.out).err
	}
}

// movesAhead lists the messages a release or reject of st will likely
// move to the dead_letter_queue (held by st's holder, and rejected or out
// of attempts), so that their bodies are read before the step is planned.
func (s *Store) movesAhead(st *shStep) []topicstore.MsgRef {
	if st.kind != stAct && st.kind != stRelease || st.kind == stAct && st.action != topicstore.ActionRelease && st.action != topicstore.ActionReject {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, cc, c, err := s.sharedLookup(st.topic, st.consumer)
	if err != nil || cc.DeadLetterPolicy != "move" || s.fold.ByName[cc.DeadLetterQueue] == nil {
		return nil
	}
	want := func(d *fold.SharedEntry) bool {
		return d.State == sharedcore.Acquired && d.Holder == st.holder &&
			(st.action == topicstore.ActionReject || cc.MaxProcessingAttempts > 0 && d.Deliv >= int32(cc.MaxProcessingAttempts))
	}
	var out []topicstore.MsgRef
	for p := range t.Parts {
		state, _ := s.sharedState(t, st.consumer, c, int32(p))
		if state == nil {
			continue
		}
		for i := range state.Ents {
			d := &state.Ents[i]
			r := topicstore.MsgRef{Partition: int32(p), Offset: d.Off}
			if want(d) && (st.refs == nil || slices.Contains(st.refs, r)) {
				out = append(out, r)
			}
		}
	}
	return out
}

// finishMoves finishes the dead-letter moves waiting for the bodies of
// limbo (expired locks whose move the plan could not make).
func (s *Store) finishMoves(ctx context.Context, topic, consumer string, limbo []topicstore.MsgRef) {
	if len(limbo) == 0 {
		return
	}
	st := &shStep{kind: stStats, topic: topic, consumer: consumer}
	if s.readBodies(ctx, st, limbo) == nil {
		_ = s.sharedRun(ctx, st)
	}
}

// readBodies reads the messages of refs into st.bodies; one that is gone
// is recorded as not readable (its move then fails, as in the embedded
// store).
func (s *Store) readBodies(ctx context.Context, st *shStep, refs []topicstore.MsgRef) error {
	s.mu.Lock()
	t := s.fold.ByName[st.topic]
	s.mu.Unlock()
	if t == nil {
		return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, st.topic)
	}
	got, err := topicstore.ReadRefs(ctx, s, st.topic, refs)
	if err != nil {
		return err
	}
	if st.bodies == nil {
		st.bodies = map[bodyKey]*shBody{}
	}
	for _, r := range refs {
		b := &shBody{}
		if m, ok := got[r]; ok {
			b.msg = m
		} else {
			b.err = fmt.Errorf("dead-letter move of %s/%d/%d: message not readable", st.topic, r.Partition, r.Offset)
		}
		st.bodies[bodyKey{t.Rec.ID, r.Partition, r.Offset}] = b
	}
	return nil
}

// readPicked reads the messages of refs, from the consumer's cache where
// it has them (copies).
func (s *Store) readPicked(ctx context.Context, topic, consumer string, refs []topicstore.MsgRef) (map[topicstore.MsgRef]topicstore.Message, error) {
	got := make(map[topicstore.MsgRef]topicstore.Message, len(refs))
	var rest []topicstore.MsgRef
	s.mu.Lock()
	t, _, c, err := s.sharedLookup(topic, consumer)
	for _, r := range refs {
		if err == nil && r.Offset >= t.Parts[r.Partition].Start {
			if m := c.meta[r.Partition]; m != nil && r.Offset >= m.base && r.Offset < m.end() {
				if cm := m.ents[r.Offset-m.base].msg; cm != nil {
					cp := *cm
					cp.Body, cp.Attrs = bytes.Clone(cm.Body), slices.Clone(cm.Attrs)
					got[r] = cp
					continue
				}
			}
		}
		rest = append(rest, r)
	}
	s.mu.Unlock()
	more, err := topicstore.ReadRefs(ctx, s, topic, rest)
	for r, m := range more {
		got[r] = m
	}
	return got, err
}

var _ topicstore.Store = (*Store)(nil)
