package pebblestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/sequencer"
)

// op is one unit of work for the committer: a commit or a DDL step.
type op struct {
	writes []sequencer.Write
	pos    []sequencer.PosUpdate
	fences []sequencer.Fence
	size   int
	ddl    func() error // run by the committer, alone
	res    chan sequencer.Outcome
	// acks are shared-consumer acknowledgements committed with the writes
	// (see sharedCommitAcks); ackB holds their records while the group is
	// built and ackApply settles the in-memory state after the sync.
	acks     []topicstore.SharedAck
	ackB     *pebble.Batch
	ackApply func(committed bool)
}

// group is a committed batch waiting for its fsync.
type group struct {
	b   *pebble.Batch
	ops []*op
	out sequencer.Output
	err error // set if the batch failed before the sync stage
}

// validateMessage applies Commit's checks to one message of topic t.
func validateMessage(t *topic, name string, m *topicstore.Message) error {
	if m.Partition >= int32(len(t.parts)) {
		return fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, name, m.Partition)
	}
	if c := topicstore.CodecOf(m); !c.Valid() || !t.codecs[c] {
		return fmt.Errorf("%w: topic %q does not accept codec %s", topicstore.ErrCodecNotSupported, name, c)
	}
	return topicstore.CheckMessage(m)
}

// Commit validates and encodes req on the caller's goroutine, then hands it
// to the committer and waits until it is synced and visible.
func (s *PebbleStore) Commit(ctx context.Context, req *topicstore.CommitRequest) (topicstore.CommitResult, error) {
	if err := ctx.Err(); err != nil {
		return topicstore.CommitResult{}, err
	}
	if err := s.err(); err != nil {
		return topicstore.CommitResult{}, err
	}
	if req == nil {
		req = &topicstore.CommitRequest{}
	}
	o := &op{writes: make([]sequencer.Write, len(req.Writes))}
	now := s.opts.Clock()
	total := 0
	var err error
	for i := range req.Writes {
		w := &req.Writes[i]
		t, err := s.lookup(w.Topic)
		if err != nil {
			return topicstore.CommitResult{}, err
		}
		size := 0
		for j := range w.Messages {
			m := &w.Messages[j]
			if err := validateMessage(t, w.Topic, m); err != nil {
				return topicstore.CommitResult{}, err
			}
			size += len(m.Body) + 64 + len(m.ProducerID) + len(m.MessageGroupID) + topicstore.KafkaSize(m)
			for _, a := range m.Attrs {
				size += len(a.Key) + len(a.Value) + 4
			}
		}
		// Encode all messages of the write into one buffer.
		msgs, encoded, err := sequencer.EncodeMsgs(w.Messages, size, now)
		if err != nil {
			return topicstore.CommitResult{}, err
		}
		staged, err := sequencer.StagedOf(w, len(t.parts), &t.codecs)
		if err != nil {
			return topicstore.CommitResult{}, err
		}
		o.writes[i] = sequencer.Write{TopicID: t.id, Msgs: msgs, Staged: staged}
		total += encoded + 64*len(staged)
	}
	if o.pos, err = s.pendingPositions(req.Positions); err != nil {
		return topicstore.CommitResult{}, err
	}
	if o.fences, err = s.pendingFences(req.Fences); err != nil {
		return topicstore.CommitResult{}, err
	}
	o.acks = req.Acks
	for _, a := range req.Acks {
		total += 32 * len(a.Refs)
	}
	o.size = total + 32*len(o.pos)
	claimed, err := s.stage.Claim(req)
	if err != nil {
		return topicstore.CommitResult{}, err
	}
	out, err := s.submit(ctx, o)
	if claimed != nil {
		s.stage.Settle(claimed, err == nil)
	}
	return out.Result, err
}

// submit enqueues o and waits for its outcome.
func (s *PebbleStore) submit(ctx context.Context, o *op) (sequencer.Outcome, error) {
	o.res = make(chan sequencer.Outcome, 1)
	select {
	case s.ops <- o:
	case <-s.done:
		return sequencer.Outcome{}, s.closedErr()
	case <-ctx.Done():
		return sequencer.Outcome{}, ctx.Err()
	}
	// Once enqueued the outcome is decided by the committer; wait for it
	// regardless of ctx so the caller learns whether it was written.
	select {
	case r := <-o.res:
		return r, r.Err
	case <-s.done:
		select {
		case r := <-o.res:
			return r, r.Err
		default:
			return sequencer.Outcome{}, s.closedErr()
		}
	}
}

func (s *PebbleStore) closedErr() error {
	if err := s.err(); err != nil {
		return err
	}
	return topicstore.ErrClosed
}

// committer is the single goroutine that owns the core state: it drains the
// queue, applies a group, writes it to Pebble and hands it to the syncer.
func (s *PebbleStore) committer() {
	defer close(s.syncq)
	var pending []*op
	for {
		pending = pending[:0]
		select {
		case o := <-s.ops:
			pending = append(pending, o)
		case <-s.quit:
			s.drainClosed()
			return
		}
		size := pending[0].size
		// With nothing else queued, let the sessions that are runnable
		// on this thread submit first: the committer otherwise wakes for
		// each request as it arrives and groups 1.15 of them on average
		// under ingest-1; yielding once makes it 2.8, halving the groups
		// (each a core Apply, a Pebble batch and a trip through the
		// syncer) for the same syncs. A lone request pays one yield.
		if len(s.ops) == 0 {
			runtime.Gosched()
		}
	drain:
		for size < s.opts.MaxGroupBytes && len(pending) < 8192 {
			select {
			case o := <-s.ops:
				pending = append(pending, o)
				size += o.size
			default:
				break drain
			}
		}
		// Commits between DDL ops form groups; a DDL op runs alone.
		from := 0
		for i, o := range pending {
			if o.ddl == nil {
				continue
			}
			s.commitGroup(pending[from:i])
			from = i + 1
			err := s.err()
			if err == nil {
				err = o.ddl()
			}
			o.res <- sequencer.Outcome{Err: err}
		}
		s.commitGroup(pending[from:])
	}
}

// drainClosed fails the ops left in the queue at Close.
func (s *PebbleStore) drainClosed() {
	for {
		select {
		case o := <-s.ops:
			o.res <- sequencer.Outcome{Err: s.closedErr()}
		default:
			return
		}
	}
}

func (s *PebbleStore) commitGroup(ops []*op) {
	if len(ops) == 0 {
		return
	}
	g := &group{ops: append([]*op(nil), ops...)}
	if g.err = s.err(); g.err != nil {
		s.syncq <- g
		return
	}
	// written_at never goes backwards within a process, so that
	// OffsetForTime and retention can binary-search a partition's batches.
	now := s.opts.Clock()
	if now.Before(s.lastNow) {
		now = s.lastNow
	}
	s.lastNow = now
	reqs := make([]sequencer.Request, len(ops))
	ackErrs := make([]error, len(ops))
	for i, o := range ops {
		reqs[i] = sequencer.Request{Writes: o.writes, Positions: o.pos, Fences: o.fences}
		if len(o.acks) == 0 {
			continue
		}
		// A lock that expired (or is not held) fails the whole request
		// before anything of it reaches the core.
		o.ackB = s.db.NewBatch()
		if o.ackApply, ackErrs[i] = s.sharedCommitAcks(o.ackB, o.acks, now); ackErrs[i] != nil {
			reqs[i] = sequencer.Request{}
			o.ackB.Close()
			o.ackB, o.ackApply = nil, nil
		}
	}
	s.coreMu.Lock()
	g.out = s.core.Apply(reqs, now)
	s.coreMu.Unlock()
	acks := false
	for i, o := range ops {
		if ackErrs[i] != nil {
			g.out.Outcomes[i] = sequencer.Outcome{Err: ackErrs[i]}
		}
		if o.ackB != nil && g.out.Outcomes[i].Err != nil { // the request failed in the core
			o.ackApply(false)
			o.ackB.Close()
			o.ackB, o.ackApply = nil, nil
		}
		acks = acks || o.ackB != nil
	}
	if g.out.Err != nil { // staged data unreadable: the core state is ahead
		s.fail(g.out.Err)
		g.err = s.err()
		s.syncq <- g
		return
	}
	if len(g.out.Sets) == 0 && len(g.out.Dels) == 0 && !acks { // only duplicates or rejected requests
		s.syncq <- g
		return
	}
	var b *pebble.Batch
	if n := groupBatchSize(ops, &g.out); n > pebbleRetainedBatch {
		b = s.db.NewBatchWithSize(n)
	} else {
		b = s.db.NewBatch() // from Pebble's pool, grown by earlier groups
	}
	for _, o := range ops {
		if o.ackB != nil {
			if err := b.Apply(o.ackB, nil); err != nil {
				g.err = err
			}
			o.ackB.Close()
			o.ackB = nil
		}
	}
	for _, kv := range g.out.Sets {
		var err error
		if kv.Value == nil { // a forgotten position (sequencer.KV)
			err = b.Delete(kv.Key, nil)
		} else {
			err = b.Set(kv.Key, kv.Value, nil)
		}
		if err != nil {
			g.err = err
		}
	}
	for _, k := range g.out.Dels {
		if err := b.Delete(k, nil); err != nil {
			g.err = err
		}
	}
	if g.err == nil {
		s.groups.Add(1)
		s.groupedOps.Add(int64(len(ops)))
		if s.opts.PlainSync {
			g.err = b.Commit(pebble.Sync)
		} else {
			g.err = s.db.ApplyNoSyncWait(b, pebble.Sync)
			if g.err == nil {
				g.b = b // the syncer waits for the fsync and closes it
			}
		}
	}
	if g.b == nil {
		b.Close()
	}
	if g.err != nil {
		s.fail(g.err) // the core state is ahead of the disk: stop for good
	}
	s.syncq <- g
	if g.err == nil {
		s.meterGroup(g.out.Publish, now)
	}
}

// pebbleRetainedBatch is the largest batch buffer Pebble's pool keeps
// (batchMaxRetainedSize in Pebble 1.1).
const pebbleRetainedBatch = 1 << 20

// groupBatchSize is the size of the Pebble batch commitGroup builds for
// ops and out. A group above pebbleRetainedBatch gets a batch made at
// that size: Pebble's pool does not keep such buffers, so each such
// group (sixteen 1000-row COPYs are ~2 MB) regrew one from empty by
// doubling, copying it each time.
func groupBatchSize(ops []*op, out *sequencer.Output) int {
	n := 12 // the batch header
	for _, o := range ops {
		if o.ackB != nil {
			n += len(o.ackB.Repr())
		}
	}
	for _, kv := range out.Sets {
		n += len(kv.Key) + len(kv.Value) + 1 + 2*binary.MaxVarintLen32
	}
	for _, k := range out.Dels {
		n += len(k) + 1 + binary.MaxVarintLen32
	}
	return n
}

// syncer completes groups in commit order: waits for the fsync, publishes
// the new partition ends and answers the callers.
func (s *PebbleStore) syncer() {
	defer close(s.done)
	for g := range s.syncq {
		err := g.err
		if g.b != nil {
			if err = g.b.SyncWait(); err != nil {
				s.fail(err)
			}
			g.b.Close()
		}
		if err != nil {
			err = s.closedErr()
			for _, o := range g.ops {
				if o.ackApply != nil {
					o.ackApply(false)
				}
				o.res <- sequencer.Outcome{Err: err}
			}
			continue
		}
		s.publish(g.out.Publish)
		for i, o := range g.ops {
			if o.ackApply != nil {
				o.ackApply(true)
			}
			o.res <- g.out.Outcomes[i]
		}
	}
}

// publish advances the visible ends (in order: groups are published FIFO),
// then wakes the topics' long-pollers. It wakes them after releasing s.mu:
// Changed takes s.mu.RLock while it holds notifyMu, so waking (notifyMu)
// under s.mu.RLock deadlocks as soon as a writer (a DDL's install) queues
// for s.mu between the two: the writer waits for publish's read lock,
// publish for Changed's notifyMu, Changed's read lock for the writer.
func (s *PebbleStore) publish(ps []sequencer.Published) {
	if len(ps) == 0 {
		return
	}
	s.mu.RLock()
	for _, pb := range ps {
		t := s.byID[pb.TopicID]
		if t == nil || int(pb.Partition) >= len(t.parts) {
			continue // dropped meanwhile
		}
		p := t.parts[pb.Partition]
		p.mu.Lock()
		p.endCum = pb.EndCum
		p.lastWrite = pb.WrittenAt
		p.visibleEnd.Store(pb.End)
		p.mu.Unlock()
	}
	s.mu.RUnlock()
	if s.opts.onWake != nil {
		s.opts.onWake()
	}
	s.notifyTopics(ps)
}
