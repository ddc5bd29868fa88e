package jetstream

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
// alteration, drop) fold here too. Every function runs under s.mu.

// apply folds one message. It runs under s.mu.
func (f *foldState) apply(subject string, h nats.Header, seq uint64, ts time.Time) error {
	tok := strings.Split(strings.TrimPrefix(subject, f.prefix+"."), ".")
	if len(tok) == 1 && tok[0] == "l" {
		f.lease = leaseState{seq: seq, holder: h.Get(hHolder), until: timeMicros(hInt(h, hUntil))}
		return nil
	}
	if len(tok) == 1 && tok[0] == "cn" {
		f.cnSeq, f.created = seq, max(f.created, uint64(hInt(h, hCreated))) // topic numbers (catalog.go)
		return nil
	}
	if len(tok) == 1 && tok[0] == "n" {
		f.applySnap(h, seq, ts) // snapshots' points and notices (snapshot.go)
		return nil
	}
	if len(tok) < 2 {
		return nil
	}
	switch tok[0] {
	case "c":
		return f.applyCatalog(tok[1], h, seq)
	case "t":
		f.swept.chunk(tok, h, seq, ts) // staged data, read by reference (sweep.go)
		return nil
	case "f":
		return f.applyChain(tok, h, seq) // gateways' chains (chain.go) and sweep fences (sweep.go)
	case "x":
		return f.applyDecision(tok, h, seq, ts) // wide transactions' decisions (wide.go, wide_retire.go)
	case "g", "k":
		return nil // commit guards, readiness probes
	case "m", "h":
		return f.applyGroup(tok, h, seq) // read-session groups (groups.go)
	}
	id, err := strconv.ParseUint(tok[1], 10, 64)
	if err != nil {
		return err
	}
	if tok[0] == "d" || tok[0] == "s" {
		f.hooks.witnessed(subject, h, seq) // batches of this gateway in doubt (chain.go)
	}
	if v := h.Get(hTxn); v != "" {
		return f.applyIntent(v, tok, subject, h, seq) // a wide transaction's (wide.go)
	}
	t := f.byID[id]
	if t == nil {
		return nil // a dropped topic's leftovers
	}
	switch {
	case tok[0] == "d" && len(tok) == 3:
		return f.applyRecord(t, tok[2], h, seq)
	case tok[0] == "p" && len(tok) == 3:
		return applyProducer(t, tok[2], h, seq)
	case tok[0] == "e" && len(tok) == 2:
		applyExpiry(t, h) // producers that expired (producers.go)
	case tok[0] == "o" && len(tok) == 4:
		return applyPosition(t, tok[2], tok[3], h, seq)
	case tok[0] == "s" && len(tok) == 4:
		return f.applyShared(t, tok, h, seq) // shared-consumer states (shared_fold.go)
	case tok[0] == "r" && len(tok) == 3:
		applyStart(t, tok[2], h, seq)
	}
	return nil
}

// applyRecord folds a record batch of partition part (d.<topic>.<part>).
func (f *foldState) applyRecord(t *topicState, part string, h nats.Header, seq uint64) error {
	p, err := strconv.Atoi(part)
	if err != nil || p >= len(t.parts) {
		return fmt.Errorf("record batch for unknown partition %s", part)
	}
	ps := t.parts[p]
	r, ref, cum, gw, err := recordFields(h)
	if err != nil {
		return fmt.Errorf("partition %d: %w", p, err)
	}
	r.seq = seq
	switch {
	case r.base == ps.end:
	case r.base > ps.end && ps.lastSeq <= f.snap.from:
		// The partition's first batch in the stream, or since the
		// snapshot the fold started from: retention purged those
		// before it (its start record, later in the stream, moves
		// the start on to where it cut), the snapshot's too.
		for _, old := range ps.recs {
			ps.retained -= old.bytes()
			ps.sum -= recHash(old)
		}
		ps.recs, ps.refs = ps.recs[:0:0], nil
		ps.start, ps.end = max(ps.start, r.base), r.base
	default:
		return fmt.Errorf("partition %d: record batch at offset %d, expected %d", p, r.base, ps.end)
	}
	if r.count() == 0 {
		// A record batch of no messages: a resolution (chain.go),
		// which only takes the subject's sequence.
		ps.lastSeq = seq
		return nil
	}
	ps.recs = append(ps.recs, r)
	ps.retained += r.bytes()
	ps.sum += recHash(r)
	if ref != 0 {
		if ps.refs == nil {
			ps.refs = map[uint64]uint64{}
		}
		ps.refs[seq] = ref
		f.swept.referenced(ref)
	}
	ps.end += r.count()
	if cum > 0 {
		ps.bytes = cum // exact even when retention purged earlier batches
	} else {
		ps.bytes += r.bytes() // a batch written before Tg-Cum
	}
	ps.lastSeq = seq
	ps.lastWrite = time.UnixMicro(r.writtenAt).UTC()
	if gw != "" {
		if _, ok := t.writers[gw]; !ok {
			t.forgetWriters(ps.lastWrite)
		}
		t.writers[gw] = ps.lastWrite
	}
	if rate, burst := topicstore.ThrottleLimits(&t.rec.Config); rate > 0 {
		ps.bucket.Charge(ps.lastWrite, rate, burst, r.bytes())
	}
	if w := topicstore.StabilizationWindow(&t.rec.Config); ps.meter == nil || ps.meter.Window != w {
		ps.meter = topicstore.NewWriteMeter(w, ps.lastWrite, ps.bytes)
	} else {
		ps.meter.Observe(ps.lastWrite, ps.bytes)
	}
	t.notify()
	return nil
}

// applyProducer folds a producer's state (p.<topic>.<hex id>).
func applyProducer(t *topicState, idHex string, h nats.Header, seq uint64) error {
	raw, err := hex.DecodeString(idHex)
	if err != nil {
		return err
	}
	st := prodFromHeaders(h, seq)
	if prev := t.prods[string(raw)]; prev != nil && h.Get(natsjs.MsgRollup) == "" {
		st.pending = prev.pending + 1
	}
	t.prods[string(raw)] = st
	return nil
}

// applyPosition folds a consumer's position (o.<topic>.<hex consumer>.<part>).
func applyPosition(t *topicState, consumerHex, part string, h nats.Header, seq uint64) error {
	raw, err := hex.DecodeString(consumerHex)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(part)
	if err != nil {
		return err
	}
	c := string(raw)
	if t.pos[c] == nil {
		t.pos[c] = map[int32]*posState{}
	}
	t.pos[c][int32(p)] = &posState{seq: seq, off: hInt(h, hOff)}
	return nil
}

// applyStart folds a partition's retention start (r.<topic>.<part>).
func applyStart(t *topicState, part string, h nats.Header, seq uint64) {
	p, err := strconv.Atoi(part)
	if err != nil || p >= len(t.parts) {
		return
	}
	ps := t.parts[p]
	ps.startSeq = seq
	if st := hInt(h, hStart); st > ps.start {
		ps.start = st
		i := sort.Search(len(ps.recs), func(i int) bool { return ps.recs[i].base+ps.recs[i].count() > st })
		if n := len(ps.recs); n > 0 {
			ps.cutSeq = max(ps.cutSeq, ps.recs[min(i, n-1)].seq) // RunRetention's purge (read.go)
		}
		for _, r := range ps.recs[:i] {
			ps.retained -= r.bytes()
			ps.sum -= recHash(r)
			delete(ps.refs, r.seq)
		}
		ps.recs = append(ps.recs[:0:0], ps.recs[i:]...)
	}
}

// applyCatalog folds a catalog record: a creation, an alteration or a
// drop (no Tg-Topic header).
func (f *foldState) applyCatalog(nameHex string, h nats.Header, seq uint64) error {
	raw, err := hex.DecodeString(nameHex)
	if err != nil {
		return err
	}
	name := string(raw)
	old := f.byName[name]
	f.catSeqs[name] = seq
	js := h.Get(hTopic)
	if js == "" {
		// What the dropped topic left is purged by the drop, or by the
		// maintenance lease holder if its gateway died first.
		id := uint64(hInt(h, hDropped))
		if id == 0 && old != nil {
			id = old.rec.ID
		}
		if id != 0 {
			f.leftovers[id] = &leftover{name: name, seq: seq, at: timeMicros(hInt(h, hAt))}
		}
		if old != nil {
			delete(f.byName, name)
			delete(f.byID, old.rec.ID)
			old.notify()
			f.sharedDropped(old)
		}
		return nil
	}
	var rec catalogRec
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		return err
	}
	if rec.ID == 0 || old == nil {
		rec.ID = seq
		if rec.Ordinal == 0 {
			rec.Ordinal = f.created + 1 // a record written before topic numbers
		}
		f.created = max(f.created, rec.Ordinal)
		t := newTopicState(rec, seq)
		t.ordinal = rec.Ordinal
		f.byName[name], f.byID[rec.ID] = t, t
		f.initialPositions(t, nil)
		f.sharedCatalog(t, nil, seq)
		return nil
	}
	prev := old.rec.Config.Consumers
	reconfigureBuckets(old, &old.rec.Config, &rec.Config, time.UnixMicro(rec.CreatedAt))
	if rec.Ordinal == 0 {
		rec.Ordinal = old.ordinal
	}
	old.rec, old.catSeq, old.ordinal = rec, seq, rec.Ordinal
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
func reconfigureBuckets(t *topicState, old, cfg *topicstore.TopicConfig, _ time.Time) {
	oldRate, oldBurst := topicstore.ThrottleLimits(old)
	rate, burst := topicstore.ThrottleLimits(cfg)
	if oldRate == rate && oldBurst == burst {
		return
	}
	for _, ps := range t.parts {
		b := &ps.bucket
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
func (f *foldState) initialPositions(t *topicState, prev []topicstore.ConsumerConfig) {
	had := map[string]topicstore.ConsumerConfig{}
	for _, c := range prev {
		had[c.Name] = c
	}
	for _, c := range t.rec.Config.Consumers {
		if o, ok := had[c.Name]; ok && o.ReadFrom.Equal(c.ReadFrom) {
			continue
		}
		// A consumer dropped and added again starts over; its subjects'
		// last sequences are kept, the next commits' expectations.
		for _, st := range t.pos[c.Name] {
			st.reset = true
		}
		init := map[int32]int64{}
		for p, ps := range t.parts {
			if c.ReadFrom.IsZero() {
				continue
			}
			init[int32(p)] = ps.offsetAt(c.ReadFrom)
		}
		t.initial[c.Name] = init
	}
}

// offsetAt is the first offset of the first batch written at or after at.
func (ps *partState) offsetAt(at time.Time) int64 {
	us := at.UnixMicro()
	i := sort.Search(len(ps.recs), func(i int) bool { return ps.recs[i].writtenAt >= us })
	if i == len(ps.recs) {
		return ps.end
	}
	return max(ps.recs[i].base, ps.start)
}

// recordFields reads a record batch's headers: Tg-Rec, or the headers of
// one field each that batches written before it carry.
func recordFields(h nats.Header) (r recIdx, ref uint64, cum int64, gw string, err error) {
	v := h.Get(hRec)
	if v == "" {
		r, err = newRecIdx(0, hInt(h, hBase), hInt(h, hCount), hInt(h, hAt), hInt(h, hBytes))
		return r, uint64(hInt(h, hRef)), hInt(h, hCum), h.Get(hGw), err
	}
	var f [7]string
	for i := range f {
		if i == len(f)-1 {
			f[i] = v
			break
		}
		var ok bool
		if f[i], v, ok = strings.Cut(v, " "); !ok {
			return r, 0, 0, "", fmt.Errorf("bad %s header %q", hRec, h.Get(hRec))
		}
	}
	var n [5]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return r, 0, 0, "", fmt.Errorf("bad %s header %q: %w", hRec, h.Get(hRec), err)
		}
	}
	ref, err = strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return r, 0, 0, "", fmt.Errorf("bad %s header %q: %w", hRec, h.Get(hRec), err)
	}
	r, err = newRecIdx(0, n[0], n[1], n[2], n[3])
	return r, ref, n[4], f[5], err
}

func hInt(h nats.Header, k string) int64 {
	v, _ := strconv.ParseInt(h.Get(k), 10, 64)
	return v
}
