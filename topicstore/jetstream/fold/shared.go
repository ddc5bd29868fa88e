package fold

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"topicgate/topicstore"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Shared is the shared-consumer part of the fold.
type Shared struct {
	topics map[uint64]*SharedTopic
}

type SharedTopic struct {
	cons map[string]*SharedConsumer
}

// SharedConsumer is one shared consumer of a topic.
type SharedConsumer struct {
	Gen   uint64 // catalog sequence that made it shared; 0: not a shared consumer now
	Parts map[int32]*SharedPart
	freed chan struct{} // closed at the next Tg-Freed message or change of the topic; nil: nobody waits
}

// SharedPart is a state subject as the fold knows it.
type SharedPart struct {
	Seq   uint64      // the subject's last sequence, of any generation
	Raw   string      // its Tg-Shared header if of the current generation, else ""
	State SharedState // raw, decoded
	// void: the subject's last message is an intent an abort voided; the
	// state is in the message before it.
	void bool
}

// SharedTopicOf returns the shared state of topic id, created if missing.
func (f *State) SharedTopicOf(id uint64) *SharedTopic {
	if f.sh.topics == nil {
		f.sh.topics = map[uint64]*SharedTopic{}
	}
	st := f.sh.topics[id]
	if st == nil {
		st = &SharedTopic{cons: map[string]*SharedConsumer{}}
		f.sh.topics[id] = st
	}
	return st
}

func (st *SharedTopic) Consumer(name string) *SharedConsumer {
	c := st.cons[name]
	if c == nil {
		c = &SharedConsumer{Parts: map[int32]*SharedPart{}}
		st.cons[name] = c
	}
	return c
}

// wake closes the consumer's freed channel.
func (c *SharedConsumer) wake() {
	if c.freed != nil {
		close(c.freed)
		c.freed = nil
	}
}

// FreedChan returns the channel the next wake closes.
func (c *SharedConsumer) FreedChan() <-chan struct{} {
	if c.freed == nil {
		c.freed = make(chan struct{})
	}
	return c.freed
}

// reset forgets the consumer's state (a new generation starts over) but
// keeps each subject's sequence.
func (c *SharedConsumer) reset(gen uint64) {
	c.Gen = gen
	for _, pf := range c.Parts {
		pf.Raw, pf.State = "", SharedState{}
	}
}

// applyShared folds a state message (fold hook).
func (f *State) applyShared(t *Topic, tok []string, h nats.Header, seq uint64) error {
	raw, herr := hex.DecodeString(tok[2])
	p, perr := strconv.Atoi(tok[3])
	if herr != nil || perr != nil {
		return fmt.Errorf("state subject tokens %q, %q: %w", tok[2], tok[3], errBadState)
	}
	c := f.SharedTopicOf(t.Rec.ID).Consumer(string(raw))
	pf := c.Parts[int32(p)]
	if pf == nil {
		pf = &SharedPart{}
		c.Parts[int32(p)] = pf
	}
	if exp := h.Get(natsjs.ExpectedLastSubjSeqHeader); exp != "" {
		// A state expected the one before it; expecting an older one than
		// the fold holds means the stream stored it over a state it did
		// not expect (a later one may be missing here, rolled up: fine).
		if e, _ := strconv.ParseUint(exp, 10, 64); e < pf.Seq {
			f.hooks.SharedCASBroken(strings.Join(tok, "."), seq, e, pf.Seq)
		}
	}
	pf.Seq, pf.void = seq, false
	if gen, _ := strconv.ParseUint(h.Get(HGen), 10, 64); gen == c.Gen && gen != 0 {
		st, err := DecodeSharedState(h.Get(HShared))
		if err != nil {
			return err
		}
		pf.Raw, pf.State = h.Get(HShared), st
	}
	if h.Get(HFreed) != "" {
		c.wake()
	}
	return nil
}

// sharedCatalog applies a topic's creation or alteration to its shared
// consumers (fold hook; prev is the consumers before, nil at creation):
// a consumer that became shared starts a generation, one that is no
// longer shared forgets its state, and every waiter of the topic wakes
// (its consumer's config may have changed).
func (f *State) sharedCatalog(t *Topic, prev []topicstore.ConsumerConfig, seq uint64) {
	st := f.SharedTopicOf(t.Rec.ID)
	was := map[string]bool{}
	for _, c := range prev {
		was[c.Name] = c.Shared
	}
	now := map[string]bool{}
	for _, c := range t.Rec.Config.Consumers {
		now[c.Name] = c.Shared
		if c.Shared && !was[c.Name] {
			st.Consumer(c.Name).reset(seq)
			f.hooks.SharedReset(t.Rec.ID, c.Name)
		}
	}
	for name, c := range st.cons {
		if !now[name] && c.Gen != 0 {
			c.reset(0)
			f.hooks.SharedReset(t.Rec.ID, name)
		}
		c.wake()
	}
}

// sharedDropped wakes a dropped topic's waiters and forgets its shared
// state (fold hook).
func (f *State) sharedDropped(t *Topic) {
	if st := f.sh.topics[t.Rec.ID]; st != nil {
		for _, c := range st.cons {
			c.wake()
		}
		delete(f.sh.topics, t.Rec.ID)
		f.hooks.SharedGone(t.Rec.ID)
	}
}
