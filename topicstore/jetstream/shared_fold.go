package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
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
	cons map[string]*shCons
}

// shCons is one shared consumer of a topic.
type shCons struct {
	gen   uint64 // catalog sequence that made it shared; 0: not a shared consumer now
	parts map[int32]*shPartFold
	freed chan struct{} // closed at the next Tg-Freed message or change of the topic; nil: nobody waits
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
		st = &shTopic{cons: map[string]*shCons{}}
		f.sh.topics[id] = st
	}
	return st
}

func (st *shTopic) consumer(name string) *shCons {
	c := st.cons[name]
	if c == nil {
		c = &shCons{parts: map[int32]*shPartFold{}}
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
			f.hooks.sharedReset(t.rec.ID, c.Name)
		}
	}
	for name, c := range st.cons {
		if !now[name] && c.gen != 0 {
			c.reset(0)
			f.hooks.sharedReset(t.rec.ID, name)
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
		}
		delete(f.sh.topics, t.rec.ID)
		f.hooks.sharedGone(t.rec.ID)
	}
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
