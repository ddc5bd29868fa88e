package plan

import (
	"topicgate/topicstore/jetstream/fold"

	"fmt"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Each gateway caches per shared consumer and partition the metadata of
// the window's messages (written_at, delay, group, size: the core needs
// them, the fold does not have them), filled by the store with Scan
// before a step (jetstream/queue), and what its plans reuse (the
// window's entries, the round-robin cursor). The cache is the gateway's
// own, and only a cache: a gateway that starts rebuilds it from the
// stream; the fold drops a consumer's when its generation changes or its
// topic is dropped (Reset, Gone).

// SharedCaches are the shared consumers' caches of a gateway; their owner
// serializes every use, as the fold's.
type SharedCaches struct {
	topics map[uint64]map[string]*SharedCache
	// Bodies are the message bytes every shared consumer's metadata
	// cache keeps on this gateway, bounded by BodyCache together.
	Bodies int64
}

// SharedCache is one shared consumer's cache.
type SharedCache struct {
	Meta  map[int32]*Meta
	cache int64                        // body bytes the meta entries keep
	total *int64                       // the gateway's SharedCaches.Bodies, which cache is part of
	ents  map[int32][]sharedcore.Entry // per partition: the window's entries of the last plan, reused by the next
	rr    int                          // this gateway's round-robin cursor (sharedcore.Core.RR)
}

// Consumer is a shared consumer as the fold has it and this gateway's
// cache of it.
type Consumer struct {
	*fold.SharedConsumer
	*SharedCache
}

// Meta caches the metadata of a partition's messages base, base+1, ...
type Meta struct {
	Base int64
	Ents []MetaEnt
}

// MetaEnt is one message's metadata.
type MetaEnt struct {
	Written, Delay int64 // unix ns, ns
	Size           int64 // stored body bytes
	Group          string
	Msg            *topicstore.Message // the message itself, while the consumer's cache has room (BodyCache)
}

// BodyCache bounds the message bytes the shared consumers' metadata
// caches of a gateway keep together besides the metadata, so that an
// acquisition hands out what the fill has read without reading it again.
const BodyCache = 8 << 20

// End is the offset after the cached ones.
func (m *Meta) End() int64 { return m.Base + int64(len(m.Ents)) }

// of returns the cache of topic id's consumer name, created if missing.
func (cs *SharedCaches) of(id uint64, name string) *SharedCache {
	if cs.topics == nil {
		cs.topics = map[uint64]map[string]*SharedCache{}
	}
	byName := cs.topics[id]
	if byName == nil {
		byName = map[string]*SharedCache{}
		cs.topics[id] = byName
	}
	c := byName[name]
	if c == nil {
		c = &SharedCache{Meta: map[int32]*Meta{}, total: &cs.Bodies}
		byName[name] = c
	}
	return c
}

// Reset forgets the cache of a consumer whose generation changed (a fold
// hook).
func (cs *SharedCaches) Reset(id uint64, name string) {
	if c := cs.topics[id][name]; c != nil {
		c.Drop(c.cache)
		c.Meta = map[int32]*Meta{}
	}
}

// Gone forgets the caches of a dropped topic (a fold hook).
func (cs *SharedCaches) Gone(id uint64) {
	for _, c := range cs.topics[id] {
		c.Drop(c.cache)
	}
	delete(cs.topics, id)
}

// Drop forgets n bytes of cached bodies.
func (c *SharedCache) Drop(n int64) {
	c.cache -= n
	if c.total != nil {
		*c.total -= n
	}
}

// entries returns n zeroed entries for a plan's window of partition p,
// reusing the last plan's (plans run one at a time, on the committer).
func (c *SharedCache) entries(p int32, n int) []sharedcore.Entry {
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

// Prune drops the cached metadata of m below start.
func (c *SharedCache) Prune(m *Meta, start int64) {
	n := min(start-m.Base, int64(len(m.Ents)))
	for _, e := range m.Ents[:n] {
		if e.Msg != nil {
			c.Drop(e.Size)
		}
	}
	m.Ents = append(m.Ents[:0:0], m.Ents[n:]...)
	m.Base = start
}

// Lookup finds a shared consumer in f and its cache.
func (cs *SharedCaches) Lookup(f *fold.State, topic, consumer string) (*fold.Topic, *topicstore.ConsumerConfig, Consumer, error) {
	t := f.ByName[topic]
	if t == nil {
		return nil, nil, Consumer{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	var cc *topicstore.ConsumerConfig
	for i := range t.Rec.Config.Consumers {
		if t.Rec.Config.Consumers[i].Name == consumer {
			cc = &t.Rec.Config.Consumers[i]
		}
	}
	if cc == nil {
		return nil, nil, Consumer{}, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	if !cc.Shared {
		return nil, nil, Consumer{}, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrNotShared, topic, consumer)
	}
	c := f.SharedTopicOf(t.Rec.ID).Consumer(consumer)
	if c.Gen == 0 { // (not reached: sharedCatalog started its generation)
		c.Gen = t.CatSeq
	}
	return t, cc, Consumer{c, cs.of(t.Rec.ID, consumer)}, nil
}

// SharedState is partition p's durable state (nil if none of the
// current generation) and its start: the state's, else the consumer's
// committed position (read_from), never below the partition's start.
func SharedState(t *fold.Topic, name string, c Consumer, p int32) (*fold.SharedState, int64) {
	start := t.Position(name, p)
	if pf := c.Parts[p]; pf != nil && pf.Raw != "" {
		return &pf.State, max(pf.State.Start, t.Parts[p].Start)
	}
	return nil, start
}
