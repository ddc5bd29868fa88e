package topicstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
)

// Shared consumers (queue semantics: YDB shared consumers, Kafka share
// groups, SQS).
//
// Per (topic, shared consumer) a manager (shMgr, its own mutex, not the
// committer) holds, per partition, an acquisition window: the offsets from
// the first unfinished message (start) up to start + Options.SharedWindow
// (default 1000) and the visible end. Each window entry is available,
// acquired (by a session, until a deadline), pending (in a commit or a
// dead-letter move), acknowledged or archived, plus the message's
// written_at, delay and group (no body). The window only moves when its
// first messages finish, so memory per partition is bounded by the window
// size, and so is the number of messages acquired at once. The decisions
// are the deterministic core's (shared_core.go; keep_messages_order
// across splits in shared_order.go); this file and
// shared_ops.go do the I/O: window fills and message reads with Scan,
// persistence, dead-letter moves.
//
// Only finished states are persisted (synced before the caller is told):
//
//	k/<topicID u64><consumer>\x00<partition u32>              -> uvarint start
//	k/<topicID u64><consumer>\x00<partition u32><offset u64>  -> 1 byte: acked (3) / archived (4)
//
// A manager's batches are applied in order under its mutex
// (ApplyNoSyncWait) and their fsyncs awaited after it is released, so
// concurrent actions share fsyncs. The start record advances past
// contiguous finished offsets and the finished records below it are
// deleted in the same batch (point deletes: range tombstones in the
// memtable would slow every iterator of the store down); a finished record
// is only written if the start does not pass its offset in the same batch.
// A manager is loaded lazily on the first use of its consumer after Open; a
// partition without a start record starts at the consumer's committed
// position (read_from). SharedAction stores the starts as the consumer's
// committed positions every 256 offsets and when a window drains, so
// retention's important / availability_period rules see the progress.
//
// Locks and delivery counts live in memory only: after a restart every
// unfinished message is available again and its delivery count restarts at
// 0 (so MaxProcessingAttempts counts deliveries since the last restart).
// Lock expiry is lazy: Acquire, SharedAction, ReleaseSession and
// SharedStats first return expired locks to the queue, as of the store's
// clock. shared_counts.go counts, per partition, the messages archived,
// moved to the dead_letter_queue and the failed moves (logged once per
// message through Options.Logger), for SharedStats. Dropping a shared consumer (or the topic, or turning it into a
// streaming consumer) deletes its state in the DDL batch (sharedDDL).

// ErrNotShared: a shared-consumer operation named a streaming consumer.
var ErrNotShared = errors.New("consumer is not a shared consumer")

const prefixShared = "k/"

var bgCtx = context.Background()

func sharedPrefix(id uint64, consumer string) []byte {
	k := append(topicPrefix(prefixShared, id), consumer...)
	return append(k, 0)
}

func sharedStartKey(id uint64, consumer string, part int32) []byte {
	return binary.BigEndian.AppendUint32(sharedPrefix(id, consumer), uint32(part))
}

func sharedDoneKey(id uint64, consumer string, part int32, off int64) []byte {
	return binary.BigEndian.AppendUint64(sharedStartKey(id, consumer, part), uint64(off))
}

type shKey struct {
	id       uint64
	consumer string
}

// sharedRegistry is the PebbleStore's set of managers (zero value ready).
type sharedRegistry struct {
	mu     sync.Mutex
	mgrs   map[shKey]*shMgr
	frozen map[uint64]*topic // a DDL is dropping shared state of this topic version
}

// shMgr is one (topic, shared consumer)'s state.
type shMgr struct {
	mu       sync.Mutex
	dead     bool // consumer or topic dropped
	id       uint64
	consumer string
	t        *topic // the topic version cfg came from
	core     shCore
	posMu    sync.Mutex // serializes position updates (sharedSyncPositions)
	posSent  []int64    // per partition: the start last stored as the position
	counts   shCounters // archived / dead-lettered counters (shared_counts.go), under mu
}

func (s *PebbleStore) sharedWindow() int {
	if s.opts.SharedWindow > 0 {
		return s.opts.SharedWindow
	}
	return DefaultSharedWindow
}

func findConsumer(t *topic, name string) *ConsumerConfig {
	for i := range t.cfg.Consumers {
		if t.cfg.Consumers[i].Name == name {
			return &t.cfg.Consumers[i]
		}
	}
	return nil
}

// sharedMgr returns the topic and the consumer's manager, locked.
func (s *PebbleStore) sharedMgr(topicName, consumer string) (*topic, *shMgr, error) {
	reg := &s.shared
	for {
		if err := s.err(); err != nil {
			return nil, nil, err
		}
		t, err := s.lookup(topicName)
		if err != nil {
			return nil, nil, err
		}
		key := shKey{t.id, consumer}
		reg.mu.Lock()
		if f := reg.frozen[t.id]; f == t {
			reg.mu.Unlock()
			time.Sleep(time.Millisecond) // a DDL drops this consumer's state; wait for it
			continue
		} else if f != nil {
			delete(reg.frozen, t.id)
		}
		m := reg.mgrs[key]
		reg.mu.Unlock()
		if m == nil {
			cc := findConsumer(t, consumer)
			if cc == nil {
				return nil, nil, fmt.Errorf("%w: topic %q consumer %q", ErrConsumerNotFound, topicName, consumer)
			}
			if !cc.Shared {
				return nil, nil, fmt.Errorf("%w: topic %q consumer %q", ErrNotShared, topicName, consumer)
			}
			if m, err = s.loadShared(t, cc); err != nil {
				return nil, nil, err
			}
			if testHookSharedLoaded != nil {
				testHookSharedLoaded()
			}
			reg.mu.Lock()
			// Register only a manager loaded from the installed version. A
			// DDL that dropped the consumer meanwhile has either frozen t
			// (not yet replaced) or replaced it; checking frozen alone is
			// not enough, because a reader that saw the new version clears
			// the flag, and a manager of the dropped consumer would then
			// outlive it, locks and all, into a re-created one.
			if reg.frozen[t.id] == t || !s.isInstalled(t) {
				reg.mu.Unlock()
				continue
			}
			if old := reg.mgrs[key]; old != nil {
				m = old
			} else {
				if reg.mgrs == nil {
					reg.mgrs = map[shKey]*shMgr{}
				}
				reg.mgrs[key] = m
			}
			reg.mu.Unlock()
		}
		m.mu.Lock()
		if m.dead {
			m.mu.Unlock()
			continue
		}
		if m.t != t { // the topic was altered: refresh config and partitions
			cc := findConsumer(t, consumer)
			if cc == nil || !cc.Shared { // (sharedDDL has marked m dead: not reached)
				m.mu.Unlock()
				if cc == nil {
					return nil, nil, fmt.Errorf("%w: topic %q consumer %q", ErrConsumerNotFound, topicName, consumer)
				}
				return nil, nil, fmt.Errorf("%w: topic %q consumer %q", ErrNotShared, topicName, consumer)
			}
			m.t, m.core.cfg = t, newShConfig(cc)
			m.core.tree = newShTree(t)
			for len(m.core.parts) < len(t.parts) {
				m.core.parts = append(m.core.parts, &shPart{})
			}
		}
		return t, m, nil
	}
}

// testHookSharedLoaded, when set by a test, runs between loading a
// manager and registering it.
var testHookSharedLoaded func()

// isInstalled reports whether t is the current version of its topic.
// Lock order: shared registry, then s.mu.
func (s *PebbleStore) isInstalled(t *topic) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byID[t.id] == t
}

// loadShared reads a consumer's persisted finished states.
func (s *PebbleStore) loadShared(t *topic, cc *ConsumerConfig) (*shMgr, error) {
	m := &shMgr{id: t.id, consumer: cc.Name, t: t,
		core: shCore{cfg: newShConfig(cc), window: s.sharedWindow(), parts: make([]*shPart, len(t.parts))}}
	for i := range m.core.parts {
		m.core.parts[i] = &shPart{}
	}
	m.core.tree = newShTree(t)
	pre := sharedPrefix(t.id, cc.Name)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: append(pre[:len(pre):len(pre)], 0xff)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()[len(pre):]
		if len(k) != 4 && len(k) != 12 {
			return nil, fmt.Errorf("%w: shared-consumer key %q", ErrCorrupt, it.Key())
		}
		pi := int(binary.BigEndian.Uint32(k))
		if pi >= len(m.core.parts) {
			continue
		}
		p := m.core.parts[pi]
		v := it.Value()
		if len(k) == 4 {
			start, n := binary.Uvarint(v)
			if n <= 0 {
				return nil, fmt.Errorf("%w: shared-consumer start %q", ErrCorrupt, it.Key())
			}
			p.start, p.persisted = int64(start), int64(start)
			continue
		}
		off := int64(binary.BigEndian.Uint64(k[4:]))
		if len(v) != 1 || off < p.start {
			p.stale = append(p.stale, off) // left by a crash before its delete
			continue
		}
		if p.done == nil {
			p.done = map[int64]uint8{}
		}
		p.done[off] = v[0]
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	// A consumer added with read_from starts where its position says.
	s.coreMu.Lock()
	if ct := s.core.Topics[t.id]; ct != nil {
		if pos := ct.Consumers[cc.Name]; pos != nil {
			m.posSent = make([]int64, len(m.core.parts))
			for pi, p := range m.core.parts {
				if pi < len(pos) {
					m.posSent[pi] = ct.committed(pos, int32(pi))
					p.dropBelow(m.posSent[pi])
				}
			}
		}
	}
	s.coreMu.Unlock()
	return m, nil
}

// fill drops what retention deleted from each window and loads message
// metadata up to start + window (and the visible end).
func (s *PebbleStore) sharedFill(t *topic, m *shMgr) error {
	c := &m.core
	for pi, p := range c.parts {
		tp := t.parts[pi]
		tp.mu.Lock()
		pstart := tp.start
		tp.mu.Unlock()
		p.dropBelow(pstart)
		p.advance()
		end := min(p.start+int64(c.window), tp.visibleEnd.Load())
		from := p.loadedEnd()
		if from >= end {
			continue
		}
		next := from
		err := s.Scan(bgCtx, t.cfg.Name, ScanRange{Partition: int32(pi), Start: from, End: end}, func(msg *Message) bool {
			for next < msg.Offset { // a gap (should not happen): count it as finished
				p.ents = append(p.ents, shEntry{state: shArchived})
				next++
			}
			e := shEntry{written: msg.WrittenAt.UnixNano(), delay: int64(msg.Delay), group: msg.MessageGroupID}
			if st, ok := p.done[msg.Offset]; ok {
				e.state, e.stored = st, true
				delete(p.done, msg.Offset)
			}
			p.ents = append(p.ents, e)
			next++
			return true
		})
		if err != nil {
			return err
		}
		p.advance()
	}
	return nil
}

// sharedPersist writes eff's finished states and the advanced starts of m
// into a batch applied in order (under m.mu) with Sync; the caller waits
// for the fsync with wait() after unlocking m. Pebble groups concurrent
// syncs.
func (s *PebbleStore) sharedPersist(m *shMgr, eff *shEffects) (wait func() error, err error) {
	m.counts.noteFinished(eff)
	var b *pebble.Batch
	batch := func() *pebble.Batch {
		if b == nil {
			b = s.db.NewBatch()
		}
		return b
	}
	for pi, p := range m.core.parts {
		p.advance()
		for _, off := range p.stale {
			_ = batch().Delete(sharedDoneKey(m.id, m.consumer, int32(pi), off), nil)
		}
		p.stale = p.stale[:0]
		if p.start > p.persisted {
			_ = batch().Set(sharedStartKey(m.id, m.consumer, int32(pi)), binary.AppendUvarint(nil, uint64(p.start)), nil)
			p.persisted = p.start
		}
	}
	for _, r := range eff.finished {
		if e := m.core.parts[r.part].at(r.off); e != nil {
			e.stored = true
			_ = batch().Set(sharedDoneKey(m.id, m.consumer, r.part, r.off), []byte{r.state}, nil)
		}
	}
	if b == nil {
		return func() error { return nil }, nil
	}
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		b.Close()
		s.fail(err)
		return nil, s.err()
	}
	return func() error {
		defer b.Close()
		if err := b.SyncWait(); err != nil {
			s.fail(err)
			return s.err()
		}
		return nil
	}, nil
}

// sharedDDL is called by AlterTopic (cfg = the new config) and DropTopic
// (cfg = nil) on the committer goroutine, before the DDL batch b is synced:
// it adds to b the deletion of the shared state of every shared consumer
// the change drops (or turns into a streaming one), marks their managers
// dead and holds new loads of old's consumers back until the new topic
// version is installed (so no load reads the state being deleted).
func (s *PebbleStore) sharedDDL(b *pebble.Batch, old *topic, cfg *TopicConfig) {
	var dropped []string
	for _, c := range old.cfg.Consumers {
		if !c.Shared {
			continue
		}
		if cfg != nil {
			if nc := findConsumerCfg(cfg, c.Name); nc != nil && nc.Shared {
				continue
			}
		}
		dropped = append(dropped, c.Name)
	}
	if cfg == nil {
		_ = b.DeleteRange(topicPrefix(prefixShared, old.id), topicPrefix(prefixShared, old.id+1), nil)
	}
	if len(dropped) == 0 && cfg != nil {
		return
	}
	reg := &s.shared
	var dead []*shMgr
	reg.mu.Lock()
	if reg.frozen == nil {
		reg.frozen = map[uint64]*topic{}
	}
	reg.frozen[old.id] = old
	for _, name := range dropped {
		pre := sharedPrefix(old.id, name)
		if cfg != nil {
			_ = b.DeleteRange(pre, append(pre[:len(pre):len(pre)], 0xff), nil)
		}
		if m := reg.mgrs[shKey{old.id, name}]; m != nil {
			dead = append(dead, m)
			delete(reg.mgrs, shKey{old.id, name})
		}
	}
	reg.mu.Unlock()
	for _, m := range dead {
		m.mu.Lock() // waits for an operation in flight (its batch is applied before b)
		m.dead = true
		m.mu.Unlock()
	}
}

func findConsumerCfg(cfg *TopicConfig, name string) *ConsumerConfig {
	for i := range cfg.Consumers {
		if cfg.Consumers[i].Name == name {
			return &cfg.Consumers[i]
		}
	}
	return nil
}
