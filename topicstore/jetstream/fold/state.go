package fold

import (
	"fmt"
	"math"
	"time"
	"topicgate/topicstore"
)

// CatalogRec is a topic's catalog record.
type CatalogRec struct {
	Config    topicstore.TopicConfig `json:"config"`
	ID        uint64                 `json:"id"` // 0 in a creation: the record's stream sequence becomes the ID
	CreatedAt int64                  `json:"created_at"`
	Layout    topicstore.Layout      `json:"layout"`
	// Ordinal is the topic's number (TopicInfo.ID), given out with the
	// topic-number subject in the creation's batch (jetstream/catalog); 0 in
	// a record written before: the fold numbers it by counting.
	Ordinal uint64 `json:"ordinal,omitempty"`
}

// Topic is a topic as the fold knows it.
type Topic struct {
	Rec     CatalogRec
	CatSeq  uint64 // stream sequence of the catalog record
	Parts   []*Part
	Prods   map[string]*Producer
	Pos     map[string]map[int32]*Position // consumer -> partition -> position
	Initial map[string]map[int32]int64     // consumer -> initial positions (read_from)
	Changed chan struct{}                  // closed at the next visible change
	Rr      uint32                         // this gateway's round-robin cursor
	// ordinal is the topic's number (TopicInfo.ID; rec.ID, its creation
	// record's sequence, names its subjects): the creation record carries
	// it (CatalogRec.Ordinal), so every gateway numbers the topics alike
	// though dropped topics' records are purged.
	ordinal uint64
	// writers are the gateways that wrote the topic lately, with their
	// last batch's written_at (roundRobin shares the partitions among
	// them; ForgetWriters).
	Writers map[string]time.Time
}

// Rec locates one record batch of a partition: 40 bytes each, for
// every retained batch (a reference record's staged message is in
// Part.Refs, rare).
type Rec struct {
	Seq       uint64
	Base      int64
	WrittenAt int64  // unix micros
	N         uint32 // messages (count)
	Size      uint32 // payload bytes (bytes)
}

// newRecIdx is the index entry of a record batch at stream sequence seq;
// it fails for a batch whose count or bytes do not fit the entry's 32
// bits (a record batch holds at most a message's or a staged chunk's
// worth: megabytes).
func newRecIdx(seq uint64, base, count, writtenAt, bytes int64) (Rec, error) {
	if count < 0 || count > math.MaxUint32 || bytes < 0 || bytes > math.MaxUint32 {
		return Rec{}, fmt.Errorf("record batch of %d messages, %d bytes: out of the index's range", count, bytes)
	}
	return Rec{Seq: seq, Base: base, WrittenAt: writtenAt, N: uint32(count), Size: uint32(bytes)}, nil
}

// count is the batch's message count.
func (r Rec) Count() int64 { return int64(r.N) }

// bytes is the batch's payload bytes.
func (r Rec) Bytes() int64 { return int64(r.Size) }

// Part is a partition's index: its record batches in offset order.
type Part struct {
	Recs     []Rec
	Start    int64  // first retained offset
	End      int64  // next offset
	Bytes    int64  // stored payload bytes ever written
	LastSeq  uint64 // stream sequence of the partition subject's last message (0: none)
	StartSeq uint64 // the last sequence of its retention start subject (0: none)
	// cutSeq is where retention's last cut purged the subject below (the
	// first batch it kept, or the last batch, which stays): every message
	// of the subject before it is gone or going (jetstream/wide).
	CutSeq   uint64
	retained int64 // payload bytes of recs (a running total: Topic reads it on every statement's plan)
	// refs are the staged messages reference records of recs point at,
	// by the record's sequence (absent: an inline record).
	Refs      map[uint64]uint64
	sum       uint64 // the sum of recs' recHash (a running total: Digest reads it)
	lastWrite time.Time
	// bucket is the write-speed token bucket, charged by the fold with
	// every batch at its written_at: every gateway sees the same debt.
	Bucket topicstore.WriteBucket
	// meter is the write meter auto-partitioning decides by, fed the same
	// way (nil until the partition's first batch, which it does not count).
	Meter *topicstore.WriteMeter
}

// Producer is a producer's dedup state and binding.
type Producer struct {
	Seq   uint64 // stream sequence of its last record
	Part  int32
	MaxNo int64
	At    time.Time
	// pending counts the messages its subject holds before the last: the
	// ones written since its last rollup (jetstream/producers.go).
	Pending int32
	// void: the last message is an intent an abort voided; the state is
	// in one before it, which compaction must keep.
	Void bool
}

// NoOffset is a position message's offset (Tg-Off) that forgets the
// position (PositionUpdate.Forget): the partition reads from its start,
// read_from or not, until the next commit.
const NoOffset int64 = -1

// Position is a committed position.
type Position struct {
	Seq uint64
	Off int64 // NoOffset: forgotten
	// reset: the consumer was dropped and added again since; off is not
	// its position (seq still is the subject's last sequence).
	Reset bool
	// void: the subject's last message is an intent an abort voided; the
	// position is in the message before it.
	void bool
}

func newTopicState(rec CatalogRec, seq uint64) *Topic {
	t := &Topic{Rec: rec, CatSeq: seq, Prods: map[string]*Producer{}, Pos: map[string]map[int32]*Position{},
		Initial: map[string]map[int32]int64{}, Changed: make(chan struct{}), Writers: map[string]time.Time{}}
	t.resize()
	return t
}

// resize gives the topic one Part per partition of its layout.
func (t *Topic) resize() {
	for len(t.Parts) < len(t.Rec.Layout.Parts) {
		t.Parts = append(t.Parts, &Part{})
	}
}

// ForgetWriters drops the writers whose last batch is older than
// WriterMemory before at (a batch's written_at): every gateway forgets
// alike, and writers holds the gateways writing now, not every one that
// ever wrote (each restart is a new gateway).
func (t *Topic) ForgetWriters(at time.Time) {
	for gw, last := range t.Writers {
		if at.Sub(last) > WriterMemory {
			delete(t.Writers, gw)
		}
	}
}

// WriterMemory is how long the fold remembers a topic's writer after its
// last batch: far longer than share counts it as writing (ContendedFor),
// so that clocks apart by less than that do not change a share.
const WriterMemory = 12 * ContendedFor

// notify wakes the topic's waiters.
func (t *Topic) notify() {
	close(t.Changed)
	t.Changed = make(chan struct{})
}

// Lease is the maintenance lease as the fold saw it last.
type Lease struct {
	Seq    uint64
	Holder string
	Until  time.Time
}

// leftover is a dropped topic as the fold knows it until its messages and
// its tombstone are purged.
type Leftover struct {
	Name   string
	Seq    uint64    // the tombstone's sequence
	At     time.Time // when it was dropped
	Purged bool      // the topic's messages are (this gateway purged them)
}

// info describes t.
func (t *Topic) Info() topicstore.TopicInfo {
	ti := topicstore.TopicInfo{Config: topicstore.CloneConfig(t.Rec.Config), ID: t.ordinal, CreatedAt: TimeMicros(t.Rec.CreatedAt)}
	for i, ps := range t.Parts {
		pi := topicstore.PartitionInfo{ID: int32(i), Active: true, Parent: -1, StartOffset: ps.Start, EndOffset: ps.End,
			Messages: ps.End - ps.Start, LastWrite: ps.lastWrite, WrittenBytes: ps.Bytes, Bytes: ps.retainedBytes(),
			Throttled: ps.Bucket.Throttled}
		ti.Throttled += ps.Bucket.Throttled
		if i < len(t.Rec.Layout.Parts) {
			pl := &t.Rec.Layout.Parts[i]
			pi.Active, pi.Deleted, pi.Parent = !pl.Inactive, pl.Deleted, pl.Parent
			pi.Children = append([]int32(nil), pl.Children...)
			pi.Keyed, pi.KeyLo, pi.KeyHi = t.Rec.Layout.Keyed, pl.KeyLo, pl.KeyHi
		}
		ti.Partitions = append(ti.Partitions, pi)
	}
	return ti
}

// retainedBytes is the payload of the batches still retained.
func (ps *Part) retainedBytes() int64 { return ps.retained }

func TimeMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// ContendedFor is how long a gateway counts as writing a topic after its
// last batch there.
const ContendedFor = 5 * time.Second

// State is the state the stream's messages fold into: Apply changes it,
// one message at a time in stream order, and nothing else but the
// gateway's own repairs (see doc.go). It is not safe for concurrent use:
// its owner holds one lock over every call and every read of its fields.
type State struct {
	subj    Subjects         // the stream's subjects
	clock   func() time.Time // the time a message without one is folded at (Options.Clock)
	hooks   Hooks            // what the owner does besides
	ByName  map[string]*Topic
	ByID    map[uint64]*Topic
	CatSeqs map[string]uint64 // each catalog subject's last sequence, drops included
	// Leftovers are dropped topics whose messages or tombstone may not
	// all be purged yet (jetstream/catalog: PurgeLeftovers), by topic ID.
	Leftovers map[uint64]*Leftover
	Created   uint64 // the highest topic number given out (TopicInfo.ID)
	CnSeq     uint64 // the topic-number subject's last sequence (jetstream/catalog)
	Lease     Lease  // the maintenance lease, as folded
	Swept     Swept  // staged chunks and fences, as folded (sweep.go)
	Wide      Wide   // wide transactions, as folded (wide.go)
	sh        Shared // shared consumers: their part of the fold (shared.go)
	Snap      Snap   // snapshots, as folded (snapshot.go)
	Groups    Groups // read-session groups, as folded (groups.go)
	Roles     Roles  // the role catalog, as folded (roles.go)
}

// New returns an empty state for the stream whose subjects subj
// spells; clock stands for the time of a message that has none (a
// gateway's Options.Clock); hooks may be nil.
func New(subj Subjects, clock func() time.Time, hooks Hooks) *State {
	if hooks == nil {
		hooks = noHooks{}
	}
	return &State{subj: subj, clock: clock, hooks: hooks, ByName: map[string]*Topic{}, ByID: map[uint64]*Topic{},
		CatSeqs: map[string]uint64{}, Leftovers: map[uint64]*Leftover{}}
}

// HasConsumer reports whether t has a consumer of that name.
func (t *Topic) HasConsumer(name string) bool {
	for _, c := range t.Rec.Config.Consumers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Position is a consumer's committed offset in partition p: the stored
// one, else its initial one (read_from), clamped up to the partition's
// start.
func (t *Topic) Position(consumer string, p int32) int64 {
	if off, ok := t.StoredPosition(consumer, p); ok {
		return off
	}
	return t.Parts[p].Start
}

// StoredPosition is the consumer's position of its own in partition p,
// clamped up to the partition's start: the committed one, else its
// initial one (read_from); ok is false when it has neither (it reads
// from the start), or a forget (Off NoOffset) hides them.
func (t *Topic) StoredPosition(consumer string, p int32) (off int64, ok bool) {
	if st := t.Pos[consumer][p]; st != nil && !st.Reset {
		off, ok = st.Off, st.Off != NoOffset
	} else {
		off, ok = t.Initial[consumer][p]
	}
	return max(off, t.Parts[p].Start), ok
}
