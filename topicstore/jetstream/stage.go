package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/plan"
)

// Staging (topicstore.Stager): a large transaction's messages are stored
// before its commit as chunks, plain stream messages on the subject
// <prefix>.t.<gateway>.<transaction>, which no fold reads. The commit then
// joins each chunk to a partition by reference: a reference record (the
// record format's version 2) naming the chunk's stream sequence, so the
// commit's atomic batch stays small however large the transaction, and
// Scan reads the chunk where it was staged. A chunk of one producer whose
// seqnos increase is deduplicated from its summary; any other producer
// chunk joins as messages (read back at commit).
//
// DiscardStaged purges the transaction's subject. What a gateway that dies
// with open transactions staged is swept by the maintenance lease's
// holder once the gateway's heartbeat has expired (jetstream/maintain).

// stageChunkBytes is the target size of a staged chunk.
const stageChunkBytes = 256 << 10

// stagings tracks this gateway's open stagings.
type stagings struct {
	mu   sync.Mutex
	gw   string // this gateway's id in staging subjects
	open map[uint64]*staging
}

type staging struct {
	state stagingState
	// openedAt is the fold's sequence when the staging opened: a sweep
	// fence of this gateway after it means its chunks may be gone.
	openedAt uint64
}

// stagingState is where a staging is between StageBatch and its end.
type stagingState uint8

const (
	stagingOpen       stagingState = iota // taking batches; DiscardStaged deletes it
	stagingCommitting                     // a commit naming it is under way
	stagingDoubt                          // its commit's outcome is unknown: kept until the fold decides (jetstream/chain)
	stagingCommitted                      // referenced by committed records: the store's now
)

// settle moves the stagings txns to state; committed ones are forgotten
// (the records that reference them keep their chunks). A staging in doubt
// only leaves that state for committed or open (chain.Chain.Settle).
func (st *stagings) settle(txns []uint64, state stagingState) {
	if len(txns) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, txn := range txns {
		x := st.open[txn]
		switch {
		case x == nil:
		case state == stagingCommitted:
			delete(st.open, txn)
		case state == stagingDoubt && x.state != stagingCommitting:
			// chain.Chain.Settle decided it first.
		default:
			x.state = state
		}
	}
}

// StageBatch implements topicstore.Stager.
func (s *Store) StageBatch(ctx context.Context, txnID uint64, name string, msgs []topicstore.Message) (topicstore.StagedBatch, error) {
	if err := ctx.Err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	if s.isClosed() {
		return topicstore.StagedBatch{}, topicstore.ErrClosed
	}
	t, err := s.topic(name)
	if err != nil {
		return topicstore.StagedBatch{}, fmt.Errorf("%w: %q", err, name)
	}
	for i := range msgs {
		if err := validateMessage(t, name, &msgs[i]); err != nil {
			return topicstore.StagedBatch{}, err
		}
	}
	s.stage.mu.Lock()
	st := s.stage.open[txnID]
	opened := st == nil
	if opened {
		s.mu.Lock()
		st = &staging{openedAt: s.applied}
		s.mu.Unlock()
		s.stage.open[txnID] = st
	}
	committing := st.state != stagingOpen
	s.stage.mu.Unlock()
	if opened {
		s.groups.Kick() // a gateway with stagings keeps a heartbeat (jetstream/maintain's sweep)
	}
	if committing {
		return topicstore.StagedBatch{}, fmt.Errorf("transaction %d is committing", txnID)
	}
	sb := topicstore.StagedBatch{Topic: name, TxnID: txnID, Messages: len(msgs), StageID: txnID}
	var pending []*nats.Msg
	var chunks []topicstore.StagedChunk
	subject := s.subj.Staged(fold.StagedKey(s.stage.gw, txnID))
	ch := topicstore.Chunker{Target: stageChunkBytes, Now: s.opts.Clock(), Flush: func(c topicstore.StagedChunk, payload []byte) error {
		m := nats.NewMsg(subject)
		m.Data = payload
		pending = append(pending, m)
		chunks = append(chunks, c)
		return nil
	}}
	for i := range msgs {
		if err := ch.Add(&msgs[i]); err != nil {
			return topicstore.StagedBatch{}, err
		}
	}
	if err := ch.Close(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	seqs, err := s.io.publishAll(rctx, pending)
	if err != nil {
		if ctx.Err() != nil {
			return topicstore.StagedBatch{}, ctx.Err()
		}
		return topicstore.StagedBatch{}, s.unavailable(err)
	}
	for i := range chunks {
		chunks[i].Seq = seqs[i]
		sb.Chunks = append(sb.Chunks, chunks[i])
		sb.Bytes += chunks[i].Bytes
	}
	return sb, nil
}

// DiscardStaged implements topicstore.Stager.
func (s *Store) DiscardStaged(txnID uint64) error {
	s.stage.mu.Lock()
	st := s.stage.open[txnID]
	if st == nil || st.state != stagingOpen {
		// Committing: its commit settles it; in doubt: the fold decides
		// (jetstream/chain); committed: the store's.
		s.stage.mu.Unlock()
		return nil
	}
	delete(s.stage.open, txnID)
	s.stage.mu.Unlock()
	// A rollup of the staging's subject deletes its chunks, and every
	// gateway's fold forgets them (jetstream/maintain).
	return s.maint.MarkGone(context.Background(), s.subj.Staged(fold.StagedKey(s.stage.gw, txnID)), 0, true)
}

// claimStaged validates a write's staged batches (this gateway's, open,
// of the topic, partitions and codecs it accepts) and returns their
// chunks in order, and the fold sequence the oldest of them opened at.
// claimed holds the stagings the commit claimed already (another batch of
// the same transaction).
func (s *Store) claimStaged(ctx context.Context, t topicConfigView, w topicstore.TopicWrite, claimed map[uint64]bool) (out []topicstore.StagedChunk, openedAt uint64, err error) {
	for _, sb := range w.Staged {
		if sb.Topic != w.Topic {
			return nil, 0, fmt.Errorf("staged batch of topic %q in a write to %q", sb.Topic, w.Topic)
		}
		s.stage.mu.Lock()
		st := s.stage.open[sb.TxnID]
		if st == nil || st.state != stagingOpen && !(st.state == stagingCommitting && claimed[sb.TxnID]) {
			s.stage.mu.Unlock()
			return nil, 0, fmt.Errorf("staged data of transaction %d is gone (discarded or committed)", sb.TxnID)
		}
		st.state = stagingCommitting
		claimed[sb.TxnID] = true
		if openedAt == 0 || st.openedAt < openedAt {
			openedAt = st.openedAt
		}
		s.stage.mu.Unlock()
		for _, c := range sb.Chunks {
			if c.Partition >= int32(t.parts) {
				return nil, 0, fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, w.Topic, c.Partition)
			}
			for codec := topicstore.Codec(0); codec < 8; codec++ {
				if c.Codecs&(1<<codec) != 0 && !t.codecs[codec] {
					return nil, 0, fmt.Errorf("%w: topic %q does not accept codec %s", topicstore.ErrCodecNotSupported, w.Topic, codec)
				}
			}
			c.Partition = max(c.Partition, -1)
			out = append(out, c)
		}
	}
	return out, openedAt, nil
}

// settleStaged records how a commit naming these stagings ended:
// committed, in doubt (ErrOutcomeUnknown) or not.
func (s *Store) settleStaged(req *topicstore.CommitRequest, err error) {
	state := stagingOpen
	switch {
	case err == nil:
		state = stagingCommitted
	case errors.Is(err, topicstore.ErrOutcomeUnknown):
		state = stagingDoubt
	}
	var txns []uint64
	for _, w := range req.Writes {
		for _, sb := range w.Staged {
			txns = append(txns, sb.TxnID)
		}
	}
	if state == stagingOpen {
		// Back to open only from committing (a refused commit).
		s.stage.mu.Lock()
		for _, txn := range txns {
			if st := s.stage.open[txn]; st != nil && st.state == stagingCommitting {
				st.state = stagingOpen
			}
		}
		s.stage.mu.Unlock()
		return
	}
	s.stage.settle(txns, state)
}

// expandStaged reads back the chunks that must join as messages (a
// producer's chunk without increasing seqnos; all of them with all set)
// and returns the others and those messages, in order: expanded chunks
// come first only when every chunk is expanded, so order is kept.
func (s *Store) expandStaged(ctx context.Context, chunks []topicstore.StagedChunk, all bool) ([]topicstore.StagedChunk, []plan.Msg, error) {
	need := all
	for _, c := range chunks {
		if c.ProducerID != "" && !c.SeqOK {
			need = true
		}
	}
	if !need {
		return chunks, nil, nil
	}
	var out []plan.Msg
	var dec topicstore.MsgDecoder
	for _, c := range chunks {
		rctx, cancel := s.request(ctx)
		data, err := s.io.getMsg(rctx, c.Seq)
		cancel()
		if err != nil {
			return nil, nil, s.unavailable(err)
		}
		for p := data; len(p) > 0; {
			entry, rest, err := topicstore.NextEntry(p)
			if err != nil {
				return nil, nil, err
			}
			p = rest
			hasSeq, seq, tail, err := topicstore.SplitEntry(entry)
			if err != nil {
				return nil, nil, err
			}
			m, err := dec.Decode(entry)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, plan.Msg{Partition: c.Partition, Producer: m.ProducerID, Group: m.MessageGroupID,
				SeqNo: seq, HasSeqNo: hasSeq, Tail: append([]byte(nil), tail...)})
		}
	}
	return nil, out, nil
}

// StagedMessages counts the staged chunks stored in the stream (every
// gateway's, committed or not) and this gateway's open stagings.
func (s *Store) StagedMessages(ctx context.Context) (chunks uint64, open int, err error) {
	rctx, cancel := s.request(ctx)
	defer cancel()
	info, err := s.stream.Info(rctx, natsjs.WithSubjectFilter(s.subj.Filter(fold.KindStaged)))
	if err != nil {
		return 0, 0, s.unavailable(err)
	}
	for _, n := range info.State.Subjects {
		chunks += n
	}
	return chunks, s.openStagings(), nil
}

// openStagings counts this gateway's stagings not committed.
func (s *Store) openStagings() int {
	s.stage.mu.Lock()
	defer s.stage.mu.Unlock()
	n := 0
	for _, st := range s.stage.open {
		if st.state != stagingCommitted {
			n++
		}
	}
	return n
}
