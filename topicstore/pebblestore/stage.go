package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sequencer"
)

// Staging: a large transaction's messages are encoded into record batches
// and stored before the commit under t/<sid><seq>, where sid is a staging
// ID the store assigns to the transaction (the caller's transaction IDs
// restart with the process; sids never repeat: Open starts above every sid
// on disk). The writes are unsynced: the commit batch that references them
// is synced, and Pebble's WAL is sequential, so its fsync makes them
// durable too. The commit writes reference records (topicstore/record.go) instead of
// copying, plus r/<sid> listing the partitions that reference the data.
//
// Garbage collection: staged data of a transaction that never committed
// is deleted by DiscardStaged and, after a crash, at Open (every sid
// without an r/ record). Committed staged data is deleted as a whole, with
// its r/ record, when no partition references it any more: retention has
// cut every partition past the transaction's messages, or the topic was
// dropped (internal/sequencer/core_staged.go). Until then a partially expired transaction's
// data stays on disk in full (bounded by the transaction's size).

// stageTxn is an open transaction's staging state.
type stageTxn struct {
	sid        uint64
	nextSeq    uint64
	committing bool
}

// stageRegistry tracks open stagings by the caller's transaction ID.
type stageRegistry struct {
	mu      sync.Mutex
	nextSID uint64
	open    map[uint64]*stageTxn
	// use is read-held while StageBatch or DiscardStaged use the DB
	// (they run on callers' goroutines); Close takes it before closing it.
	use sync.RWMutex
}

// stageFlushBytes bounds the Pebble batch StageBatch builds before it
// writes it (memory stays bounded whatever the call's size).
const stageFlushBytes = 4 << 20

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

// StageBatch implements Stager.
func (s *PebbleStore) StageBatch(ctx context.Context, txnID uint64, name string, msgs []topicstore.Message) (topicstore.StagedBatch, error) {
	if err := ctx.Err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	if err := s.err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	t, err := s.lookup(name)
	if err != nil {
		return topicstore.StagedBatch{}, err
	}
	s.stage.use.RLock()
	defer s.stage.use.RUnlock()
	if err := s.err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	for i := range msgs {
		if err := validateMessage(t, name, &msgs[i]); err != nil {
			return topicstore.StagedBatch{}, err
		}
	}
	s.stage.mu.Lock()
	st := s.stage.open[txnID]
	if st == nil {
		st = &stageTxn{sid: s.stage.nextSID}
		s.stage.nextSID++
		s.stage.open[txnID] = st
	}
	committing := st.committing
	s.stage.mu.Unlock()
	if committing {
		return topicstore.StagedBatch{}, fmt.Errorf("transaction %d is committing", txnID)
	}
	sb := topicstore.StagedBatch{Topic: name, TxnID: txnID, Messages: len(msgs), StageID: st.sid}
	b := s.db.NewBatch()
	defer func() { b.Close() }()
	ch := topicstore.Chunker{Target: sequencer.BatchTargetBytes, Now: s.opts.Clock(), Flush: func(c topicstore.StagedChunk, payload []byte) error {
		s.stage.mu.Lock()
		c.Seq = st.nextSeq
		st.nextSeq++
		s.stage.mu.Unlock()
		sb.Chunks = append(sb.Chunks, c)
		sb.Bytes += c.Bytes
		if err := b.Set(keys.Staged(st.sid, c.Seq), payload, nil); err != nil {
			return err
		}
		if b.Len() < stageFlushBytes {
			return nil
		}
		err := b.Commit(pebble.NoSync)
		b.Close()
		b = s.db.NewBatch()
		return err
	}}
	for i := range msgs {
		if err := ch.Add(&msgs[i]); err != nil {
			return topicstore.StagedBatch{}, err
		}
	}
	if err := ch.Close(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return topicstore.StagedBatch{}, err
	}
	return sb, nil
}

// DiscardStaged implements Stager.
func (s *PebbleStore) DiscardStaged(txnID uint64) error {
	s.stage.mu.Lock()
	st := s.stage.open[txnID]
	if st == nil || st.committing {
		s.stage.mu.Unlock()
		return nil
	}
	delete(s.stage.open, txnID)
	s.stage.mu.Unlock()
	s.stage.use.RLock()
	defer s.stage.use.RUnlock()
	if err := s.err(); err != nil {
		return err // Open deletes it
	}
	return s.db.DeleteRange(keys.Topic(keys.PrefixStaged, st.sid), keys.Topic(keys.PrefixStaged, st.sid+1), pebble.NoSync)
}

// claimStaged marks the stagings req references as committing (so that
// neither DiscardStaged nor a second commit can touch them) and returns
// their transaction IDs.
func (s *PebbleStore) claimStaged(req *topicstore.CommitRequest) ([]uint64, error) {
	var ids []uint64
	s.stage.mu.Lock()
	defer s.stage.mu.Unlock()
	for _, w := range req.Writes {
		for _, sb := range w.Staged {
			st := s.stage.open[sb.TxnID]
			if st == nil || st.sid != sb.StageID || (st.committing && !slices.Contains(ids, sb.TxnID)) {
				for _, id := range ids {
					s.stage.open[id].committing = false
				}
				return nil, fmt.Errorf("staged data of transaction %d is gone (discarded or committed)", sb.TxnID)
			}
			if !st.committing {
				st.committing = true
				ids = append(ids, sb.TxnID)
			}
		}
	}
	return ids, nil
}

// settleStaged ends a commit's claim: committed stagings are forgotten
// (their data now belongs to the partitions), failed ones can be
// discarded.
func (s *PebbleStore) settleStaged(ids []uint64, committed bool) {
	s.stage.mu.Lock()
	defer s.stage.mu.Unlock()
	for _, id := range ids {
		if committed {
			delete(s.stage.open, id)
		} else {
			s.stage.open[id].committing = false
		}
	}
}

// loadStaged reads a staged payload (a copy) for the core.
func (s *PebbleStore) loadStaged(sid, seq uint64) ([]byte, error) {
	v, closer, err := s.db.Get(keys.Staged(sid, seq))
	if err != nil {
		return nil, fmt.Errorf("staged batch %d/%d: %w", sid, seq, err)
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// releaseRefs writes the release of partition part's references up to
// upTo into b (committer only).
func (s *PebbleStore) releaseRefs(b *pebble.Batch, ct *sequencer.Topic, part int32, upTo int64) {
	s.coreMu.Lock()
	sets, gone := s.core.ReleaseRefs(ct, part, upTo)
	s.coreMu.Unlock()
	for _, kv := range sets {
		_ = b.Set(kv.Key, kv.Value, nil)
	}
	for _, sid := range gone {
		_ = b.Delete(keys.Refs(sid), nil)
		_ = b.DeleteRange(keys.Topic(keys.PrefixStaged, sid), keys.Topic(keys.PrefixStaged, sid+1), nil)
	}
}

// recoverStaged loads the r/ records and deletes staged data no commit
// references (transactions that were open at a crash or close).
func (s *PebbleStore) recoverStaged() error {
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	s.core.Refs = map[uint64][]sequencer.RefEntry{}
	var next uint64 = 1
	for ok := it.SeekGE([]byte(keys.PrefixRefs)); ok && keys.HasPrefix(it.Key(), keys.PrefixRefs); ok = it.Next() {
		sid := binary.BigEndian.Uint64(it.Key()[len(keys.PrefixRefs):])
		next = max(next, sid+1)
		es, err := sequencer.DecodeRefs(it.Value())
		if err != nil {
			return err
		}
		es = slices.DeleteFunc(es, func(e sequencer.RefEntry) bool {
			ct := s.core.Topics[e.TopicID]
			return ct == nil || int(e.Part) >= len(ct.Parts)
		})
		if len(es) == 0 {
			_ = b.Delete(slices.Clone(it.Key()), nil)
			continue
		}
		s.core.Refs[sid] = es
		for _, e := range es {
			cp := &s.core.Topics[e.TopicID].Parts[e.Part]
			cp.Refs = append(cp.Refs, sequencer.PartRef{End: e.End, SID: sid})
		}
	}
	for _, ct := range s.core.Topics {
		for i := range ct.Parts {
			slices.SortFunc(ct.Parts[i].Refs, func(a, b sequencer.PartRef) int { return int(a.End - b.End) })
		}
	}
	for ok := it.SeekGE([]byte(keys.PrefixStaged)); ok && keys.HasPrefix(it.Key(), keys.PrefixStaged); {
		if len(it.Key()) < len(keys.PrefixStaged)+8 {
			return fmt.Errorf("%w: staged key", topicstore.ErrCorrupt)
		}
		sid := binary.BigEndian.Uint64(it.Key()[len(keys.PrefixStaged):])
		next = max(next, sid+1)
		if s.core.Refs[sid] == nil {
			_ = b.DeleteRange(keys.Topic(keys.PrefixStaged, sid), keys.Topic(keys.PrefixStaged, sid+1), nil)
		}
		if sid == math.MaxUint64 {
			break
		}
		ok = it.SeekGE(keys.Topic(keys.PrefixStaged, sid+1))
	}
	if err := it.Error(); err != nil {
		return err
	}
	s.stage.nextSID = next
	s.stage.open = map[uint64]*stageTxn{}
	s.core.Load = s.loadStaged
	if b.Empty() {
		return nil
	}
	return b.Commit(pebble.Sync)
}

// StagedStats reports the staging state (for tests and monitoring): it
// reads every staged key.
type StagedStats struct {
	Open       int   // transactions with staged data, not committed or discarded
	Referenced int   // committed staging IDs whose data partitions reference
	Keys       int   // staged keys stored
	Bytes      int64 // their value bytes
}

// StagedStats reports the staging state.
func (s *PebbleStore) StagedStats() (StagedStats, error) {
	var st StagedStats
	s.stage.use.RLock()
	defer s.stage.use.RUnlock()
	if err := s.err(); err != nil {
		return st, err
	}
	s.stage.mu.Lock()
	st.Open = len(s.stage.open)
	s.stage.mu.Unlock()
	s.coreMu.Lock()
	st.Referenced = len(s.core.Refs)
	s.coreMu.Unlock()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(keys.PrefixStaged), UpperBound: []byte("t0")})
	if err != nil {
		return st, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		st.Keys++
		st.Bytes += int64(len(it.Value()))
	}
	return st, it.Error()
}
