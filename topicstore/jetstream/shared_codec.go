package jetstream

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// shPartState is one (topic, shared consumer, partition)'s durable state:
// what the last message of its state subject says (Tg-Shared header).
// Entries are the window's messages that differ from a fresh one
// (delivered, locked, expired or finished), ascending by offset, all at or
// above start; a message without an entry is available, never delivered.
type shPartState struct {
	start int64
	ents  []shDurable
	cnt   shCounts
}

// shDurable is one message's durable state.
type shDurable struct {
	off       int64
	state     sharedcore.State
	expired   bool
	deliv     int32
	holder    sharedcore.Holder
	expHolder sharedcore.Holder
	deadline  int64 // unix ns, with holder
}

// shCounts are a partition's counters of messages that did not end in an
// ack (SharedPartitionStats): they live in the state, so every gateway
// shows the cluster's.
type shCounts struct {
	archived, moved, failures int64
	lastErr                   string
}

// trivial reports whether e is a fresh message's state (no entry needed).
func trivial(e *sharedcore.Entry) bool {
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
func (st *shPartState) encode() string {
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
	for i := range st.ents {
		e := &st.ents[i]
		if e.holder != (sharedcore.Holder{}) && (base == 0 || e.deadline < base) {
			base = e.deadline
		}
	}
	body := make([]byte, 0, 8+len(st.ents)*8)
	next := st.start
	for i := range st.ents {
		e := &st.ents[i]
		body = binary.AppendUvarint(body, uint64(e.off-next))
		next = e.off + 1
		flags := byte(e.state) & stateMask
		if e.expired {
			flags |= flagExpired
		}
		if e.holder != (sharedcore.Holder{}) {
			flags |= flagHolder
		}
		if e.expHolder != (sharedcore.Holder{}) {
			flags |= flagExpHolder
		}
		body = append(body, flags)
		body = binary.AppendUvarint(body, uint64(e.deliv))
		if flags&flagHolder != 0 {
			body = binary.AppendUvarint(body, idx(e.holder))
			body = binary.AppendVarint(body, e.deadline-base)
		}
		if flags&flagExpHolder != 0 {
			body = binary.AppendUvarint(body, idx(e.expHolder))
		}
	}
	b := []byte{shCodecVersion}
	b = binary.AppendUvarint(b, uint64(st.start))
	b = binary.AppendUvarint(b, uint64(st.cnt.archived))
	b = binary.AppendUvarint(b, uint64(st.cnt.moved))
	b = binary.AppendUvarint(b, uint64(st.cnt.failures))
	b = binary.AppendUvarint(b, uint64(len(st.cnt.lastErr)))
	b = append(b, st.cnt.lastErr...)
	b = binary.AppendUvarint(b, uint64(len(holders)))
	for _, h := range holders {
		b = binary.AppendUvarint(b, h.Gateway)
		b = binary.AppendUvarint(b, uint64(h.Session))
	}
	b = binary.AppendVarint(b, base)
	b = binary.AppendUvarint(b, uint64(len(st.ents)))
	b = append(b, body...)
	return base64.RawStdEncoding.EncodeToString(b)
}

var errBadState = errors.New("bad shared-consumer state")

// decodeState parses an encode result.
func decodeState(s string) (shPartState, error) {
	var st shPartState
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
	st.start = int64(r.Uvarint())
	st.cnt.archived, st.cnt.moved, st.cnt.failures = int64(r.Uvarint()), int64(r.Uvarint()), int64(r.Uvarint())
	st.cnt.lastErr = string(r.Bytes())
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
	st.ents = make([]shDurable, count())
	next := st.start
	for i := range st.ents {
		e := &st.ents[i]
		e.off = next + int64(r.Uvarint())
		next = e.off + 1
		flags := r.Byte()
		e.state, e.expired = sharedcore.State(flags&stateMask), flags&flagExpired != 0
		e.deliv = int32(min(r.Uvarint(), math.MaxInt32))
		if flags&flagHolder != 0 {
			e.holder = holder()
			e.deadline = base + r.Varint()
		}
		if flags&flagExpHolder != 0 {
			e.expHolder = holder()
		}
	}
	if r.Err || len(r.B) != 0 {
		return shPartState{}, errBadState
	}
	return st, nil
}
