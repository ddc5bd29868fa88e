package queue

import (
	"context"
	"fmt"
	"slices"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"
	"topicgate/topicstore/sharedcore"
)

// SharedAction implements topicstore.SharedStore.
func (q *Queue) SharedAction(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, error) {
	return topicstore.WaitOutcomes(q.SharedActionAsync(ctx, req))
}

// SharedActionAsync implements topicstore.SharedStore: the outcomes are
// stored when it returns (wait has nothing left to do).
func (q *Queue) SharedActionAsync(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, func() error, error) {
	st := &plan.Step{Kind: plan.StepAct, Topic: req.Topic, Consumer: req.Consumer, Holder: q.holder(req.Session),
		Action: req.Action, Refs: req.Refs, Until: req.Until}
	if err := q.run(ctx, st); err != nil {
		return nil, nil, err
	}
	q.finishMoves(ctx, req.Topic, req.Consumer, st.Out.Limbo)
	return st.Out.Outcomes, noWait, nil
}

// ReleaseSession implements topicstore.SharedStore.
func (q *Queue) ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	st := &plan.Step{Kind: plan.StepRelease, Topic: topic, Consumer: consumer, Holder: q.holder(session), Refs: refs}
	if q.run(context.Background(), st) == nil {
		q.finishMoves(context.Background(), topic, consumer, st.Out.Limbo)
	}
}

// ReleaseUndelivered implements topicstore.SharedStore.
func (q *Queue) ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	_ = q.run(context.Background(), &plan.Step{Kind: plan.StepUndeliver, Topic: topic, Consumer: consumer, Holder: q.holder(session), Refs: refs})
}

// SharedStats implements topicstore.SharedStore: as of after the
// dead-letter moves that lock expiry starts.
func (q *Queue) SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error) {
	ctx := context.Background()
	st := &plan.Step{Kind: plan.StepStats, Topic: topic, Consumer: consumer}
	for attempt := 0; ; attempt++ {
		if err := q.run(ctx, st); err != nil {
			return nil, err
		}
		if len(st.Out.Limbo) == 0 || attempt >= 2 {
			return st.Out.Stats, nil
		}
		if err := q.readBodies(ctx, st, st.Out.Limbo); err != nil {
			return nil, err
		}
	}
}

// movesAhead lists the messages a release or reject of st will likely
// move to the dead_letter_queue (held by st's holder, and rejected or out
// of attempts), so that their bodies are read before the step is planned.
func (q *Queue) movesAhead(st *plan.Step) []topicstore.MsgRef {
	if st.Kind != plan.StepAct && st.Kind != plan.StepRelease || st.Kind == plan.StepAct && st.Action != topicstore.ActionRelease && st.Action != topicstore.ActionReject {
		return nil
	}
	q.h.Lock()
	defer q.h.Unlock()
	t, cc, c, err := q.cfg.Caches.Lookup(q.cfg.Fold, st.Topic, st.Consumer)
	if err != nil || cc.DeadLetterPolicy != "move" || q.cfg.Fold.ByName[cc.DeadLetterQueue] == nil {
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
func (q *Queue) finishMoves(ctx context.Context, topic, consumer string, limbo []topicstore.MsgRef) {
	if len(limbo) == 0 {
		return
	}
	st := &plan.Step{Kind: plan.StepStats, Topic: topic, Consumer: consumer}
	if q.readBodies(ctx, st, limbo) == nil {
		_ = q.run(ctx, st)
	}
}

// readBodies reads the messages of refs into st.Bodies; one that is gone
// is recorded as not readable (its move then fails, as in the embedded
// store).
func (q *Queue) readBodies(ctx context.Context, st *plan.Step, refs []topicstore.MsgRef) error {
	q.h.Lock()
	t := q.cfg.Fold.ByName[st.Topic]
	q.h.Unlock()
	if t == nil {
		return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, st.Topic)
	}
	got, err := topicstore.ReadRefs(ctx, q.h, st.Topic, refs)
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
