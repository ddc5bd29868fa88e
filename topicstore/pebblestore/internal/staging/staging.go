package staging

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

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
// is deleted by Discard and, after a crash, at Open (every sid
// without an r/ record). Committed staged data is deleted as a whole, with
// its r/ record, when no partition references it any more: retention has
// cut every partition past the transaction's messages, or the topic was
// dropped (internal/sequencer/core_staged.go). Until then a partially expired transaction's
// data stays on disk in full (bounded by the transaction's size).

// Host is what staging needs of the store: its failure (ErrClosed once
// closed), and the check Commit applies to a message of a topic.
type Host interface {
	// Err is the store's failure, nil while it works.
	Err() error
	// Check looks topic name up and returns the check of one of its
	// messages (partition, codec, size), or the lookup's error.
	Check(name string) (func(m *topicstore.Message) error, error)
}

// txn is an open transaction's staging state.
type txn struct {
	sid        uint64
	nextSeq    uint64
	committing bool
}

// Stagings tracks open stagings by the caller's transaction ID and
// writes, reads and deletes their staged data.
type Stagings struct {
	db    *pebble.DB
	clock func() time.Time
	host  Host

	mu      sync.Mutex
	nextSID uint64
	open    map[uint64]*txn
	// use is read-held while Stage or Discard use the DB (they run on
	// callers' goroutines); Close takes it before closing it.
	use sync.RWMutex
}

// New returns the stagings of db; Recover fills them before use.
func New(db *pebble.DB, clock func() time.Time, h Host) *Stagings {
	return &Stagings{db: db, clock: clock, host: h}
}

// flushBytes bounds the Pebble batch Stage builds before it writes it
// (memory stays bounded whatever the call's size).
const flushBytes = 4 << 20

// Stage implements topicstore.Stager's StageBatch.
func (st *Stagings) Stage(ctx context.Context, txnID uint64, name string, msgs []topicstore.Message) (topicstore.StagedBatch, error) {
	if err := ctx.Err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	if err := st.host.Err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	check, err := st.host.Check(name)
	if err != nil {
		return topicstore.StagedBatch{}, err
	}
	st.use.RLock()
	defer st.use.RUnlock()
	if err := st.host.Err(); err != nil {
		return topicstore.StagedBatch{}, err
	}
	for i := range msgs {
		if err := check(&msgs[i]); err != nil {
			return topicstore.StagedBatch{}, err
		}
	}
	st.mu.Lock()
	x := st.open[txnID]
	if x == nil {
		x = &txn{sid: st.nextSID}
		st.nextSID++
		st.open[txnID] = x
	}
	committing := x.committing
	st.mu.Unlock()
	if committing {
		return topicstore.StagedBatch{}, fmt.Errorf("transaction %d is committing", txnID)
	}
	sb := topicstore.StagedBatch{Topic: name, TxnID: txnID, Messages: len(msgs), StageID: x.sid}
	b := st.db.NewBatch()
	defer func() { b.Close() }()
	ch := topicstore.Chunker{Target: sequencer.BatchTargetBytes, Now: st.clock(), Flush: func(c topicstore.StagedChunk, payload []byte) error {
		st.mu.Lock()
		c.Seq = x.nextSeq
		x.nextSeq++
		st.mu.Unlock()
		sb.Chunks = append(sb.Chunks, c)
		sb.Bytes += c.Bytes
		if err := b.Set(keys.Staged(x.sid, c.Seq), payload, nil); err != nil {
			return err
		}
		if b.Len() < flushBytes {
			return nil
		}
		err := b.Commit(pebble.NoSync)
		b.Close()
		b = st.db.NewBatch()
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

// Discard implements topicstore.Stager's DiscardStaged.
func (st *Stagings) Discard(txnID uint64) error {
	st.mu.Lock()
	x := st.open[txnID]
	if x == nil || x.committing {
		st.mu.Unlock()
		return nil
	}
	delete(st.open, txnID)
	st.mu.Unlock()
	st.use.RLock()
	defer st.use.RUnlock()
	if err := st.host.Err(); err != nil {
		return err // Open deletes it
	}
	return st.db.DeleteRange(keys.Topic(keys.PrefixStaged, x.sid), keys.Topic(keys.PrefixStaged, x.sid+1), pebble.NoSync)
}

// Close waits for the Stage and Discard calls using the DB and holds
// later ones off while closeDB closes it (they see the store's failure,
// ErrClosed, once they get in).
func (st *Stagings) Close(closeDB func() error) error {
	st.use.Lock() // no Stage or Discard in progress
	defer st.use.Unlock()
	return closeDB()
}

// Claim marks the stagings req references as committing (so that
// neither Discard nor a second commit can touch them) and returns
// their transaction IDs.
func (st *Stagings) Claim(req *topicstore.CommitRequest) ([]uint64, error) {
	var ids []uint64
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, w := range req.Writes {
		for _, sb := range w.Staged {
			x := st.open[sb.TxnID]
			if x == nil || x.sid != sb.StageID || (x.committing && !slices.Contains(ids, sb.TxnID)) {
				for _, id := range ids {
					st.open[id].committing = false
				}
				return nil, fmt.Errorf("staged data of transaction %d is gone (discarded or committed)", sb.TxnID)
			}
			if !x.committing {
				x.committing = true
				ids = append(ids, sb.TxnID)
			}
		}
	}
	return ids, nil
}

// Settle ends a commit's claim: committed stagings are forgotten (their
// data now belongs to the partitions), failed ones can be discarded.
func (st *Stagings) Settle(ids []uint64, committed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, id := range ids {
		if committed {
			delete(st.open, id)
		} else {
			st.open[id].committing = false
		}
	}
}

// load reads a staged payload (a copy) for the core.
func (st *Stagings) load(sid, seq uint64) ([]byte, error) {
	v, closer, err := st.db.Get(keys.Staged(sid, seq))
	if err != nil {
		return nil, fmt.Errorf("staged batch %d/%d: %w", sid, seq, err)
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// Release writes into b what the core's release of a partition's
// references decided (sequencer.State.ReleaseRefs): the r/ records it
// changed, and the deletion of the stagings no partition references any
// more, data and r/ record (committer only).
func Release(b *pebble.Batch, sets []sequencer.KV, gone []uint64) {
	for _, kv := range sets {
		_ = b.Set(kv.Key, kv.Value, nil)
	}
	for _, sid := range gone {
		_ = b.Delete(keys.Refs(sid), nil)
		_ = b.DeleteRange(keys.Topic(keys.PrefixStaged, sid), keys.Topic(keys.PrefixStaged, sid+1), nil)
	}
}

// Recover loads the r/ records into core and deletes staged data no
// commit references (transactions that were open at a crash or close),
// and gives core the way to read a staged payload. Open calls it before
// the committer starts.
func (st *Stagings) Recover(core *sequencer.State) error {
	it, err := st.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return err
	}
	defer it.Close()
	b := st.db.NewBatch()
	defer b.Close()
	core.Refs = map[uint64][]sequencer.RefEntry{}
	var next uint64 = 1
	for ok := it.SeekGE([]byte(keys.PrefixRefs)); ok && keys.HasPrefix(it.Key(), keys.PrefixRefs); ok = it.Next() {
		sid := binary.BigEndian.Uint64(it.Key()[len(keys.PrefixRefs):])
		next = max(next, sid+1)
		es, err := sequencer.DecodeRefs(it.Value())
		if err != nil {
			return err
		}
		es = slices.DeleteFunc(es, func(e sequencer.RefEntry) bool {
			ct := core.Topics[e.TopicID]
			return ct == nil || int(e.Part) >= len(ct.Parts)
		})
		if len(es) == 0 {
			_ = b.Delete(slices.Clone(it.Key()), nil)
			continue
		}
		core.Refs[sid] = es
		for _, e := range es {
			cp := &core.Topics[e.TopicID].Parts[e.Part]
			cp.Refs = append(cp.Refs, sequencer.PartRef{End: e.End, SID: sid})
		}
	}
	for _, ct := range core.Topics {
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
		if core.Refs[sid] == nil {
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
	st.nextSID = next
	st.open = map[uint64]*txn{}
	core.Load = st.load
	if b.Empty() {
		return nil
	}
	return b.Commit(pebble.Sync)
}

// Stats is the staging state.
type Stats struct {
	Open       int   // transactions with staged data, not committed or discarded
	Referenced int   // committed staging IDs whose data partitions reference
	Keys       int   // staged keys stored
	Bytes      int64 // their value bytes
}

// Stats reports the staging state (for tests and monitoring): it reads
// every staged key; referenced counts the core's references.
func (st *Stagings) Stats(referenced func() int) (Stats, error) {
	var out Stats
	st.use.RLock()
	defer st.use.RUnlock()
	if err := st.host.Err(); err != nil {
		return out, err
	}
	st.mu.Lock()
	out.Open = len(st.open)
	st.mu.Unlock()
	out.Referenced = referenced()
	it, err := st.db.NewIter(&pebble.IterOptions{LowerBound: []byte(keys.PrefixStaged), UpperBound: []byte("t0")})
	if err != nil {
		return out, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		out.Keys++
		out.Bytes += int64(len(it.Value()))
	}
	return out, it.Error()
}
