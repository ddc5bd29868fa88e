package jetstream

import (
	"context"
	"fmt"
	"slices"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/plan"
)

// A commit is one atomic batch on the stream (jsext.PublishAtomic): a marker on
// the gateway's chain (jetstream/chain); the record batches it appends, one
// message per partition (more if it is large); the producers' new dedup
// state, one message each; the positions it moves, one message each.
// Every message carries Nats-Expected-Last-Subject-Sequence for its own
// subject, the sequence the fold saw: the server commits the batch only if
// none of those subjects changed since, so offsets stay contiguous, a
// producer's seqnos are decided once, and a position moves only from
// where the committer read it, whichever gateway wrote last. A refused
// batch means the fold was behind: the committer (committer.go) waits
// until it caught up and plans again (package plan). A commit too large for one
// batch is a wide transaction (jetstream/wide).

// Commit implements topicstore.Store.
func (s *Store) Commit(ctx context.Context, req *topicstore.CommitRequest) (topicstore.CommitResult, error) {
	return s.commit(ctx, req, false)
}

func (s *Store) commit(ctx context.Context, req *topicstore.CommitRequest, exact bool) (res topicstore.CommitResult, err error) {
	if err := ctx.Err(); err != nil {
		return topicstore.CommitResult{}, err
	}
	if req == nil {
		req = &topicstore.CommitRequest{}
	}
	// The stagings the commit names are claimed below; whatever happens,
	// they are settled (committed, open again, or in doubt) when it
	// returns.
	defer func() { s.settleStaged(req, err) }()
	if s.isClosed() {
		return topicstore.CommitResult{}, topicstore.ErrClosed
	}
	cr, err := s.prepare(ctx, req, exact)
	if err != nil || cr == nil {
		return topicstore.CommitResult{}, err
	}
	if err := s.submit(cr); err != nil {
		return topicstore.CommitResult{}, err
	}
	// Once handed over, the outcome is waited for even if ctx ends: the
	// batch may be committed, and the caller must not be told otherwise.
	o := <-cr.Out
	if o.Err == plan.ErrExpand {
		// A staged chunk is partly duplicates: every chunk joins as
		// messages, decided one by one.
		if err := s.expandAll(ctx, cr); err != nil {
			return topicstore.CommitResult{}, err
		}
		if err := s.submit(cr); err != nil {
			return topicstore.CommitResult{}, err
		}
		o = <-cr.Out
	}
	return o.Res, o.Err
}

// submit hands cr to the committer.
func (s *Store) submit(cr *plan.Request) error {
	select {
	case s.commits <- cr:
		return nil
	case <-s.done:
		return topicstore.ErrClosed
	}
}

// expandAll makes every staged chunk of cr join as messages, for a
// request the plan sent back with errExpand.
func (s *Store) expandAll(ctx context.Context, cr *plan.Request) error {
	for i := range cr.Writes {
		w := &cr.Writes[i]
		_, expanded, err := s.expandStaged(ctx, w.Staged, true)
		if err != nil {
			return err
		}
		w.Staged, w.Msgs = nil, append(expanded, w.Msgs...)
	}
	cr.Out = make(chan plan.Outcome, 1)
	return nil
}

// prepare turns req into a request to the committer: its messages
// encoded, its stagings claimed and validated, its acknowledgements
// checked. It returns nil for a request with nothing to commit.
func (s *Store) prepare(ctx context.Context, req *topicstore.CommitRequest, exact bool) (*plan.Request, error) {
	now := s.opts.Clock()
	cr := s.newRequest(ctx, req.Session)
	cr.Pos, cr.Exact, cr.Fences = req.Positions, exact, req.Fences
	claimed := map[uint64]bool{}
	for _, w := range req.Writes {
		t, err := s.topic(w.Topic)
		if err != nil {
			return nil, err
		}
		pw := plan.Write{Topic: w.Topic, Msgs: make([]plan.Msg, len(w.Messages))}
		var opened uint64
		if pw.Staged, opened, err = s.claimStaged(ctx, t, w, claimed); err != nil {
			return nil, err
		}
		if len(w.Staged) > 0 && (!cr.Staged || opened < cr.OpenedAt) {
			cr.Staged, cr.OpenedAt = true, opened
		}
		for _, sb := range w.Staged {
			if !slices.Contains(cr.Stagings, sb.TxnID) {
				cr.Stagings = append(cr.Stagings, sb.TxnID)
			}
		}
		if len(pw.Staged) > 0 {
			// A chunk whose dedup cannot be decided from its summary
			// (no seqnos, or not increasing) joins as messages.
			var expanded []plan.Msg
			if pw.Staged, expanded, err = s.expandStaged(ctx, pw.Staged, false); err != nil {
				return nil, err
			}
			pw.Msgs = append(expanded, pw.Msgs...)
		}
		base := len(pw.Msgs) - len(w.Messages)
		for j := range w.Messages {
			m := &w.Messages[j]
			if err := validateMessage(t, w.Topic, m); err != nil {
				return nil, err
			}
			tail, _, err := topicstore.EncodeTail(nil, m, now)
			if err != nil {
				return nil, err
			}
			pw.Msgs[base+j] = plan.Msg{Partition: m.Partition, Producer: m.ProducerID, Group: m.MessageGroupID,
				SeqNo: m.SeqNo, HasSeqNo: m.HasSeqNo, Tail: tail}
		}
		cr.Writes = append(cr.Writes, pw)
	}
	steps, err := s.queue.Acks(ctx, req.Acks) // acknowledgements of shared-consumer messages (jetstream/queue)
	if err != nil {
		return nil, err
	}
	cr.Steps = steps
	if len(cr.Writes) == 0 && len(cr.Pos) == 0 && len(cr.Steps) == 0 && len(cr.Fences) == 0 {
		return nil, nil
	}
	return cr, nil
}

// newRequest is a request to the committer on behalf of ctx's statement,
// with its deadline.
func (s *Store) newRequest(ctx context.Context, session uint32) *plan.Request {
	cr := &plan.Request{Ctx: ctx, Session: session, Out: make(chan plan.Outcome, 1)}
	cr.Received = s.io.now()
	cr.Deadline = cr.Received.Add(s.opts.CommitTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(cr.Deadline) {
		cr.Deadline = d
	}
	return cr
}

// topicConfigView is what validation needs of a topic, copied under s.mu.
type topicConfigView struct {
	parts  int
	codecs map[topicstore.Codec]bool
}

func (s *Store) topic(name string) (topicConfigView, error) {
	if err := s.catalog.Known(name); err != nil {
		return topicConfigView{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[name]
	if t == nil {
		return topicConfigView{}, topicstore.ErrTopicNotFound
	}
	v := topicConfigView{parts: len(t.Parts), codecs: map[topicstore.Codec]bool{}}
	cs := t.Rec.Config.SupportedCodecs
	if len(cs) == 0 {
		cs = topicstore.AllCodecs
	}
	for _, c := range cs {
		v.codecs[c] = true
	}
	return v, nil
}

func validateMessage(t topicConfigView, name string, m *topicstore.Message) error {
	if m.Partition >= int32(t.parts) {
		return fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, name, m.Partition)
	}
	if c := topicstore.CodecOf(m); !c.Valid() || !t.codecs[c] {
		return fmt.Errorf("%w: topic %q does not accept codec %s", topicstore.ErrCodecNotSupported, name, c)
	}
	return topicstore.CheckMessage(m)
}
