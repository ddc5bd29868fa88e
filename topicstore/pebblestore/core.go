package pebblestore

import (
	"encoding/binary"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
)

// The deterministic core of the committer: given the sequencer state and a
// group of pending requests, it assigns offsets, resolves producer bindings,
// applies seqno dedup and produces the key/values to write and the results.
// It does no I/O, starts no goroutines and reads no clock, so it is unit
// tested directly (core_test.go). The committer goroutine is its only user
// in the store; it mutates the state in place, which is safe because a
// failed Pebble write is fatal for the store.

// producerState is a producer's dedup state and partition binding (Fresh:
// created in this group and no seqno accepted yet) and its last write.
type producerState struct {
	decide.Producer
	LastWrite time.Time
}

// corePartition is a partition's sequencer state.
type corePartition struct {
	Start  int64 // first retained offset (moved by retention)
	End    int64 // next offset to assign
	EndCum int64 // cumulative payload bytes up to End
	// Refs lists the staged data this partition references, by ascending
	// end offset (see core_staged.go).
	Refs []partRef
}

// coreTopic is a topic's sequencer state.
type coreTopic struct {
	ID        uint64
	Parts     []corePartition
	Producers map[string]*producerState
	RR        uint32 // round-robin cursor for new bindings and unbound writes
	// Consumers holds each consumer's committed offset per partition; 0
	// means none stored (reads clamp up to the partition's Start).
	Consumers map[string][]int64
	// Layout is the partitions' place in the key space (topicstore/layout.go);
	// ActiveIDs lists the active ones (nil: all are, as in a flat layout).
	Layout    topicstore.Layout
	ActiveIDs []int32
	// Throttle is set while the topic has a write-speed limit (throttle.go).
	Throttle *topicThrottle
	// Expiry is the topic's producer_inactivity_period (0: the store's).
	Expiry time.Duration
}

// expiry is how long t's producers live without writes.
func (s *coreState) expiry(t *coreTopic) time.Duration {
	if t.Expiry > 0 {
		return t.Expiry
	}
	return s.Expiry
}

// setLayout installs l and the active-partition list it implies.
func (t *coreTopic) setLayout(l topicstore.Layout) {
	t.Layout = l
	t.ActiveIDs = nil
	if l.Active() == len(l.Parts) {
		return
	}
	for i, p := range l.Parts {
		if !p.Inactive {
			t.ActiveIDs = append(t.ActiveIDs, int32(i))
		}
	}
}

// inactive reports whether partition p no longer takes writes.
func (t *coreTopic) inactive(p int32) bool { return decide.Inactive(&t.Layout, p) }

// live returns where a write naming partition p goes (decide.Live).
func (t *coreTopic) live(p int32, key string) int32 { return decide.Live(&t.Layout, p, key) }

// coreState is everything the committer owns.
type coreState struct {
	Topics map[uint64]*coreTopic
	Expiry time.Duration // producer binding expiry
	// Refs: per committed staging ID, the partitions still referencing
	// its staged data (mirrors the r/ records).
	Refs map[uint64][]refEntry
	// Load reads a staged batch's payload (the dedup fallback copies it).
	Load func(sid, seq uint64) ([]byte, error)
	// thr tallies the current request's bytes to throttled partitions.
	thr throttleTally
}

// pendingMsg is a validated, encoded message waiting for the committer.
type pendingMsg struct {
	Partition  int32 // < 0: chosen by the store
	ProducerID string
	Group      string // message_group_id: the key of a message without producer
	SeqNo      int64
	HasSeqNo   bool
	Tail       []byte // appendTail output
}

// pendingWrite is one TopicWrite, validated against topic TopicID.
type pendingWrite struct {
	TopicID uint64
	Msgs    []pendingMsg
	Staged  []pendingStaged // applied before Msgs
}

// kv is one Pebble write of a group.
type kv struct{ Key, Value []byte }

// published is a partition's new end, to make visible after the sync.
type published struct {
	TopicID   uint64
	Partition int32
	End       int64
	EndCum    int64
	WrittenAt time.Time
}

// reqOutcome is one request's result.
type reqOutcome struct {
	Result topicstore.CommitResult
	Err    error
}

// groupOutput is what apply returns for a group.
type groupOutput struct {
	Sets     []kv
	Outcomes []reqOutcome // one per request, in order
	Publish  []published
	Messages int      // messages appended
	Dels     [][]byte // keys to delete (staged batches copied by the dedup fallback)
	Err      error    // fatal: a staged batch could not be read
}

// batchTargetBytes splits what a group appends to one partition into
// batches of about this size, so that reading at an offset inside a batch
// (SeekLT clones the value; earlier messages are skipped) stays cheap.
const batchTargetBytes = 32 << 10

type partKey struct {
	topic uint64
	part  int32
}

type partBuf struct {
	key   partKey
	base  int64
	count int
	buf   []byte         // header space + payload
	ref   *pendingStaged // set: a reference record to this staged batch
}

// coreReq is one commit request: its writes and position updates.
type coreReq struct {
	Writes    []pendingWrite
	Positions []pendingPos
}

// apply processes reqs in order at time now. A request whose checks fail
// (topic or partition gone, position conflict or out of range) changes
// nothing and writes nothing.
func (s *coreState) apply(reqs []coreReq, now time.Time) groupOutput {
	out := groupOutput{Outcomes: make([]reqOutcome, len(reqs))}
	bufs := map[partKey]*partBuf{}
	var order []*partBuf
	type prodKey struct {
		topic uint64
		id    string
	}
	touched := map[prodKey]*producerState{}
	var prodOrder []prodKey
	touch := func(t *coreTopic, id string, ps *producerState) {
		pk := prodKey{t.ID, id}
		if touched[pk] != ps {
			if touched[pk] == nil {
				prodOrder = append(prodOrder, pk)
			}
			touched[pk] = ps
		}
	}
	var refs []refAdd
	sticky := map[uint64]int32{} // topic -> partition of its unbound messages in this group
	// The previous message's producer (runs of one producer are common).
	var (
		lastT  *coreTopic
		lastID string
		lastPS *producerState
	)

	// Size new batch buffers for the whole group (bounded by the batch
	// target) so appends rarely grow them.
	groupBytes := 0
	for _, r := range reqs {
		for _, w := range r.Writes {
			for _, m := range w.Msgs {
				groupBytes += len(m.Tail) + 16
			}
		}
	}
	add := func(t *coreTopic, part int32, hasSeq bool, seq int64, tail []byte) {
		k := partKey{t.ID, part}
		b := bufs[k]
		if b == nil || len(b.buf)-topicstore.BatchHeaderLen >= batchTargetBytes {
			size := max(len(tail)+16, min(groupBytes, batchTargetBytes+len(tail)+16))
			b = &partBuf{key: k, base: t.Parts[part].End, buf: make([]byte, topicstore.BatchHeaderLen, topicstore.BatchHeaderLen+size)}
			bufs[k] = b
			order = append(order, b)
		}
		b.buf = topicstore.AppendMessage(b.buf, hasSeq, seq, tail)
		b.count++
		if t.Throttle != nil {
			s.thr.note(t.Throttle, part, len(tail))
		}
		t.Parts[part].End++
	}
	nextRR := func(t *coreTopic) int32 {
		var p int32
		if t.ActiveIDs != nil {
			p = t.ActiveIDs[t.RR%uint32(len(t.ActiveIDs))]
		} else {
			p = int32(t.RR % uint32(len(t.Parts)))
		}
		t.RR++
		return p
	}
	// bind chooses a new producer's partition (decide.Bind).
	bind := func(t *coreTopic, id string, explicit int32) int32 {
		return decide.Bind(&t.Layout, id, explicit, func() int32 { return nextRR(t) })
	}
	// ref places a staged batch at the partition's end by reference; the
	// partition's open batch is closed so later messages follow it.
	ref := func(t *coreTopic, part int32, c *pendingStaged) {
		k := partKey{t.ID, part}
		delete(bufs, k)
		order = append(order, &partBuf{key: k, base: t.Parts[part].End, count: c.Count, ref: c})
		t.Parts[part].End += int64(c.Count)
		refs = append(refs, refAdd{c.SID, k, t.Parts[part].End})
		if t.Throttle != nil {
			s.thr.note(t.Throttle, part, int(c.Bytes))
		}
	}
	// admit appends one write's messages: dedup, then partition choice.
	admit := func(t *coreTopic, msgs []pendingMsg, r *topicstore.WriteResult, unbound *int32) {
		for _, m := range msgs {
			if m.ProducerID == "" {
				part, ok := decide.Route(&t.Layout, m.Partition, m.Group)
				if !ok {
					if *unbound < 0 {
						*unbound = nextRR(t)
					}
					part = *unbound
				}
				add(t, part, m.HasSeqNo, m.SeqNo, m.Tail)
				r.Written++
				continue
			}
			if t == lastT && m.ProducerID == lastID && !t.inactive(lastPS.Part) {
				// Same producer as the previous message: skip the lookups.
				seq, ok := lastPS.Admit(m.HasSeqNo, m.SeqNo)
				if !ok {
					r.Duplicates++
					continue
				}
				add(t, lastPS.Part, true, seq, m.Tail)
				r.Written++
				continue
			}
			ps := s.liveProducer(t, m.ProducerID, now)
			if ps == nil {
				ps = s.newProducer(t, m.ProducerID, bind(t, m.ProducerID, m.Partition))
			} else if t.inactive(ps.Part) {
				// Its partition split: the producer follows its key into
				// the child (or the partition it names), keeping its
				// seqnos, since dedup is per topic.
				ps.Part = bind(t, m.ProducerID, m.Partition)
			}
			seq, ok := ps.Admit(m.HasSeqNo, m.SeqNo)
			if !ok {
				r.Duplicates++
				continue
			}
			ps.LastWrite = now
			add(t, ps.Part, true, seq, m.Tail) // an explicit partition is the binding (check)
			r.Written++
			touch(t, m.ProducerID, ps)
			lastT, lastID, lastPS = t, m.ProducerID, ps
		}
	}

	for i, r := range reqs {
		writes := r.Writes
		if err := s.check(writes, now); err != nil {
			out.Outcomes[i].Err = err
			continue
		}
		// Positions are checked against the state before this request's
		// own writes, and applied before them (they never count them).
		if err := s.checkPositions(r.Positions); err != nil {
			out.Outcomes[i].Err = err
			continue
		}
		out.Sets = s.applyPositions(out.Sets, r.Positions)
		res := make([]topicstore.WriteResult, len(writes))
		for j, w := range writes {
			t := s.Topics[w.TopicID]
			// unbound is the partition of the messages that have no
			// producer and name none: one per topic per group, the next
			// round-robin one, as on the cluster (Kafka's sticky
			// partitioner), so concurrent single-row INSERTs committed
			// together append one batch.
			unbound, ok := sticky[w.TopicID]
			if !ok {
				unbound = -1
			}
			for k := range w.Staged {
				c := &w.Staged[k]
				if c.ProducerID == "" {
					part := c.Partition
					if part >= 0 {
						part = t.live(part, "")
					} else {
						if unbound < 0 {
							unbound = nextRR(t)
						}
						part = unbound
					}
					ref(t, part, c)
					res[j].Written += c.Count
					continue
				}
				lastT = nil // the producer cache may go stale below
				ps := s.liveProducer(t, c.ProducerID, now)
				fresh := ps == nil
				if fresh {
					ps = &producerState{Producer: decide.Producer{Fresh: true}}
				}
				if ps.AdmitChunk(c.SeqOK, c.SeqMin, c.SeqMax) == decide.ChunkNew {
					if fresh {
						ps = s.newProducer(t, c.ProducerID, bind(t, c.ProducerID, c.Partition))
						ps.Fresh, ps.MaxSeqNo = false, c.SeqMax
					} else if t.inactive(ps.Part) {
						ps.Part = bind(t, c.ProducerID, c.Partition)
					}
					ps.LastWrite = now
					ref(t, ps.Part, c)
					res[j].Written += c.Count
					touch(t, c.ProducerID, ps)
					continue
				}
				// Rare: duplicates (or seqnos the summary cannot decide):
				// copy the batch message by message, with dedup.
				msgs, err := s.loadStaged(c)
				if err != nil {
					out.Err = err
					return out
				}
				admit(t, msgs, &res[j], &unbound)
				out.Dels = append(out.Dels, stagedKey(c.SID, c.Seq))
			}
			admit(t, w.Msgs, &res[j], &unbound)
			if unbound >= 0 {
				sticky[w.TopicID] = unbound
			}
		}
		out.Outcomes[i].Result = topicstore.CommitResult{Writes: res, Throttle: s.thr.settle(now)}
	}

	wa := now.UnixMicro()
	for _, b := range order {
		p := &s.Topics[b.key.topic].Parts[b.key.part]
		if c := b.ref; c != nil {
			out.Sets = append(out.Sets, kv{batchKey(b.key.topic, b.key.part, b.base), topicstore.PutRefRecord(topicstore.BatchHeader{
				Base: b.base, Count: c.Count, WrittenAt: wa, CumBefore: p.EndCum, CRC: c.CRC,
				Bytes: c.Bytes, SID: c.SID, Seq: c.Seq})})
			p.EndCum += c.Bytes
			out.Publish = append(out.Publish, published{b.key.topic, b.key.part, b.base + int64(b.count), p.EndCum, now})
			out.Messages += b.count
			continue
		}
		payload := b.buf[topicstore.BatchHeaderLen:]
		topicstore.PutBatchHeader(b.buf, topicstore.BatchHeader{
			Base: b.base, Count: b.count, WrittenAt: wa, CumBefore: p.EndCum,
			CRC: topicstore.Checksum(payload),
		})
		p.EndCum += int64(len(payload))
		out.Sets = append(out.Sets, kv{batchKey(b.key.topic, b.key.part, b.base), b.buf})
		out.Publish = append(out.Publish, published{b.key.topic, b.key.part, b.base + int64(b.count), p.EndCum, now})
		out.Messages += b.count
	}
	for _, pk := range prodOrder {
		out.Sets = append(out.Sets, kv{producerKey(pk.topic, pk.id), encodeProducer(touched[pk])})
	}
	out.Sets = s.addRefs(out.Sets, refs)
	return out
}

// check rejects a request whose topics were dropped (or partitions do not
// exist) since the caller validated it; nothing of it is applied.
func (s *coreState) check(writes []pendingWrite, now time.Time) error {
	for _, w := range writes {
		t := s.Topics[w.TopicID]
		if t == nil || len(t.Parts) == 0 {
			return topicstore.ErrTopicNotFound
		}
		// A producer stays in its partition: an explicit partition must
		// be the one the producer is bound to, or, for a producer this
		// write binds, the one its first explicit message named.
		var b decide.Bindings
		binding := func(id string, part int32) error {
			return b.Check(id, part, func() (int32, bool) {
				if ps := s.liveProducer(t, id, now); ps != nil && !ps.Fresh && !t.inactive(ps.Part) {
					return ps.Part, true // a split partition's binding is void
				}
				return 0, false
			})
		}
		for _, m := range w.Msgs {
			if int(m.Partition) >= len(t.Parts) {
				return topicstore.ErrPartitionNotFound
			}
			if err := binding(m.ProducerID, m.Partition); err != nil {
				return err
			}
		}
		for _, c := range w.Staged {
			if int(c.Partition) >= len(t.Parts) {
				return topicstore.ErrPartitionNotFound
			}
			if err := binding(c.ProducerID, c.Partition); err != nil {
				return err
			}
		}
	}
	return nil
}

// Producer record: uvarint partition | varint max seqno | varint last write
// (unix micros).
func encodeProducer(ps *producerState) []byte {
	b := make([]byte, 0, 24)
	b = binary.AppendUvarint(b, uint64(ps.Part))
	b = binary.AppendVarint(b, ps.MaxSeqNo)
	return binary.AppendVarint(b, ps.LastWrite.UnixMicro())
}

func decodeProducer(v []byte) (*producerState, error) {
	r := topicstore.ByteReader{B: v}
	ps := &producerState{Producer: decide.Producer{Part: int32(r.Uvarint()), MaxSeqNo: r.Varint()}}
	ps.LastWrite = time.UnixMicro(r.Varint()).UTC()
	if r.Err {
		return nil, topicstore.ErrCorrupt
	}
	return ps, nil
}
