package jetstream

import (
	"topicgate/topicstore/jetstream/fold"

	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"

	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Each gateway caches per shared consumer and partition the metadata of
// the window's messages (written_at, delay, group, size: the core needs
// them, the fold does not have them), filled by sharedFill with Scan
// before a step, and what its plans reuse (the window's entries, the
// round-robin cursor). The cache is the gateway's own, and only a cache:
// a gateway that starts rebuilds it from the stream; the fold drops a
// consumer's when its generation changes or its topic is dropped
// (sharedReset, sharedGone).

// shCaches are the shared consumers' caches of this gateway, under s.mu.
type shCaches struct {
	topics map[uint64]map[string]*shCache
	// bodies are the message bytes every shared consumer's metadata
	// cache keeps on this gateway, bounded by shBodyCache together.
	bodies int64
}

// shCache is one shared consumer's cache.
type shCache struct {
	meta  map[int32]*shMeta
	cache int64                        // body bytes the meta entries keep
	total *int64                       // the gateway's shCaches.bodies, which cache is part of
	ents  map[int32][]sharedcore.Entry // per partition: the window's entries of the last plan, reused by the next
	rr    int                          // this gateway's round-robin cursor (sharedcore.Core.RR)
}

// shConsumer is a shared consumer as the fold has it and this gateway's
// cache of it.
type shConsumer struct {
	*fold.SharedConsumer
	*shCache
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

// shCacheOf returns the cache of topic id's consumer name, created if
// missing. It runs under s.mu.
func (s *Store) shCacheOf(id uint64, name string) *shCache {
	if s.shc.topics == nil {
		s.shc.topics = map[uint64]map[string]*shCache{}
	}
	byName := s.shc.topics[id]
	if byName == nil {
		byName = map[string]*shCache{}
		s.shc.topics[id] = byName
	}
	c := byName[name]
	if c == nil {
		c = &shCache{meta: map[int32]*shMeta{}, total: &s.shc.bodies}
		byName[name] = c
	}
	return c
}

// sharedReset forgets the cache of a consumer whose generation changed
// (a fold hook). It runs under s.mu.
func (s *Store) sharedReset(id uint64, name string) {
	if c := s.shc.topics[id][name]; c != nil {
		c.drop(c.cache)
		c.meta = map[int32]*shMeta{}
	}
}

// sharedGone forgets the caches of a dropped topic (a fold hook). It runs
// under s.mu.
func (s *Store) sharedGone(id uint64) {
	for _, c := range s.shc.topics[id] {
		c.drop(c.cache)
	}
	delete(s.shc.topics, id)
}

// drop forgets n bytes of cached bodies.
func (c *shCache) drop(n int64) {
	c.cache -= n
	if c.total != nil {
		*c.total -= n
	}
}

// entries returns n zeroed entries for a plan's window of partition p,
// reusing the last plan's (plans run one at a time, on the committer).
func (c *shCache) entries(p int32, n int) []sharedcore.Entry {
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
func (c *shCache) prune(m *shMeta, start int64) {
	n := min(start-m.base, int64(len(m.ents)))
	for _, e := range m.ents[:n] {
		if e.msg != nil {
			c.drop(e.size)
		}
	}
	m.ents = append(m.ents[:0:0], m.ents[n:]...)
	m.base = start
}

// sharedLookup finds a shared consumer. It runs under s.mu.
func (s *Store) sharedLookup(topic, consumer string) (*fold.Topic, *topicstore.ConsumerConfig, shConsumer, error) {
	t := s.fold.ByName[topic]
	if t == nil {
		return nil, nil, shConsumer{}, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	var cc *topicstore.ConsumerConfig
	for i := range t.Rec.Config.Consumers {
		if t.Rec.Config.Consumers[i].Name == consumer {
			cc = &t.Rec.Config.Consumers[i]
		}
	}
	if cc == nil {
		return nil, nil, shConsumer{}, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	if !cc.Shared {
		return nil, nil, shConsumer{}, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrNotShared, topic, consumer)
	}
	c := s.fold.SharedTopicOf(t.Rec.ID).Consumer(consumer)
	if c.Gen == 0 { // (not reached: sharedCatalog started its generation)
		c.Gen = t.CatSeq
	}
	return t, cc, shConsumer{c, s.shCacheOf(t.Rec.ID, consumer)}, nil
}

// sharedState is partition p's durable state (nil if none of the
// current generation) and its start: the state's, else the consumer's
// committed position (read_from), never below the partition's start. It
// runs under s.mu.
func (s *Store) sharedState(t *fold.Topic, name string, c shConsumer, p int32) (*fold.SharedState, int64) {
	start := s.position(t, name, p)
	if pf := c.Parts[p]; pf != nil && pf.Raw != "" {
		return &pf.State, max(pf.State.Start, t.Parts[p].Start)
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
	for i := range t.Parts {
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
		if to := min(start+s.shWindow(), t.Parts[p].End); m.end() < to {
			recs := t.Parts[p].Recs
			if i := sort.Search(len(recs), func(i int) bool { return recs[i].Base+recs[i].Count() >= to }); i < len(recs) {
				to = recs[i].Base + recs[i].Count()
			}
			jobs = append(jobs, job{p, m.end(), to})
		}
	}
	room := shBodyCache - s.shc.bodies
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
