package queue

import (
	"cmp"
	"context"
	"slices"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/plan"
)

// Acquire implements topicstore.SharedStore.
func (q *Queue) Acquire(ctx context.Context, req topicstore.AcquireRequest) ([]topicstore.Acquired, error) {
	return topicstore.WaitAcquired(q.AcquireAsync(ctx, req))
}

// AcquireAsync implements topicstore.SharedStore: the locks and delivery
// counts are stored when it returns; Wait finishes the dead-letter moves
// the call's lock expiry started.
func (q *Queue) AcquireAsync(ctx context.Context, req topicstore.AcquireRequest) (topicstore.AcquireResult, error) {
	res := topicstore.AcquireResult{Wait: noWait}
	if req.Max <= 0 {
		return res, nil
	}
	var st *plan.Step
	for attempt := 0; ; attempt++ {
		st = &plan.Step{Kind: plan.StepAcquire, Topic: req.Topic, Consumer: req.Consumer, Holder: q.holder(req.Session),
			Max: req.Max, Timeout: req.Timeout, MaxBytes: req.MaxBytes, Watch: req.Watch}
		if err := q.run(ctx, st); err != nil {
			return res, err
		}
		// Locks that ended while the commit taking them waited (out an
		// election longer than the processing timeout) hold nothing:
		// another gateway may have handed the messages out and had them
		// acknowledged meanwhile. They are not handed out; the step is
		// taken again, from the state as it is now.
		if len(st.Out.Picked) == 0 || q.cfg.Clock().Before(st.Out.Until) {
			break
		}
		q.expired.Add(1)
		if attempt == 2 {
			st.Out.Picked = nil // nothing held: the caller asks again
			break
		}
	}
	refs := make([]topicstore.MsgRef, len(st.Out.Picked))
	for i, p := range st.Out.Picked {
		refs[i] = p.Ref
	}
	got, err := q.readPicked(ctx, req.Topic, req.Consumer, refs)
	if err != nil {
		q.ReleaseUndelivered(req.Topic, req.Consumer, req.Session, refs)
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
			q.finishMoves(context.Background(), req.Topic, req.Consumer, limbo)
			return nil
		}
	}
	return res, nil
}

// readPicked reads the messages of refs, from the consumer's cache where
// it has them (copies).
func (q *Queue) readPicked(ctx context.Context, topic, consumer string, refs []topicstore.MsgRef) (map[topicstore.MsgRef]topicstore.Message, error) {
	got := make(map[topicstore.MsgRef]topicstore.Message, len(refs))
	var rest []topicstore.MsgRef
	q.h.Lock()
	t, _, c, err := q.cfg.Caches.Lookup(q.cfg.Fold, topic, consumer)
	for _, r := range refs {
		if err == nil && r.Offset >= t.Parts[r.Partition].Start {
			if m := c.Meta[r.Partition]; m != nil && r.Offset >= m.Base && r.Offset < m.End() {
				if cm := m.Ents[r.Offset-m.Base].Msg; cm != nil {
					got[r] = cm.Clone()
					continue
				}
			}
		}
		rest = append(rest, r)
	}
	q.h.Unlock()
	more, err := topicstore.ReadRefs(ctx, q.h, topic, rest)
	for r, m := range more {
		got[r] = m
	}
	return got, err
}
