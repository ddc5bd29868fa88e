package jetstream

import (
	"context"
	"fmt"
	"slices"
	"time"

	"topicgate/topicstore"
)

// A commit is one atomic batch on the stream (jsext.PublishAtomic): a marker on
// the gateway's chain (chain.go); the record batches it appends, one
// message per partition (more if it is large); the producers' new dedup
// state, one message each; the positions it moves, one message each.
// Every message carries Nats-Expected-Last-Subject-Sequence for its own
// subject, the sequence the fold saw: the server commits the batch only if
// none of those subjects changed since, so offsets stay contiguous, a
// producer's seqnos are decided once, and a position moves only from
// where the committer read it, whichever gateway wrote last. A refused
// batch means the fold was behind: the committer (committer.go) waits
// until it caught up and plans again (plan.go). A commit too large for one
// batch is a wide transaction (wide.go).

type commitReq struct {
	ctx    context.Context
	writes []pendingWrite
	pos    []topicstore.PositionUpdate
	exact  bool      // SetPosition: the offset must lie in [start, end]
	sh     []*shStep // shared-consumer steps: a commit's acks, or one SharedStore call (shared_plan.go)
	// staged says the request joins staged chunks; openedAt is the fold
	// sequence its oldest staging opened at (a later sweep fence of this
	// gateway refuses it: sweep.go).
	staged   bool
	openedAt uint64
	session  uint32 // the committing session, for pacing (pace.go); 0: none
	// stagings are the transactions whose staged chunks it joins.
	stagings []uint64
	// received is when the committer got it; deadline is when it stops
	// trying to store it (its statement's deadline, else received plus
	// Options.CommitTimeout).
	received, deadline time.Time
	out                chan commitOut
}

type commitOut struct {
	res topicstore.CommitResult
	err error
}

// pendingWrite is a TopicWrite with its messages encoded; its staged
// chunks come first.
type pendingWrite struct {
	topic  string
	staged []topicstore.StagedChunk
	msgs   []pendingMsg
}

type pendingMsg struct {
	partition int32
	producer  string
	group     string
	seqNo     int64
	hasSeqNo  bool
	tail      []byte
}

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
	o := <-cr.out
	if o.err == errExpand {
		// A staged chunk is partly duplicates: every chunk joins as
		// messages, decided one by one.
		if err := s.expandAll(ctx, cr); err != nil {
			return topicstore.CommitResult{}, err
		}
		if err := s.submit(cr); err != nil {
			return topicstore.CommitResult{}, err
		}
		o = <-cr.out
	}
	return o.res, o.err
}

// submit hands cr to the committer.
func (s *Store) submit(cr *commitReq) error {
	select {
	case s.commits <- cr:
		return nil
	case <-s.done:
		return topicstore.ErrClosed
	}
}

// expandAll makes every staged chunk of cr join as messages, for a
// request the plan sent back with errExpand.
func (s *Store) expandAll(ctx context.Context, cr *commitReq) error {
	for i := range cr.writes {
		w := &cr.writes[i]
		_, expanded, err := s.expandStaged(ctx, w.staged, true)
		if err != nil {
			return err
		}
		w.staged, w.msgs = nil, append(expanded, w.msgs...)
	}
	cr.out = make(chan commitOut, 1)
	return nil
}

// prepare turns req into a request to the committer: its messages
// encoded, its stagings claimed and validated, its acknowledgements
// checked. It returns nil for a request with nothing to commit.
func (s *Store) prepare(ctx context.Context, req *topicstore.CommitRequest, exact bool) (*commitReq, error) {
	now := s.opts.Clock()
	cr := s.newRequest(ctx, req.Session)
	cr.pos, cr.exact = req.Positions, exact
	claimed := map[uint64]bool{}
	for _, w := range req.Writes {
		t, err := s.topic(w.Topic)
		if err != nil {
			return nil, err
		}
		pw := pendingWrite{topic: w.Topic, msgs: make([]pendingMsg, len(w.Messages))}
		var opened uint64
		if pw.staged, opened, err = s.claimStaged(ctx, t, w, claimed); err != nil {
			return nil, err
		}
		if len(w.Staged) > 0 && (!cr.staged || opened < cr.openedAt) {
			cr.staged, cr.openedAt = true, opened
		}
		for _, sb := range w.Staged {
			if !slices.Contains(cr.stagings, sb.TxnID) {
				cr.stagings = append(cr.stagings, sb.TxnID)
			}
		}
		if len(pw.staged) > 0 {
			// A chunk whose dedup cannot be decided from its summary
			// (no seqnos, or not increasing) joins as messages.
			var expanded []pendingMsg
			if pw.staged, expanded, err = s.expandStaged(ctx, pw.staged, false); err != nil {
				return nil, err
			}
			pw.msgs = append(expanded, pw.msgs...)
		}
		base := len(pw.msgs) - len(w.Messages)
		for j := range w.Messages {
			m := &w.Messages[j]
			if err := validateMessage(t, w.Topic, m); err != nil {
				return nil, err
			}
			tail, _, err := topicstore.EncodeTail(nil, m, now)
			if err != nil {
				return nil, err
			}
			pw.msgs[base+j] = pendingMsg{partition: m.Partition, producer: m.ProducerID, group: m.MessageGroupID,
				seqNo: m.SeqNo, hasSeqNo: m.HasSeqNo, tail: tail}
		}
		cr.writes = append(cr.writes, pw)
	}
	steps, err := s.sharedAcks(ctx, req.Acks) // acknowledgements of shared-consumer messages (shared.go)
	if err != nil {
		return nil, err
	}
	cr.sh = steps
	if len(cr.writes) == 0 && len(cr.pos) == 0 && len(cr.sh) == 0 {
		return nil, nil
	}
	return cr, nil
}

// newRequest is a request to the committer on behalf of ctx's statement,
// with its deadline.
func (s *Store) newRequest(ctx context.Context, session uint32) *commitReq {
	cr := &commitReq{ctx: ctx, session: session, out: make(chan commitOut, 1)}
	cr.received = s.io.now()
	cr.deadline = cr.received.Add(s.opts.CommitTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(cr.deadline) {
		cr.deadline = d
	}
	return cr
}

// topicConfigView is what validation needs of a topic, copied under s.mu.
type topicConfigView struct {
	parts  int
	codecs map[topicstore.Codec]bool
}

func (s *Store) topic(name string) (topicConfigView, error) {
	if err := s.known(name); err != nil {
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
	if len(m.Body) > topicstore.MaxMessageSize {
		return fmt.Errorf("%w: %d bytes, the limit is %d", topicstore.ErrMessageTooLarge, len(m.Body), topicstore.MaxMessageSize)
	}
	return nil
}
