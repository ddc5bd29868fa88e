package sequencer

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"topicgate/topicstore"
	"topicgate/topicstore/decide"
	"topicgate/topicstore/pebblestore/internal/keys"
)

// Staged batches in the deterministic core. A staged batch (StagedChunk)
// joins a partition by reference: the core assigns it the next Count
// offsets and emits a reference record at its base offset. The
// partitions a staging ID's data is referenced from are tracked in
// State.Refs (persisted as r/<sid> records in the same batch) and in
// each Partition's Refs, so that retention and DROP TOPIC know when a
// staging ID's data is no longer referenced and can be deleted.

// Staged is a validated StagedChunk for the core.
type Staged struct {
	SID, Seq       uint64
	Partition      int32 // explicit, or < 0
	ProducerID     string
	Count          int
	Bytes          int64
	CRC            uint32
	SeqMin, SeqMax int64
	SeqOK          bool
}

// RefEntry: staging ID's data is referenced from partition Part of topic
// TopicID by batches ending at or below End.
type RefEntry struct {
	TopicID uint64
	Part    int32
	End     int64
}

// PartRef is the partition-side view of a RefEntry.
type PartRef struct {
	End int64
	SID uint64
}

// refAdd is a reference made by the current group.
type refAdd struct {
	sid uint64
	key PartKey
	end int64
}

// LiveProducer returns id's dedup state, or nil if unknown or expired.
func (s *State) LiveProducer(t *Topic, id string, now time.Time) *ProducerState {
	ps := t.Producers[id]
	if ps != nil && decide.Expired(ps.LastWrite, now, s.ExpiryOf(t)) {
		return nil // binding and dedup state expired
	}
	return ps
}

// newProducer binds a new producer to part.
func (s *State) newProducer(t *Topic, id string, part int32) *ProducerState {
	ps := &ProducerState{Producer: decide.Producer{Part: part, Fresh: true}}
	if t.Producers == nil {
		t.Producers = map[string]*ProducerState{}
	}
	t.Producers[id] = ps
	return ps
}

// loadStaged reads and splits a staged batch for the dedup fallback.
func (s *State) loadStaged(c *Staged) ([]Msg, error) {
	if s.Load == nil {
		return nil, fmt.Errorf("%w: no staged data loader", topicstore.ErrCorrupt)
	}
	v, err := s.Load(c.SID, c.Seq)
	if err != nil {
		return nil, err
	}
	if topicstore.Checksum(v) != c.CRC {
		return nil, fmt.Errorf("%w: staged batch %d/%d: checksum mismatch", topicstore.ErrCorrupt, c.SID, c.Seq)
	}
	msgs := make([]Msg, 0, c.Count)
	for len(v) > 0 {
		entry, rest, err := topicstore.NextEntry(v)
		if err != nil {
			return nil, err
		}
		v = rest
		m := Msg{Partition: c.Partition, ProducerID: c.ProducerID}
		if m.HasSeqNo, m.SeqNo, m.Tail, err = topicstore.SplitEntry(entry); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// addRefs records the group's new references and appends the r/ records
// of the staging IDs they touched.
func (s *State) addRefs(sets []KV, refs []refAdd) []KV {
	if len(refs) == 0 {
		return sets
	}
	if s.Refs == nil {
		s.Refs = map[uint64][]RefEntry{}
	}
	var sids []uint64
	for _, ra := range refs {
		entries := s.Refs[ra.sid]
		i := slices.IndexFunc(entries, func(e RefEntry) bool { return e.TopicID == ra.key.Topic && e.Part == ra.key.Part })
		if i < 0 {
			entries = append(entries, RefEntry{ra.key.Topic, ra.key.Part, ra.end})
		} else {
			entries[i].End = max(entries[i].End, ra.end)
		}
		s.Refs[ra.sid] = entries
		if !slices.Contains(sids, ra.sid) {
			sids = append(sids, ra.sid)
		}
		cp := &s.Topics[ra.key.Topic].Parts[ra.key.Part]
		if n := len(cp.Refs); n > 0 && cp.Refs[n-1].SID == ra.sid {
			cp.Refs[n-1].End = max(cp.Refs[n-1].End, ra.end)
		} else {
			cp.Refs = append(cp.Refs, PartRef{End: ra.end, SID: ra.sid})
		}
	}
	for _, sid := range sids {
		sets = append(sets, KV{keys.Refs(sid), encodeRefs(s.Refs[sid])})
	}
	return sets
}

// ReleaseRefs drops the references of partition part of topic ct whose
// data ends at or below upTo (retention cut it, or the topic is dropped).
// It returns what to write: r/ records to set, and the r/ records and
// staged ranges of staging IDs no longer referenced to delete.
func (s *State) ReleaseRefs(ct *Topic, part int32, upTo int64) (sets []KV, gone []uint64) {
	cp := &ct.Parts[part]
	n := 0
	for n < len(cp.Refs) && cp.Refs[n].End <= upTo {
		sid := cp.Refs[n].SID
		entries := slices.DeleteFunc(s.Refs[sid], func(e RefEntry) bool { return e.TopicID == ct.ID && e.Part == part })
		if len(entries) == 0 {
			delete(s.Refs, sid)
			gone = append(gone, sid)
		} else {
			s.Refs[sid] = entries
			sets = append(sets, KV{keys.Refs(sid), encodeRefs(entries)})
		}
		n++
	}
	if n > 0 {
		cp.Refs = slices.Clone(cp.Refs[n:])
	}
	return sets, gone
}

// r/<sid> record: uvarint n, then n × (uvarint topic ID, uvarint
// partition, uvarint end offset).
func encodeRefs(es []RefEntry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(es)))
	for _, e := range es {
		b = binary.AppendUvarint(b, e.TopicID)
		b = binary.AppendUvarint(b, uint64(e.Part))
		b = binary.AppendUvarint(b, uint64(e.End))
	}
	return b
}

func DecodeRefs(v []byte) ([]RefEntry, error) {
	r := topicstore.ByteReader{B: v}
	n := r.Uvarint()
	if r.Err || n > uint64(len(v)) {
		return nil, fmt.Errorf("%w: refs record", topicstore.ErrCorrupt)
	}
	es := make([]RefEntry, 0, n)
	for range n {
		es = append(es, RefEntry{TopicID: r.Uvarint(), Part: int32(r.Uvarint()), End: int64(r.Uvarint())})
	}
	if r.Err {
		return nil, fmt.Errorf("%w: refs record", topicstore.ErrCorrupt)
	}
	return es, nil
}
