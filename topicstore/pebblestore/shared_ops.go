package pebblestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Shared consumers: the SharedStore methods (see shared.go).

// Acquire hands out up to req.Max available messages of a shared consumer,
// each locked for the request's timeout, fair across partitions (round
// robin) and, within a partition, across message groups. The result is
// sorted by (partition, offset). A streaming consumer gives ErrNotShared.
// It returns once the new delivery counts are durable.
func (s *PebbleStore) Acquire(ctx context.Context, req topicstore.AcquireRequest) ([]topicstore.Acquired, error) {
	return topicstore.WaitAcquired(s.AcquireAsync(ctx, req))
}

func noWait() error { return nil }

// AcquireAsync is Acquire without waiting for durability: the messages are
// locked and their delivery counts are in the WAL; res.Wait blocks until
// they are synced (then runs any dead-letter moves the call's lock expiries
// started). The caller must call Wait exactly once and must not show the
// messages to anyone before it returned nil (on an error the store has
// failed). With req.Watch and nothing handed out, res carries what to wait
// on for the next try: see AcquireResult.
func (s *PebbleStore) AcquireAsync(ctx context.Context, req topicstore.AcquireRequest) (topicstore.AcquireResult, error) {
	res := topicstore.AcquireResult{Wait: noWait}
	if req.Max <= 0 {
		return res, nil
	}
	var published <-chan struct{}
	if req.Watch { // before the state is read: nothing published later is missed
		ch, err := s.Changed(req.Topic)
		if err != nil {
			return res, err
		}
		published = ch
	}
	t, m, err := s.sharedMgr(req.Topic, req.Consumer)
	if err != nil {
		return res, err
	}
	now := s.opts.Clock()
	var eff sharedcore.Effects
	m.core.Expire(now.UnixNano(), &eff)
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = m.core.Cfg.Timeout
	}
	until := now.Add(timeout)
	h := holder(req.Session)
	var refs []topicstore.MsgRef
	var deliveries []int
	var kept []*topicstore.Message // from the body cache, by pick
	more, err := s.sharedFill(t, m, &eff, true)
	if err == nil { // else: still persist eff, do the moves
		refs = m.core.Pick(now.UnixNano(), req.Max, h, until.UnixNano())
		if len(refs) < req.Max && more { // what is loaded does not serve it: load the rest
			if _, err = s.sharedFill(t, m, &eff, false); err == nil {
				refs = append(refs, m.core.Pick(now.UnixNano(), req.Max-len(refs), h, until.UnixNano())...)
			} else {
				for _, r := range refs {
					m.core.Unpick(r)
				}
				refs = nil
			}
		}
		deliveries = make([]int, len(refs))
		kept = make([]*topicstore.Message, len(refs))
		eff.Counts = slices.Grow(eff.Counts, len(refs))
		for i, r := range refs {
			kept[i], _ = m.bodies.take(r)
			e := m.core.Parts[r.Partition].At(r.Offset)
			deliveries[i] = int(e.Deliveries)
			eff.Counts = append(eff.Counts, sharedcore.Ref{Part: r.Partition, Off: r.Offset, State: sharedcore.Avail, Deliv: e.Deliveries})
		}
	}
	if err == nil && len(refs) == 0 && req.Watch {
		res.Published, res.Freed = published, m.wakeChan()
		if next := m.core.NextReady(now.UnixNano()); next > 0 {
			res.NextReady = time.Duration(next - now.UnixNano())
		}
	}
	// The new counts go to the WAL before the messages are read, so that
	// their fsync runs meanwhile; the bodies are read without the
	// consumer's lock, which the picked messages do not need (they are
	// this session's until their deadline), so that other sessions pick
	// and acknowledge while they are read.
	wait, perr := s.sharedPersist(m, &eff)
	m.mu.Unlock()
	if err == nil {
		err = perr
	}
	var out []topicstore.Acquired
	if err == nil {
		out, err = s.sharedFetch(ctx, t, refs, kept, deliveries, until)
	}
	var give []topicstore.MsgRef // picked and not handed out after all
	if err != nil {
		give, out = refs, nil
	} else if req.MaxBytes > 0 { // keep the pick order's prefix that fits
		var n, size int64
		for n < int64(len(out)) && (n == 0 || size+int64(len(out[n].Message.Body)) <= req.MaxBytes) {
			size += int64(len(out[n].Message.Body))
			n++
		}
		for _, a := range out[n:] {
			give = append(give, topicstore.MsgRef{Partition: a.Message.Partition, Offset: a.Message.Offset})
		}
		out = out[:n]
	}
	giveWait, gerr := s.sharedGiveBack(m, h, give)
	if err == nil {
		err = gerr
	}
	moves := eff.Moves
	if err != nil {
		if perr == nil {
			_ = wait()
		}
		_ = giveWait()
		s.sharedMoves(req.Topic, req.Consumer, moves)
		return topicstore.AcquireResult{Wait: noWait}, err
	}
	slices.SortFunc(out, func(a, b topicstore.Acquired) int {
		if c := cmp.Compare(a.Message.Partition, b.Message.Partition); c != 0 {
			return c
		}
		return cmp.Compare(a.Message.Offset, b.Message.Offset)
	})
	res.Messages = out
	res.Wait = func() error {
		err := wait()
		if err2 := giveWait(); err == nil {
			err = err2
		}
		s.sharedMoves(req.Topic, req.Consumer, moves)
		return err
	}
	return res, nil
}

// sharedGiveBack makes messages h picked and did not hand out available
// again, their delivery not counted, unless their lock expired meanwhile
// (another session may hold them now) or the consumer was dropped.
func (s *PebbleStore) sharedGiveBack(m *shMgr, h sharedcore.Holder, refs []topicstore.MsgRef) (wait func() error, err error) {
	if len(refs) == 0 {
		return noWait, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dead {
		return noWait, nil
	}
	var eff sharedcore.Effects
	for _, r := range refs {
		if m.core.Unacquire(h, r) {
			e := m.core.Parts[r.Partition].At(r.Offset)
			eff.Counts = append(eff.Counts, sharedcore.Ref{Part: r.Partition, Off: r.Offset, State: sharedcore.Avail, Deliv: e.Deliveries})
		}
	}
	return s.sharedPersist(m, &eff)
}

func (p *partition) startOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.start
}

// sharedFetch returns the picked messages (in pick order), with the
// delivery count each was picked with and their lock's deadline: those
// the consumer's body cache held (kept[i], or nil), and copies of the
// others, read. A message retention deleted meanwhile is left out (and
// unpicked by the next fill, which drops it).
func (s *PebbleStore) sharedFetch(ctx context.Context, t *topic, refs []topicstore.MsgRef, kept []*topicstore.Message, deliveries []int, until time.Time) ([]topicstore.Acquired, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]topicstore.Acquired, len(refs))
	var missing []topicstore.MsgRef // and their indexes in refs
	var at []int
	for i, m := range kept {
		if m != nil {
			out[i] = topicstore.Acquired{Message: *m, DeliveryCount: deliveries[i], LockedUntil: until}
		} else {
			missing, at = append(missing, refs[i]), append(at, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	var arena []byte // the bodies read share it (Message.CloneIn)
	got := make([]bool, len(missing))
	left := len(missing)
	err := topicstore.ScanRefs(ctx, s, t.cfg.Name, missing, func(j int, m *topicstore.Message) {
		out[at[j]] = topicstore.Acquired{Message: m.CloneIn(&arena, len(m.Body)*left), DeliveryCount: deliveries[at[j]], LockedUntil: until}
		got[j] = true
		left--
	})
	if err != nil {
		return nil, err
	}
	if left == 0 {
		return out, nil
	}
	n, j := 0, 0
	for i := range out {
		if kept[i] == nil {
			if !got[j] {
				j++
				continue
			}
			j++
		}
		out[n] = out[i]
		n++
	}
	return out[:n], nil
}

// SharedAction applies an action to messages the session holds; one
// outcome per ref, in order. Acks and archives are synced, and dead-letter
// moves done, before it returns.
func (s *PebbleStore) SharedAction(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, error) {
	return topicstore.WaitOutcomes(s.SharedActionAsync(ctx, req))
}

// SharedActionAsync is SharedAction without waiting for durability: the
// outcomes are decided and the records are in the WAL, and wait blocks
// until they are synced (then runs any dead-letter moves). The caller must
// call wait exactly once, and must not confirm the outcomes to anyone
// before it returned nil. A connection pipelining several acks pays one
// fsync wait instead of one per statement.
func (s *PebbleStore) SharedActionAsync(ctx context.Context, req topicstore.SharedActionRequest) ([]topicstore.SharedOutcome, func() error, error) {
	t, m, err := s.sharedMgr(req.Topic, req.Consumer)
	if err != nil {
		return nil, nil, err
	}
	now := s.opts.Clock().UnixNano()
	var eff sharedcore.Effects
	m.core.Expire(now, &eff)
	until := req.Until
	if until.IsZero() { // ActionExtend without Until: by the consumer's timeout
		until = time.Unix(0, now).Add(m.core.Cfg.Timeout)
	}
	outs := make([]topicstore.SharedOutcome, len(req.Refs))
	eff.Finished = slices.Grow(eff.Finished, len(req.Refs))
	for i, r := range req.Refs {
		if r.Partition < 0 || int(r.Partition) >= len(t.parts) || r.Offset < t.parts[r.Partition].startOffset() ||
			r.Offset >= t.parts[r.Partition].visibleEnd.Load() {
			outs[i] = topicstore.OutcomeUnknown
			continue
		}
		outs[i] = m.core.Act(now, holder(req.Session), req.Action, r, until, &eff)
	}
	wait, err := s.sharedPersistDeferred(m, &eff)
	m.mu.Unlock()
	if err != nil {
		s.sharedMoves(req.Topic, req.Consumer, eff.Moves)
		return nil, nil, err
	}
	moves := eff.Moves
	return outs, func() error {
		err := wait()
		s.sharedMoves(req.Topic, req.Consumer, moves)
		if err != nil {
			return err
		}
		s.sharedSyncPositions(context.Background(), req.Topic, req.Consumer, m)
		return nil
	}, nil
}

// sharedSyncPositions stores each partition's start (first unfinished
// offset) as the consumer's committed position once it moved by
// sharedPositionStep or the partition is drained, so that retention's
// important / availability_period rules and sys views see a shared
// consumer's progress. One synced position write per step: cheap.
func (s *PebbleStore) sharedSyncPositions(ctx context.Context, topic, consumer string, m *shMgr) {
	const sharedPositionStep = 256
	if !m.posMu.TryLock() {
		return // another action is storing positions: it, or a later one, stores ours
	}
	defer m.posMu.Unlock()
	m.mu.Lock()
	var req topicstore.CommitRequest
	for pi, p := range m.core.Parts {
		for len(m.posSent) <= pi {
			m.posSent = append(m.posSent, 0)
		}
		drained := len(p.Ents) == 0 && p.Start > m.posSent[pi]
		if drained || p.Start-m.posSent[pi] >= sharedPositionStep {
			// Expect: a consumer dropped and re-created meanwhile is not moved.
			req.Positions = append(req.Positions, topicstore.PositionUpdate{Topic: topic, Consumer: consumer,
				Partition: int32(pi), Offset: p.Start, Expect: m.posSent[pi]})
		}
	}
	dead := m.dead
	m.mu.Unlock()
	if dead || len(req.Positions) == 0 {
		return
	}
	_, err := s.Commit(ctx, &req)
	switch {
	case err == nil:
		for _, u := range req.Positions {
			m.posSent[u.Partition] = u.Offset
		}
	case errors.Is(err, topicstore.ErrPositionConflict): // moved by SetPosition: retried from there
		if pos, err := s.Positions(topic, consumer); err == nil {
			for p, off := range pos {
				if int(p) < len(m.posSent) {
					m.posSent[p] = off
				}
			}
		}
	}
}

// ReleaseSession releases the session's locks: those of refs, or all of
// them if refs is nil. Each release counts as a failed attempt (the
// dead-letter policy may apply).
func (s *PebbleStore) ReleaseSession(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	_, m, err := s.sharedMgr(topic, consumer)
	if err != nil {
		return
	}
	var eff sharedcore.Effects
	m.core.Expire(s.opts.Clock().UnixNano(), &eff)
	m.core.ReleaseSession(holder(session), refs, &eff)
	wait, err := s.sharedPersist(m, &eff)
	m.mu.Unlock()
	if err == nil {
		_ = wait()
	}
	s.sharedMoves(topic, consumer, eff.Moves)
}

// ReleaseUndelivered hands back messages the session acquired whose rows
// never reached its client: they are available again at once and the
// attempt is not counted against max_processing_attempts.
func (s *PebbleStore) ReleaseUndelivered(topic, consumer string, session uint32, refs []topicstore.MsgRef) {
	_, m, err := s.sharedMgr(topic, consumer)
	if err != nil {
		return
	}
	var eff sharedcore.Effects
	m.core.Expire(s.opts.Clock().UnixNano(), &eff)
	for _, r := range refs {
		if m.core.Unacquire(holder(session), r) {
			eff.Counts = append(eff.Counts, sharedcore.Ref{Part: r.Partition, Off: r.Offset, State: sharedcore.Avail,
				Deliv: m.core.Parts[r.Partition].At(r.Offset).Deliveries})
		}
	}
	wait, err := s.sharedPersist(m, &eff)
	m.mu.Unlock()
	if err == nil {
		_ = wait()
	}
	s.sharedMoves(topic, consumer, eff.Moves)
}

// SharedStats reports each partition's window.
func (s *PebbleStore) SharedStats(topic, consumer string) ([]topicstore.SharedPartitionStats, error) {
	t, m, err := s.sharedMgr(topic, consumer)
	if err != nil {
		return nil, err
	}
	now := s.opts.Clock().UnixNano()
	var eff sharedcore.Effects
	m.core.Expire(now, &eff)
	_, err = s.sharedFill(t, m, &eff, false)
	out := make([]topicstore.SharedPartitionStats, len(m.core.Parts))
	for i := range out {
		out[i] = m.core.Stats(i, now)
		m.counts.fill(&out[i])
	}
	wait, perr := s.sharedPersist(m, &eff)
	m.mu.Unlock()
	if perr == nil {
		perr = wait()
	}
	s.sharedMoves(topic, consumer, eff.Moves)
	if err == nil {
		err = perr
	}
	if err == nil && len(eff.Moves) > 0 {
		return s.SharedStats(topic, consumer) // as of after the moves
	}
	return out, err
}

// sharedMoves performs dead-letter moves: each message is published to the
// consumer's dead_letter_queue through Commit, then archived (synced). The
// publish uses producer "dlq/<topic>/<consumer>/<partition>/<offset>" with
// seqno 1, so a move retried after a crash between the publish and the
// archive is deduplicated: effectively atomic. (One producer per message,
// not per partition: moves of a partition happen out of offset order, and
// a per-partition producer's seqno dedup would drop the later-moved lower
// offsets.) If the publish fails (no such topic, ...) the message returns to
// the queue with its delivery count, and the move is retried after its next
// failure.
func (s *PebbleStore) sharedMoves(topic, consumer string, moves []sharedcore.Ref) {
	for _, mv := range moves {
		perr := s.sharedPublishDLQ(topic, consumer, mv)
		ok := perr == nil
		_, m, err := s.sharedMgr(topic, consumer)
		if err != nil {
			return
		}
		if m.counts.noteMove(mv, perr, m.core.Parts) {
			dlq := ""
			if cc := findConsumer(m.t, consumer); cc != nil {
				dlq = cc.DeadLetterQueue
			}
			s.logMoveFailure(topic, consumer, dlq, mv, perr)
		}
		var eff sharedcore.Effects
		if e := m.core.Parts[mv.Part].At(mv.Off); e != nil && e.State == sharedcore.Pending {
			if ok {
				e.State = sharedcore.Archived
				m.core.FinishedGroup(e)
				eff.Finished = append(eff.Finished, sharedcore.Ref{Part: mv.Part, Off: mv.Off, State: sharedcore.Archived})
			} else {
				e.State = sharedcore.Avail
				m.core.Freed = true
			}
		}
		wait, err := s.sharedPersist(m, &eff)
		m.mu.Unlock()
		if err == nil {
			_ = wait()
		}
	}
}

func (s *PebbleStore) sharedPublishDLQ(topic, consumer string, mv sharedcore.Ref) error {
	t, err := s.lookup(topic)
	if err != nil {
		return err
	}
	cc := findConsumer(t, consumer)
	if cc == nil || cc.DeadLetterQueue == "" {
		return fmt.Errorf("%w: no dead_letter_queue", topicstore.ErrTopicNotFound)
	}
	var dm topicstore.Message
	found := false
	err = s.Scan(bgCtx, topic, topicstore.ScanRange{Partition: mv.Part, Start: mv.Off, End: mv.Off + 1}, func(msg *topicstore.Message) bool {
		dm, found = msg.Clone(), true // its slices outlive the scan's iterator
		return false
	})
	if err != nil || !found {
		return fmt.Errorf("dead-letter move of %s/%d/%d: message not readable: %v", topic, mv.Part, mv.Off, err)
	}
	data, err := dm.Decode()
	if err != nil {
		return err
	}
	attrs := append(slices.Clone(dm.Attrs),
		topicstore.Attr{Key: "dlq_source_topic", Value: topic},
		topicstore.Attr{Key: "dlq_source_partition", Value: strconv.Itoa(int(mv.Part))},
		topicstore.Attr{Key: "dlq_source_offset", Value: strconv.FormatInt(mv.Off, 10)},
		topicstore.Attr{Key: "dlq_attempts", Value: strconv.Itoa(int(mv.Deliv))})
	out := topicstore.Message{Partition: -1, ProducerID: fmt.Sprintf("dlq/%s/%s/%d/%d", topic, consumer, mv.Part, mv.Off),
		SeqNo: 1, HasSeqNo: true, MessageGroupID: dm.MessageGroupID, CreatedAt: dm.CreatedAt,
		Codec: dm.Codec, Attrs: attrs, Body: data, Key: dm.Key, Headers: dm.Headers, NullBody: dm.NullBody}
	for _, codec := range []topicstore.Codec{dm.Codec, topicstore.CodecRaw} {
		out.Codec = codec
		_, err = s.Commit(bgCtx, &topicstore.CommitRequest{Writes: []topicstore.TopicWrite{{Topic: cc.DeadLetterQueue, Messages: []topicstore.Message{out}}}})
		if !errors.Is(err, topicstore.ErrCodecNotSupported) {
			break
		}
	}
	return err
}
