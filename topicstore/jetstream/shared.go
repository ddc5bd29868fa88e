package jetstream

import (
	"sort"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"

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
// (package plan, shared.go). What a gateway keeps is a cache: a gateway that dies
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
	var st *plan.Step
	for attempt := 0; ; attempt++ {
		st = &plan.Step{Kind: plan.StepAcquire, Topic: req.Topic, Consumer: req.Consumer, Holder: s.holder(req.Session),
			Max: req.Max, Timeout: req.Timeout, MaxBytes: req.MaxBytes, Watch: req.Watch}
		if err := s.sharedRun(ctx, st); err != nil {
			return res, err
		}
		// Locks that ended while the commit taking them waited (out an
		// election longer than the processing timeout) hold nothing:
		// another gateway may have handed the messages out and had them
		// acknowledged meanwhile. They are not handed out; the step is
		// taken again, from the state as it is now.
		if len(st.Out.Picked) == 0 || s.opts.Clock().Before(st.Out.Until) {
			break
		}
		s.expiredAcquires.Add(1)
		if attempt == 2 {
			st.Out.Picked = nil // nothing held: the caller asks again
			break
		}
	}
	refs := make([]topicstore.MsgRef, len(st.Out.Picked))
	for i, p := range st.Out.Picked {
		refs[i] = p.Ref
	}
	got, err := s.readPicked(ctx, req.Topic, req.Consumer, refs)
	if err != nil {
		s.ReleaseUndelivered(req.Topic, req.Consumer, req.Session, refs)
		return res, err
	}
	for _, p := range st.Out.Picked {
		if m, ok := got[p.Ref]; ok { // a message retention deleted meanwhile is left out
			res.Messages = append(res.Messages, topicstore.Acquired{Message: m, DeliveryCount: int(p.Deliv), LockedUntil: st.Out.Until})
		}
	}
	slices.SortFunc(res.Messages, func(a, b topicstore.Acquired) int {
		if c := cmp.Compare(a.Message.Partition, b.Message.Partition); c != 0 {
			return c
		}
		return cmp.Compare(a.Message.Offset, b.Message.Offset)
	})
	if req.Watch && len(res.Messages) == 0 {
		res.Published, res.Freed, res.NextReady = st.Out.Published, st.Out.Freed, st.Out.NextReady
		if res.Published == nil { // what was picked is gone: try again at once
			ch := make(chan struct{})
			close(ch)
			res.Published, res.Freed = ch, ch
		}
	}
	if limbo := st.Out.Limbo; len(limbo) > 0 {
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
	st := &plan.Step{Kind: plan.StepAct, Topic: req.Topic, Consumer: req.Consumer, Holder: s.holder(req.Session),
		Action: req.Action, Refs: req.Refs, Until: req.Until}
	if err := s.sharedRun(ctx, st); err != nil {
		return nil, nil, err
	}
	s.finishMoves(ctx, req.Topic, req.Consumer, st.Out.Limbo)
	return st.Out.Outcomes, noWait, nil
}

// ReleaseSession implements topicstore.SharedStore.
func (s *Store) ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	st := &plan.Step{Kind: plan.StepRelease, Topic: topic, Consumer: consumer, Holder: s.holder(session), Refs: refs}
	if s.sharedRun(context.Background(), st) == nil {
		s.finishMoves(context.Background(), topic, consumer, st.Out.Limbo)
	}
}

// ReleaseUndelivered implements topicstore.SharedStore.
func (s *Store) ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	_ = s.sharedRun(context.Background(), &plan.Step{Kind: plan.StepUndeliver, Topic: topic, Consumer: consumer, Holder: s.holder(session), Refs: refs})
}

// SharedStats implements topicstore.SharedStore: as of after the
// dead-letter moves that lock expiry starts.
func (s *Store) SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error) {
	ctx := context.Background()
	st := &plan.Step{Kind: plan.StepStats, Topic: topic, Consumer: consumer}
	for attempt := 0; ; attempt++ {
		if err := s.sharedRun(ctx, st); err != nil {
			return nil, err
		}
		if len(st.Out.Limbo) == 0 || attempt >= 2 {
			return st.Out.Stats, nil
		}
		if err := s.readBodies(ctx, st, st.Out.Limbo); err != nil {
			return nil, err
		}
	}
}

// sharedAcks makes a commit's acknowledgements steps of its request (a
// committer hook), with the consumers' windows loaded.
func (s *Store) sharedAcks(ctx context.Context, acks []topicstore.SharedAck) ([]*plan.Step, error) {
	var steps []*plan.Step
	filled := map[[2]string]bool{}
	for _, a := range acks {
		if k := [2]string{a.Topic, a.Consumer}; !filled[k] {
			filled[k] = true
			if err := s.sharedFill(ctx, a.Topic, a.Consumer); err != nil {
				return nil, err
			}
		}
		steps = append(steps, &plan.Step{Kind: plan.StepAck, Topic: a.Topic, Consumer: a.Consumer, Holder: s.holder(a.Session), Refs: a.Refs})
	}
	return steps, nil
}

// sharedRun runs one step through the committer: the consumer's window
// loaded first, the step sent again with the bodies its dead-letter moves
// need when the plan asks for them.
func (s *Store) sharedRun(ctx context.Context, st *plan.Step) error {
	if s.isClosed() {
		return topicstore.ErrClosed
	}
	if refs := s.movesAhead(st); len(refs) > 0 {
		if err := s.readBodies(ctx, st, refs); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		if err := s.sharedFill(ctx, st.Topic, st.Consumer); err != nil {
			return err
		}
		// The step's session paces like a commit's (pace.go): a group
		// holding a worker's acquire does not wait for that worker.
		cr := s.newRequest(ctx, st.Holder.Session)
		cr.Steps = []*plan.Step{st}
		err := s.sharedSubmit(cr)
		var nb *plan.NeedBodiesError
		if !errors.As(err, &nb) || attempt >= 3 {
			return err
		}
		if err := s.readBodies(ctx, st, nb.Refs); err != nil {
			return err
		}
	}
}

// sharedSubmit hands a step's request to the committer and waits for it
// (once handed over, whatever ctx does: it may commit).
func (s *Store) sharedSubmit(cr *plan.Request) error {
	if s.inline != nil {
		s.inline(cr)
		return (<-cr.Out).Err
	}
	select {
	case <-s.done:
		return topicstore.ErrClosed
	case s.commits <- cr:
		return (<-cr.Out).Err
	}
}

// movesAhead lists the messages a release or reject of st will likely
// move to the dead_letter_queue (held by st's holder, and rejected or out
// of attempts), so that their bodies are read before the step is planned.
func (s *Store) movesAhead(st *plan.Step) []topicstore.MsgRef {
	if st.Kind != plan.StepAct && st.Kind != plan.StepRelease || st.Kind == plan.StepAct && st.Action != topicstore.ActionRelease && st.Action != topicstore.ActionReject {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, cc, c, err := s.shc.Lookup(s.fold, st.Topic, st.Consumer)
	if err != nil || cc.DeadLetterPolicy != "move" || s.fold.ByName[cc.DeadLetterQueue] == nil {
		return nil
	}
	want := func(d *fold.SharedEntry) bool {
		return d.State == sharedcore.Acquired && d.Holder == st.Holder &&
			(st.Action == topicstore.ActionReject || cc.MaxProcessingAttempts > 0 && d.Deliv >= int32(cc.MaxProcessingAttempts))
	}
	var out []topicstore.MsgRef
	for p := range t.Parts {
		state, _ := plan.SharedState(t, st.Consumer, c, int32(p))
		if state == nil {
			continue
		}
		for i := range state.Ents {
			d := &state.Ents[i]
			r := topicstore.MsgRef{Partition: int32(p), Offset: d.Off}
			if want(d) && (st.Refs == nil || slices.Contains(st.Refs, r)) {
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
	st := &plan.Step{Kind: plan.StepStats, Topic: topic, Consumer: consumer}
	if s.readBodies(ctx, st, limbo) == nil {
		_ = s.sharedRun(ctx, st)
	}
}

// readBodies reads the messages of refs into st.bodies; one that is gone
// is recorded as not readable (its move then fails, as in the embedded
// store).
func (s *Store) readBodies(ctx context.Context, st *plan.Step, refs []topicstore.MsgRef) error {
	s.mu.Lock()
	t := s.fold.ByName[st.Topic]
	s.mu.Unlock()
	if t == nil {
		return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, st.Topic)
	}
	got, err := topicstore.ReadRefs(ctx, s, st.Topic, refs)
	if err != nil {
		return err
	}
	if st.Bodies == nil {
		st.Bodies = map[plan.BodyKey]*plan.Body{}
	}
	for _, r := range refs {
		b := &plan.Body{}
		if m, ok := got[r]; ok {
			b.Msg = m
		} else {
			b.Err = fmt.Errorf("dead-letter move of %s/%d/%d: message not readable", st.Topic, r.Partition, r.Offset)
		}
		st.Bodies[plan.BodyKey{Topic: t.Rec.ID, Part: r.Partition, Off: r.Offset}] = b
	}
	return nil
}

// readPicked reads the messages of refs, from the consumer's cache where
// it has them (copies).
func (s *Store) readPicked(ctx context.Context, topic, consumer string, refs []topicstore.MsgRef) (map[topicstore.MsgRef]topicstore.Message, error) {
	got := make(map[topicstore.MsgRef]topicstore.Message, len(refs))
	var rest []topicstore.MsgRef
	s.mu.Lock()
	t, _, c, err := s.shc.Lookup(s.fold, topic, consumer)
	for _, r := range refs {
		if err == nil && r.Offset >= t.Parts[r.Partition].Start {
			if m := c.Meta[r.Partition]; m != nil && r.Offset >= m.Base && r.Offset < m.End() {
				if cm := m.Ents[r.Offset-m.Base].Msg; cm != nil {
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

// sharedFill loads the metadata of each partition's window (from its
// start up to sharedcore.DefaultWindow messages, within the visible end,
// to the end of the record batch that holds the window's last message, so
// that a window moving on by a few messages does not read that batch
// again) into the consumer's cache: Scan outside s.mu, for what the cache
// lacks.
func (s *Store) sharedFill(ctx context.Context, topic, consumer string) error {
	type job struct {
		p        int32
		from, to int64
	}
	var jobs []job
	s.mu.Lock()
	t, _, c, err := s.shc.Lookup(s.fold, topic, consumer)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	for i := range t.Parts {
		p := int32(i)
		_, start := plan.SharedState(t, consumer, c, p)
		m := c.Meta[p]
		switch {
		case m == nil || m.Base > start || m.End() < start:
			if m != nil {
				c.Prune(m, m.End())
			}
			m = &plan.Meta{Base: start}
			c.Meta[p] = m
		case m.Base < start:
			c.Prune(m, start)
		}
		if to := min(start+s.shWindow(), t.Parts[p].End); m.End() < to {
			recs := t.Parts[p].Recs
			if i := sort.Search(len(recs), func(i int) bool { return recs[i].Base+recs[i].Count() >= to }); i < len(recs) {
				to = recs[i].Base + recs[i].Count()
			}
			jobs = append(jobs, job{p, m.End(), to})
		}
	}
	room := plan.BodyCache - s.shc.Bodies
	s.mu.Unlock()
	for _, j := range jobs {
		var got []plan.MetaEnt
		first := int64(-1)
		err := s.Scan(ctx, topic, topicstore.ScanRange{Partition: j.p, Start: j.from, End: j.to}, func(m *topicstore.Message) bool {
			if first < 0 {
				first = m.Offset
			}
			e := plan.MetaEnt{Written: m.WrittenAt.UnixNano(), Delay: int64(m.Delay), Size: int64(len(m.Body)), Group: m.MessageGroupID}
			if room >= e.Size {
				room -= e.Size
				c := *m
				c.Body, c.Attrs = bytes.Clone(m.Body), slices.Clone(m.Attrs)
				e.Msg = &c
			}
			got = append(got, e)
			return true
		})
		if err != nil {
			return err
		}
		if len(got) == 0 {
			continue
		}
		s.mu.Lock()
		if _, _, c2, err := s.shc.Lookup(s.fold, topic, consumer); err == nil && c2 == c {
			m := c.Meta[j.p]
			switch {
			case m.End() == first:
			case m.End() < first && len(m.Ents) == 0: // retention moved the start meanwhile
				m.Base = first
			default:
				got = nil
			}
			for _, e := range got {
				if e.Msg != nil {
					c.Drop(-e.Size)
				}
			}
			m.Ents = append(m.Ents, got...)
		}
		s.mu.Unlock()
	}
	return nil
}
