package jetstream

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Shared consumers on the cluster: the fold's part.
//
// Per (topic, shared consumer, partition) one state subject
// <prefix>.s.<topicID>.<consumerHex>.<partition> holds the partition's
// window state (shPartState: first unfinished offset, per message its
// state, delivery count, lock holder and deadline, and the counters) in
// its last message's Tg-Shared header. Every state message is a rollup of
// its subject (Nats-Rollup: sub), so the stream keeps one per partition,
// like a KV bucket, and the fold, which reads headers only, always has
// every partition's state without fetching anything. A header rather than
// the payload: the fold gets it for free, and a window of at most
// sharedcore.DefaultWindow entries encodes in a few KB (20 KB with every
// message locked), far below a message's limit.
//
// Tg-Gen names the consumer's generation: the catalog sequence of the
// record that made it a shared consumer. A consumer dropped (or turned
// into a streaming one) and created again starts over: the fold ignores a
// state of another generation, but keeps its sequence, which the next
// state message must expect. Tg-Freed marks a state message whose step may
// have made a message available (sharedcore.Core.Freed, or the window
// moved on while full): the fold, which sees every gateway's messages,
// wakes the consumer's waiters on every gateway then (no polling).
//
// Besides the state, each gateway caches per consumer and partition the
// metadata of the window's messages (written_at, delay, group, size: the
// core needs them, the fold does not have them), filled by sharedFill with
// Scan before a step. The cache is the gateway's own, and only a cache: a
// gateway that starts rebuilds it from the stream.

// Headers of state messages.
const (
	hShared = "Tg-Shared" // the encoded shPartState
	hGen    = "Tg-Gen"    // the consumer's generation
	hFreed  = "Tg-Freed"  // "1": waiters may find a message now
)

// sharedFold is the shared-consumer part of the fold, under s.mu.
type sharedFold struct {
	topics map[uint64]*shTopic
	// bodies are the message bytes every shared consumer's metadata
	// cache keeps on this gateway, bounded by shBodyCache together.
	bodies int64
}

// shWindow is each partition's acquisition window.
func (s *Store) shWindow() int64 {
	if s.shWin > 0 {
		return int64(s.shWin)
	}
	return sharedcore.DefaultWindow
}

// newHolderGateway picks a random non-zero gateway id.
func newHolderGateway() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

type shTopic struct {
	cons   map[string]*shCons
	bodies *int64 // the gateway's sharedFold.bodies
}

// shCons is one shared consumer of a topic.
type shCons struct {
	gen   uint64 // catalog sequence that made it shared; 0: not a shared consumer now
	parts map[int32]*shPartFold
	freed chan struct{} // closed at the next Tg-Freed message or change of the topic; nil: nobody waits
	meta  map[int32]*shMeta
	cache int64                        // body bytes the meta entries keep
	total *int64                       // the gateway's sharedFold.bodies, which cache is part of
	ents  map[int32][]sharedcore.Entry // per partition: the window's entries of the last plan, reused by the next
	rr    int                          // this gateway's round-robin cursor (sharedcore.Core.RR)
}

// shPartFold is a state subject as the fold knows it.
type shPartFold struct {
	seq uint64      // the subject's last sequence, of any generation
	raw string      // its Tg-Shared header if of the current generation, else ""
	st  shPartState // raw, decoded
	// void: the subject's last message is an intent an abort voided; the
	// state is in the message before it.
	void bool
}

// shMeta caches the metadata of a partition's messages base, base+1, ...
type shMeta struct {
	base int64
	ents []shMetaEnt
}

type shMetaEnt struct {
	written, delay int64 // unix ns, ns
	size           int64 // stored body bytes
	group          string
	msg            *topicstore.Message // the message itself, while the consumer's cache has room (shBodyCache)
}

// shBodyCache bounds the message bytes the shared consumers' metadata
// caches of a gateway keep together besides the metadata, so that an
// acquisition hands out what the fill has read without reading it again.
const shBodyCache = 8 << 20

func (m *shMeta) end() int64 { return m.base + int64(len(m.ents)) }

func (s *Store) stateSubject(id uint64, consumer string, p int32) string {
	return s.prefix + ".s." + strconv.FormatUint(id, 10) + "." + hex.EncodeToString([]byte(consumer)) + "." + strconv.Itoa(int(p))
}

// holder is session's lock holder on this gateway.
func (s *Store) holder(session uint32) sharedcore.Holder {
	return sharedcore.Holder{Gateway: s.holderGw, Session: session}
}

// shTopicOf returns the shared state of topic id, created if missing.
func (f *foldState) shTopicOf(id uint64) *shTopic {
	if f.sh.topics == nil {
		f.sh.topics = map[uint64]*shTopic{}
	}
	st := f.sh.topics[id]
	if st == nil {
		st = &shTopic{cons: map[string]*shCons{}, bodies: &f.sh.bodies}
		f.sh.topics[id] = st
	}
	return st
}

func (st *shTopic) consumer(name string) *shCons {
	c := st.cons[name]
	if c == nil {
		c = &shCons{parts: map[int32]*shPartFold{}, meta: map[int32]*shMeta{}, total: st.bodies}
		st.cons[name] = c
	}
	return c
}

// wake closes the consumer's freed channel.
func (c *shCons) wake() {
	if c.freed != nil {
		close(c.freed)
		c.freed = nil
	}
}

// freedChan returns the channel the next wake closes.
func (c *shCons) freedChan() <-chan struct{} {
	if c.freed == nil {
		c.freed = make(chan struct{})
	}
	return c.freed
}

// reset forgets the consumer's state (a new generation starts over) but
// keeps each subject's sequence.
func (c *shCons) reset(gen uint64) {
	c.gen = gen
	for _, pf := range c.parts {
		pf.raw, pf.st = "", shPartState{}
	}
	c.drop(c.cache)
	c.meta = map[int32]*shMeta{}
}

// drop forgets n bytes of cached bodies.
func (c *shCons) drop(n int64) {
	c.cache -= n
	if c.total != nil {
		*c.total -= n
	}
}

// entries returns n zeroed entries for a plan's window of partition p,
// reusing the last plan's (plans run one at a time, on the committer).
func (c *shCons) entries(p int32, n int) []sharedcore.Entry {
	if c.ents == nil {
		c.ents = map[int32][]sharedcore.Entry{}
	}
	buf := c.ents[p]
	if cap(buf) < n {
		buf = make([]sharedcore.Entry, n)
		c.ents[p] = buf
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// prune drops the cached metadata of m below start.
func (c *shCons) prune(m *shMeta, start int64) {
	n := min(start-m.base, int64(len(m.ents)))
	for _, e := range m.ents[:n] {
		if e.msg != nil {
			c.drop(e.size)
		}
	}
	m.ents = append(m.ents[:0:0], m.ents[n:]...)
	m.base = start
}

// applyShared folds a state message (fold hook). It runs under s.mu.
func (f *foldState) applyShared(t *topicState, tok []string, h nats.Header, seq uint64) error {
	raw, herr := hex.DecodeString(tok[2])
	p, perr := strconv.Atoi(tok[3])
	if herr != nil || perr != nil {
		return fmt.Errorf("state subject tokens %q, %q: %w", tok[2], tok[3], errBadState)
	}
	c := f.shTopicOf(t.rec.ID).consumer(string(raw))
	pf := c.parts[int32(p)]
	if pf == nil {
		pf = &shPartFold{}
		c.parts[int32(p)] = pf
	}
	if exp := h.Get(natsjs.ExpectedLastSubjSeqHeader); exp != "" {
		// A state expected the one before it; expecting an older one than
		// the fold holds means the stream stored it over a state it did
		// not expect (a later one may be missing here, rolled up: fine).
		if e, _ := strconv.ParseUint(exp, 10, 64); e < pf.seq {
			f.hooks.sharedCASBroken(strings.Join(tok, "."), seq, e, pf.seq)
		}
	}
	pf.seq, pf.void = seq, false
	if gen, _ := strconv.ParseUint(h.Get(hGen), 10, 64); gen == c.gen && gen != 0 {
		st, err := decodeState(h.Get(hShared))
		if err != nil {
			return err
		}
		pf.raw, pf.st = h.Get(hShared), st
	}
	if h.Get(hFreed) != "" {
		c.wake()
	}
	return nil
}

// sharedCASBroken counts and reports a shared-consumer state the stream
// stored over one it did not expect (a fold hook).
func (s *Store) sharedCASBroken(subject string, seq, expected, folded uint64) {
	s.casBroken.Add(1)
	slog.Error("the stream stored a shared-consumer state over one it did not expect", "subject", subject,
		"seq", seq, "expected", expected, "folded", folded)
}

// sharedCatalog applies a topic's creation or alteration to its shared
// consumers (fold hook; prev is the consumers before, nil at creation):
// a consumer that became shared starts a generation, one that is no
// longer shared forgets its state, and every waiter of the topic wakes
// (its consumer's config may have changed). It runs under s.mu.
func (f *foldState) sharedCatalog(t *topicState, prev []topicstore.ConsumerConfig, seq uint64) {
	st := f.shTopicOf(t.rec.ID)
	was := map[string]bool{}
	for _, c := range prev {
		was[c.Name] = c.Shared
	}
	now := map[string]bool{}
	for _, c := range t.rec.Config.Consumers {
		now[c.Name] = c.Shared
		if c.Shared && !was[c.Name] {
			st.consumer(c.Name).reset(seq)
		}
	}
	for name, c := range st.cons {
		if !now[name] && c.gen != 0 {
			c.reset(0)
		}
		c.wake()
	}
}

// sharedDropped wakes a dropped topic's waiters and forgets its shared
// state (fold hook). It runs under s.mu.
func (f *foldState) sharedDropped(t *topicState) {
	if st := f.sh.topics[t.rec.ID]; st != nil {
		for _, c := range st.cons {
			c.wake()
			c.drop(c.cache)
		}
		delete(f.sh.topics, t.rec.ID)
	}
}

// sharedLookup finds a shared consumer. It runs under s.mu.
func (s *Store) sharedLookup(topic, consumer string) (*topicState, *topicstore.ConsumerConfig, *shCons, error) {
	t := s.fold.byName[topic]
	if t == nil {
		return nil, nil, nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	var cc *topicstore.ConsumerConfig
	for i := range t.rec.Config.Consumers {
		if t.rec.Config.Consumers[i].Name == consumer {
			cc = &t.rec.Config.Consumers[i]
		}
	}
	if cc == nil {
		return nil, nil, nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	if !cc.Shared {
		return nil, nil, nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrNotShared, topic, consumer)
	}
	c := s.fold.shTopicOf(t.rec.ID).consumer(consumer)
	if c.gen == 0 { // (not reached: sharedCatalog started its generation)
		c.gen = t.catSeq
	}
	return t, cc, c, nil
}

// sharedState is partition p's durable state (nil if none of the
// current generation) and its start: the state's, else the consumer's
// committed position (read_from), never below the partition's start. It
// runs under s.mu.
func (s *Store) sharedState(t *topicState, name string, c *shCons, p int32) (*shPartState, int64) {
	start := s.position(t, name, p)
	if pf := c.parts[p]; pf != nil && pf.raw != "" {
		return &pf.st, max(pf.st.start, t.parts[p].start)
	}
	return nil, start
}

// sharedFill loads the metadata of each partition's window (from its
// start up to sharedcore.DefaultWindow messages, within the visible end,
// to the end of the record batch that holds the window's last message, so
// that a window moving on by a few messages does not read that batch
// again) into the consumer's cache: Scan outside s.mu, for what the cache
// lacks.
func (s *Store) sharedFill(ctx context.Context, topic, consumer string) error {
	type job struct {
		p        int32
		from, to int64
	}
	var jobs []job
	s.mu.Lock()
	t, _, c, err := s.sharedLookup(topic, consumer)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	for i := range t.parts {
		p := int32(i)
		_, start := s.sharedState(t, consumer, c, p)
		m := c.meta[p]
		switch {
		case m == nil || m.base > start || m.end() < start:
			if m != nil {
				c.prune(m, m.end())
			}
			m = &shMeta{base: start}
			c.meta[p] = m
		case m.base < start:
			c.prune(m, start)
		}
		if to := min(start+s.shWindow(), t.parts[p].end); m.end() < to {
			recs := t.parts[p].recs
			if i := sort.Search(len(recs), func(i int) bool { return recs[i].base+recs[i].count() >= to }); i < len(recs) {
				to = recs[i].base + recs[i].count()
			}
			jobs = append(jobs, job{p, m.end(), to})
		}
	}
	room := shBodyCache - s.fold.sh.bodies
	s.mu.Unlock()
	for _, j := range jobs {
		var got []shMetaEnt
		first := int64(-1)
		err := s.Scan(ctx, topic, topicstore.ScanRange{Partition: j.p, Start: j.from, End: j.to}, func(m *topicstore.Message) bool {
			if first < 0 {
				first = m.Offset
			}
			e := shMetaEnt{written: m.WrittenAt.UnixNano(), delay: int64(m.Delay), size: int64(len(m.Body)), group: m.MessageGroupID}
			if room >= e.size {
				room -= e.size
				c := *m
				c.Body, c.Attrs = bytes.Clone(m.Body), slices.Clone(m.Attrs)
				e.msg = &c
			}
			got = append(got, e)
			return true
		})
		if err != nil {
			return err
		}
		if len(got) == 0 {
			continue
		}
		s.mu.Lock()
		if _, _, c2, err := s.sharedLookup(topic, consumer); err == nil && c2 == c {
			m := c.meta[j.p]
			switch {
			case m.end() == first:
			case m.end() < first && len(m.ents) == 0: // retention moved the start meanwhile
				m.base = first
			default:
				got = nil
			}
			for _, e := range got {
				if e.msg != nil {
					c.drop(-e.size)
				}
			}
			m.ents = append(m.ents, got...)
		}
		s.mu.Unlock()
	}
	return nil
}

// upgradeStream turns on what a stream created by an older topicgate
// lacks: rollups (state messages replace their subject's last one) and
// per-message TTLs (stagings' "gone" markers expire, sweep.go).
func (s *Store) upgradeStream(ctx context.Context, st natsjs.Stream) (natsjs.Stream, error) {
	cfg := st.CachedInfo().Config
	if cfg.AllowRollup && cfg.AllowMsgTTL {
		return st, nil
	}
	cfg.AllowRollup, cfg.AllowMsgTTL = true, true
	st, err := s.js.UpdateStream(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("allowing rollups and message TTLs on stream %q (shared-consumer states and staging markers need them): %w", cfg.Name, err)
	}
	return st, nil
}
