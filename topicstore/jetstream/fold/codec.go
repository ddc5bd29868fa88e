package fold

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// SharedState is one (topic, shared consumer, partition)'s durable state:
// what the last message of its state subject says (Tg-Shared header).
// Entries are the window's messages that differ from a fresh one
// (delivered, locked, expired or finished), ascending by offset, all at or
// above start; a message without an entry is available, never delivered.
type SharedState struct {
	Start int64
	Ents  []SharedEntry
	Cnt   SharedCounts
}

// SharedEntry is one message's durable state.
type SharedEntry struct {
	Off       int64
	State     sharedcore.State
	Expired   bool
	Deliv     int32
	Holder    sharedcore.Holder
	ExpHolder sharedcore.Holder
	Deadline  int64 // unix ns, with holder
}

// SharedCounts are a partition's counters of messages that did not end in an
// ack (SharedPartitionStats): they live in the state, so every gateway
// shows the cluster's.
type SharedCounts struct {
	Archived, Moved, Failures int64
	LastErr                   string
}

// Trivial reports whether e is a fresh message's state (no entry needed).
func Trivial(e *sharedcore.Entry) bool {
	return e.State == sharedcore.Avail && e.Deliveries == 0 && !e.Expired && e.Holder == (sharedcore.Holder{})
}

const (
	shCodecVersion = 1
	flagExpired    = 1 << 3
	flagHolder     = 1 << 4
	flagExpHolder  = 1 << 5
	stateMask      = 7
)

// encode renders st canonically (equal states give equal strings, so a
// step that changed nothing publishes nothing), as a header value:
//
//	version, uvarint start, uvarint archived, moved, failures, string lastErr,
//	uvarint holders, each uvarint gateway + uvarint session,
//	varint deadline base, uvarint entries, each:
//	  uvarint offset delta (from the previous entry's offset + 1, first from start),
//	  flags (state | expired | holder | expHolder), uvarint deliveries,
//	  [uvarint holder index, varint deadline - base], [uvarint expHolder index]
//
// in unpadded base64. A window of 1000 locked messages takes ~20 KB.
func (st *SharedState) Encode() string {
	var holders []sharedcore.Holder
	index := map[sharedcore.Holder]uint64{}
	idx := func(h sharedcore.Holder) uint64 {
		i, ok := index[h]
		if !ok {
			i = uint64(len(holders))
			index[h] = i
			holders = append(holders, h)
		}
		return i
	}
	var base int64
	for i := range st.Ents {
		e := &st.Ents[i]
		if e.Holder != (sharedcore.Holder{}) && (base == 0 || e.Deadline < base) {
			base = e.Deadline
		}
	}
	body := make([]byte, 0, 8+len(st.Ents)*8)
	next := st.Start
	for i := range st.Ents {
		e := &st.Ents[i]
		body = binary.AppendUvarint(body, uint64(e.Off-next))
		next = e.Off + 1
		flags := byte(e.State) & stateMask
		if e.Expired {
			flags |= flagExpired
		}
		if e.Holder != (sharedcore.Holder{}) {
			flags |= flagHolder
		}
		if e.ExpHolder != (sharedcore.Holder{}) {
			flags |= flagExpHolder
		}
		body = append(body, flags)
		body = binary.AppendUvarint(body, uint64(e.Deliv))
		if flags&flagHolder != 0 {
			body = binary.AppendUvarint(body, idx(e.Holder))
			body = binary.AppendVarint(body, e.Deadline-base)
		}
		if flags&flagExpHolder != 0 {
			body = binary.AppendUvarint(body, idx(e.ExpHolder))
		}
	}
	b := []byte{shCodecVersion}
	b = binary.AppendUvarint(b, uint64(st.Start))
	b = binary.AppendUvarint(b, uint64(st.Cnt.Archived))
	b = binary.AppendUvarint(b, uint64(st.Cnt.Moved))
	b = binary.AppendUvarint(b, uint64(st.Cnt.Failures))
	b = binary.AppendUvarint(b, uint64(len(st.Cnt.LastErr)))
	b = append(b, st.Cnt.LastErr...)
	b = binary.AppendUvarint(b, uint64(len(holders)))
	for _, h := range holders {
		b = binary.AppendUvarint(b, h.Gateway)
		b = binary.AppendUvarint(b, uint64(h.Session))
	}
	b = binary.AppendVarint(b, base)
	b = binary.AppendUvarint(b, uint64(len(st.Ents)))
	b = append(b, body...)
	return base64.RawStdEncoding.EncodeToString(b)
}

var errBadState = errors.New("bad shared-consumer state")

// DecodeSharedState parses an encode result.
func DecodeSharedState(s string) (SharedState, error) {
	var st SharedState
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || b[0] != shCodecVersion {
		return st, errBadState
	}
	r := &topicstore.ByteReader{B: b[1:]}
	// count reads a length that cannot exceed what is left of the input.
	count := func() int {
		n := r.Uvarint()
		if n > uint64(len(r.B)) {
			r.Err, r.B = true, nil
			return 0
		}
		return int(n)
	}
	st.Start = int64(r.Uvarint())
	st.Cnt.Archived, st.Cnt.Moved, st.Cnt.Failures = int64(r.Uvarint()), int64(r.Uvarint()), int64(r.Uvarint())
	st.Cnt.LastErr = string(r.Bytes())
	holders := make([]sharedcore.Holder, count())
	for i := range holders {
		holders[i] = sharedcore.Holder{Gateway: r.Uvarint(), Session: uint32(r.Uvarint())}
	}
	holder := func() sharedcore.Holder {
		i := r.Uvarint()
		if i >= uint64(len(holders)) {
			r.Err = true
			return sharedcore.Holder{}
		}
		return holders[i]
	}
	base := r.Varint()
	st.Ents = make([]SharedEntry, count())
	next := st.Start
	for i := range st.Ents {
		e := &st.Ents[i]
		e.Off = next + int64(r.Uvarint())
		next = e.Off + 1
		flags := r.Byte()
		e.State, e.Expired = sharedcore.State(flags&stateMask), flags&flagExpired != 0
		e.Deliv = int32(min(r.Uvarint(), math.MaxInt32))
		if flags&flagHolder != 0 {
			e.Holder = holder()
			e.Deadline = base + r.Varint()
		}
		if flags&flagExpHolder != 0 {
			e.ExpHolder = holder()
		}
	}
	if r.Err || len(r.B) != 0 {
		return SharedState{}, errBadState
	}
	return st, nil
}
