package fold

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"topicgate/topicstore"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// How each message folds into the state: apply routes a message by its
// subject's kind to the function that folds it; catalog records (creation,
// alteration, drop) fold here too.

// apply folds one message.
func (f *State) Apply(subject string, h nats.Header, seq uint64, ts time.Time) error {
	tok := f.subj.Tokens(subject)
	if len(tok) == 1 && tok[0] == KindLease {
		f.Lease = Lease{Seq: seq, Holder: h.Get(HHolder), Until: TimeMicros(HeaderInt(h, HUntil))}
		return nil
	}
	if len(tok) == 1 && tok[0] == KindNumbers {
		f.CnSeq, f.Created = seq, max(f.Created, uint64(HeaderInt(h, HCreated))) // topic numbers (jetstream/catalog)
		return nil
	}
	if len(tok) == 1 && tok[0] == KindRoles {
		return f.applyRoles(h, seq) // the role catalog (roles.go)
	}
	if len(tok) == 1 && tok[0] == KindSnap {
		f.applySnap(h, seq, ts) // snapshots' points and notices (snapshot.go)
		return nil
	}
	if len(tok) < 2 {
		return nil
	}
	switch tok[0] {
	case KindCatalog:
		return f.applyCatalog(tok[1], h, seq)
	case KindStaged:
		f.Swept.chunk(tok, h, seq, ts) // staged data, read by reference (sweep.go)
		return nil
	case KindChain:
		return f.applyChain(tok, h, seq) // gateways' chains and sweep fences (sweep.go)
	case KindDecision:
		return f.applyDecision(tok, h, seq, ts) // wide transactions' decisions (wide.go)
	case KindGuard, KindProbe, KindDocument:
		return nil // commit guards, readiness probes, documents (read from the stream, not folded)
	case KindMember, KindBeat:
		return f.applyGroup(tok, h, seq) // read-session groups (groups.go)
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return err
	}
	if tok[0] == KindData || tok[0] == KindShared {
		f.hooks.Witnessed(subject, h, seq) // batches of this gateway in doubt (jetstream/chain)
	}
	if v := h.Get(HTxn); v != "" {
		return f.applyIntent(v, tok, subject, h, seq) // a wide transaction's (wide.go)
	}
	t := f.ByID[id]
	if t == nil {
		return nil // a dropped topic's leftovers
	}
	switch {
	case tok[0] == KindData && len(tok) == 3:
		return f.applyRecord(t, tok[2], h, seq)
	case tok[0] == KindProducer && len(tok) == 3:
		return applyProducer(t, tok[2], h, seq)
	case tok[0] == KindExpiry && len(tok) == 2:
		applyExpiry(t, h) // producers that expired (jetstream/producers.go)
	case tok[0] == KindPosition && len(tok) == 4:
		return applyPosition(t, tok[2], tok[3], h, seq)
	case tok[0] == KindShared && len(tok) == 4:
		return f.applyShared(t, tok, h, seq) // shared-consumer states (shared.go)
	case tok[0] == KindStart && len(tok) == 3:
		applyStart(t, tok[2], h, seq)
	}
	return nil
}

// applyRecord folds a record batch of partition part (d.<topic>.<part>).
func (f *State) applyRecord(t *Topic, part string, h nats.Header, seq uint64) error {
	p, err := strconv.Atoi(part)
	if err != nil || p >= len(t.Parts) {
		return fmt.Errorf("record batch for unknown partition %s", part)
	}
	ps := t.Parts[p]
	r, ref, cum, gw, err := RecordFields(h)
	if err != nil {
		return fmt.Errorf("partition %d: %w", p, err)
	}
	r.Seq = seq
	switch {
	case r.Base == ps.End:
	case r.Base > ps.End && ps.LastSeq <= f.Snap.From:
		// The partition's first batch in the stream, or since the
		// snapshot the fold started from: retention purged those
		// before it (its start record, later in the stream, moves
		// the start on to where it cut), the snapshot's too.
		for _, old := range ps.Recs {
			ps.retained -= old.Bytes()
			ps.sum -= recHash(old)
		}
		ps.Recs, ps.Refs = ps.Recs[:0:0], nil
		ps.Start, ps.End = max(ps.Start, r.Base), r.Base
	default:
		return fmt.Errorf("partition %d: record batch at offset %d, expected %d", p, r.Base, ps.End)
	}
	if r.Count() == 0 {
		// A record batch of no messages: a resolution (jetstream/chain),
		// which only takes the subject's sequence.
		ps.LastSeq = seq
		return nil
	}
	ps.Recs = append(ps.Recs, r)
	ps.retained += r.Bytes()
	ps.sum += recHash(r)
	if ref != 0 {
		if ps.Refs == nil {
			ps.Refs = map[uint64]uint64{}
		}
		ps.Refs[seq] = ref
		f.Swept.referenced(ref)
	}
	ps.End += r.Count()
	if cum > 0 {
		ps.Bytes = cum // exact even when retention purged earlier batches
	} else {
		ps.Bytes += r.Bytes() // a batch written before Tg-Cum
	}
	ps.LastSeq = seq
	ps.lastWrite = time.UnixMicro(r.WrittenAt).UTC()
	if gw != "" {
		if _, ok := t.Writers[gw]; !ok {
			t.ForgetWriters(ps.lastWrite)
		}
		t.Writers[gw] = ps.lastWrite
	}
	if rate, burst := topicstore.ThrottleLimits(&t.Rec.Config); rate > 0 {
		ps.Bucket.Charge(ps.lastWrite, rate, burst, r.Bytes())
	}
	if w := topicstore.StabilizationWindow(&t.Rec.Config); ps.Meter == nil || ps.Meter.Window != w {
		ps.Meter = topicstore.NewWriteMeter(w, ps.lastWrite, ps.Bytes)
	} else {
		ps.Meter.Observe(ps.lastWrite, ps.Bytes)
	}
	t.notify()
	return nil
}

// applyProducer folds a producer's state (p.<topic>.<hex id>).
func applyProducer(t *Topic, idHex string, h nats.Header, seq uint64) error {
	raw, err := hex.DecodeString(idHex)
	if err != nil {
		return err
	}
	st := ProducerFromHeaders(h, seq)
	if prev := t.Prods[string(raw)]; prev != nil && h.Get(natsjs.MsgRollup) == "" {
		st.Pending = prev.Pending + 1
	}
	t.Prods[string(raw)] = st
	return nil
}

// applyPosition folds a consumer's position (o.<topic>.<hex consumer>.<part>).
func applyPosition(t *Topic, consumerHex, part string, h nats.Header, seq uint64) error {
	raw, err := hex.DecodeString(consumerHex)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(part)
	if err != nil {
		return err
	}
	c := string(raw)
	if t.Pos[c] == nil {
		t.Pos[c] = map[int32]*Position{}
	}
	t.Pos[c][int32(p)] = &Position{Seq: seq, Off: HeaderInt(h, HOff)}
	return nil
}

// applyStart folds a partition's retention start (r.<topic>.<part>).
func applyStart(t *Topic, part string, h nats.Header, seq uint64) {
	p, err := strconv.Atoi(part)
	if err != nil || p >= len(t.Parts) {
		return
	}
	ps := t.Parts[p]
	ps.StartSeq = seq
	if st := HeaderInt(h, HStart); st > ps.Start {
		ps.Start = st
		i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].Base+ps.Recs[i].Count() > st })
		if n := len(ps.Recs); n > 0 {
			ps.CutSeq = max(ps.CutSeq, ps.Recs[min(i, n-1)].Seq) // retention's purge (jetstream/retain)
		}
		for _, r := range ps.Recs[:i] {
			ps.retained -= r.Bytes()
			ps.sum -= recHash(r)
			delete(ps.Refs, r.Seq)
		}
		ps.Recs = append(ps.Recs[:0:0], ps.Recs[i:]...)
	}
}

// applyCatalog folds a catalog record: a creation, an alteration or a
// drop (no Tg-Topic header).
func (f *State) applyCatalog(nameHex string, h nats.Header, seq uint64) error {
	raw, err := hex.DecodeString(nameHex)
	if err != nil {
		return err
	}
	name := string(raw)
	old := f.ByName[name]
	f.CatSeqs[name] = seq
	js := h.Get(HTopic)
	if js == "" {
		// What the dropped topic left is purged by the drop, or by the
		// maintenance lease holder if its gateway died first.
		id := uint64(HeaderInt(h, HDropped))
		if id == 0 && old != nil {
			id = old.Rec.ID
		}
		if id != 0 {
			f.Leftovers[id] = &Leftover{Name: name, Seq: seq, At: TimeMicros(HeaderInt(h, HAt))}
		}
		if old != nil {
			delete(f.ByName, name)
			delete(f.ByID, old.Rec.ID)
			old.notify()
			f.sharedDropped(old)
		}
		return nil
	}
	var rec CatalogRec
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		return err
	}
	if rec.ID == 0 || old == nil {
		rec.ID = seq
		if rec.Ordinal == 0 {
			rec.Ordinal = f.Created + 1 // a record written before topic numbers
		}
		f.Created = max(f.Created, rec.Ordinal)
		t := newTopicState(rec, seq)
		t.ordinal = rec.Ordinal
		f.ByName[name], f.ByID[rec.ID] = t, t
		f.initialPositions(t, nil)
		f.sharedCatalog(t, nil, seq)
		return nil
	}
	prev := old.Rec.Config.Consumers
	reconfigureBuckets(old, &old.Rec.Config, &rec.Config, time.UnixMicro(rec.CreatedAt))
	if rec.Ordinal == 0 {
		rec.Ordinal = old.ordinal
	}
	old.Rec, old.CatSeq, old.ordinal = rec, seq, rec.Ordinal
	old.resize()
	f.initialPositions(old, prev)
	f.sharedCatalog(old, prev, seq)
	old.notify()
	return nil
}

// reconfigureBuckets applies new write-speed limits, as the embedded
// store does: what refilled at the old rate is kept (capped at the new
// burst), debt is paid back at the new rate; turning throttling off
// forgets the buckets but keeps the counters.
func reconfigureBuckets(t *Topic, old, cfg *topicstore.TopicConfig, _ time.Time) {
	oldRate, oldBurst := topicstore.ThrottleLimits(old)
	rate, burst := topicstore.ThrottleLimits(cfg)
	if oldRate == rate && oldBurst == burst {
		return
	}
	for _, ps := range t.Parts {
		b := &ps.Bucket
		if rate == 0 || oldRate == 0 {
			b.Tokens, b.At = 0, time.Time{}
			continue
		}
		if !b.At.IsZero() {
			b.Tokens = min(b.Tokens, burst)
		}
	}
}

// initialPositions records where consumers added since prev start: the
// first offset written at or after their read_from, as of this record.
func (f *State) initialPositions(t *Topic, prev []topicstore.ConsumerConfig) {
	had := map[string]topicstore.ConsumerConfig{}
	for _, c := range prev {
		had[c.Name] = c
	}
	for _, c := range t.Rec.Config.Consumers {
		if o, ok := had[c.Name]; ok && o.ReadFrom.Equal(c.ReadFrom) {
			continue
		}
		// A consumer dropped and added again starts over; its subjects'
		// last sequences are kept, the next commits' expectations.
		for _, st := range t.Pos[c.Name] {
			st.Reset = true
		}
		init := map[int32]int64{}
		for p, ps := range t.Parts {
			if c.ReadFrom.IsZero() {
				continue
			}
			init[int32(p)] = ps.OffsetAt(c.ReadFrom)
		}
		t.Initial[c.Name] = init
	}
}

// OffsetAt is the first offset of the first batch written at or after at.
func (ps *Part) OffsetAt(at time.Time) int64 {
	us := at.UnixMicro()
	i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].WrittenAt >= us })
	if i == len(ps.Recs) {
		return ps.End
	}
	return max(ps.Recs[i].Base, ps.Start)
}

// RecordFields reads a record batch's headers: Tg-Rec, or the headers of
// one field each that batches written before it carry.
func RecordFields(h nats.Header) (r Rec, ref uint64, cum int64, gw string, err error) {
	v := h.Get(HRec)
	if v == "" {
		r, err = newRecIdx(0, HeaderInt(h, HBase), HeaderInt(h, HCount), HeaderInt(h, HAt), HeaderInt(h, HBytes))
		return r, uint64(HeaderInt(h, HRef)), HeaderInt(h, HCum), h.Get(HGw), err
	}
	var f [7]string
	for i := range f {
		if i == len(f)-1 {
			f[i] = v
			break
		}
		var ok bool
		if f[i], v, ok = strings.Cut(v, " "); !ok {
			return r, 0, 0, "", fmt.Errorf("bad %s header %q", HRec, h.Get(HRec))
		}
	}
	var n [5]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return r, 0, 0, "", fmt.Errorf("bad %s header %q: %w", HRec, h.Get(HRec), err)
		}
	}
	ref, err = strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return r, 0, 0, "", fmt.Errorf("bad %s header %q: %w", HRec, h.Get(HRec), err)
	}
	r, err = newRecIdx(0, n[0], n[1], n[2], n[3])
	return r, ref, n[4], f[5], err
}

func HeaderInt(h nats.Header, k string) int64 {
	v, _ := strconv.ParseInt(h.Get(k), 10, 64)
	return v
}

// applyExpiry folds an expiry notice: t's producers last written before
// its cutoff are forgotten.
func applyExpiry(t *Topic, h nats.Header) {
	cutoff := HeaderInt(h, HBefore)
	for name, ps := range t.Prods {
		if ps.At.UnixMicro() < cutoff {
			delete(t.Prods, name)
		}
	}
}

// ProducerFromHeaders is the producer state a message on its subject holds.
func ProducerFromHeaders(h nats.Header, seq uint64) *Producer {
	return &Producer{Seq: seq, Part: int32(HeaderInt(h, HPart)), MaxNo: HeaderInt(h, HSeqNo), At: time.UnixMicro(HeaderInt(h, HAt)).UTC()}
}
