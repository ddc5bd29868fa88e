package pebblestore

import (
	"context"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sharedrec"
	"topicgate/topicstore/sharedcore"
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
// are the deterministic core's (package sharedcore; keep_messages_order
// across splits in its order.go); this file and
// shared_ops.go do the I/O: window fills and message reads with Scan,
// persistence, dead-letter moves.
//
// Finished states and delivery counts are persisted (synced before the
// caller is told, or before a delivery is shown to a client) in records
// that internal/sharedrec loads and writes:
//
//	k/<topicID u64><consumer>\x00<partition u32>              -> uvarint start
//	k/<topicID u64><consumer>\x00<partition u32><offset u64>  -> 1 byte: acked (3) / archived (4),
//	                                                            or 0, uvarint delivery count
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
// Delivery counts are durable (as Kafka's share-group state is): every
// acquisition writes the new count of each message it hands out into the
// manager's next batch, and AcquireAsync's wait (run before any row
// reaches the client: executor.WaitDurable) waits for its fsync, which
// concurrent acquisitions and acknowledgements share. A crash after the
// write and before the delivery only over-counts. A delivery handed back
// undelivered (ReleaseUndelivered) rewrites the lower count. Locks live in
// memory only: after a restart every unfinished message is available
// again with its stored count, a failed attempt, so a message whose
// MaxProcessingAttempts are used up gets the dead-letter policy when the
// window loads it (sharedcore.Core.Loaded). The count record is the message's
// finished record's key, overwritten by an ack or archive and deleted with
// it when the start passes it.
//
// Lock expiry is lazy: Acquire, SharedAction, ReleaseSession and
// SharedStats first return expired locks to the queue, as of the store's
// clock. Nothing polls: a reader that found nothing waits on the topic's
// Changed channel (publishes) and the manager's wake channel, closed when
// a step of the core may have made a message available (sharedcore.Core.Freed) or
// the consumer's config changed, with a timer set to the core's NextReady
// (the earliest lock deadline or end of a delay). Dropping a shared
// consumer (or the topic, or turning it into a streaming consumer) deletes
// its state in the DDL batch (sharedDDL). shared_counts.go counts, per
// partition, the messages archived, moved to the dead_letter_queue and the
// failed moves (logged once per message through Options.Logger), for
// SharedStats.

var bgCtx = context.Background()

type shKey struct {
	id       uint64
	consumer string
}

// sharedRegistry is the PebbleStore's set of managers (zero value ready).
type sharedRegistry struct {
	mu     sync.Mutex
	mgrs   map[shKey]*shMgr
	frozen map[uint64]*frozenTopic // a DDL is dropping shared state of this topic version
}

// frozenTopic holds loads of a topic version's managers back while a DDL
// drops shared state; done is closed when the DDL has ended (installed its
// new version, or failed the store).
type frozenTopic struct {
	t    *topic
	done chan struct{}
}

// shMgr is one (topic, shared consumer)'s state.
type shMgr struct {
	mu       sync.Mutex
	dead     bool // consumer or topic dropped
	id       uint64
	consumer string
	t        *topic // the topic version cfg came from
	core     sharedcore.Core
	posMu    sync.Mutex // serializes position updates (sharedSyncPositions)
	posSent  []int64    // per partition: the start last stored as the position
	counts   shCounters // archived / dead-lettered counters (shared_counts.go), under mu
	bodies   bodyCache  // copies of window messages the fill read (shared_bodies.go), under mu

	wakeMu sync.Mutex
	wakeCh chan struct{} // closed (and reset) by signal; nil: nobody waits
}

// wakeChan returns the channel the next signal closes.
func (m *shMgr) wakeChan() <-chan struct{} {
	m.wakeMu.Lock()
	defer m.wakeMu.Unlock()
	if m.wakeCh == nil {
		m.wakeCh = make(chan struct{})
	}
	return m.wakeCh
}

// signal wakes the readers waiting for messages of this consumer.
func (m *shMgr) signal() {
	m.wakeMu.Lock()
	if m.wakeCh != nil {
		close(m.wakeCh)
		m.wakeCh = nil
	}
	m.wakeMu.Unlock()
}

func (s *PebbleStore) sharedWindow() int {
	if s.opts.SharedWindow > 0 {
		return s.opts.SharedWindow
	}
	return sharedcore.DefaultWindow
}

func findConsumer(t *topic, name string) *topicstore.ConsumerConfig {
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
		if f := reg.frozen[t.id]; f != nil && f.t == t {
			reg.mu.Unlock()
			<-f.done // a DDL drops this consumer's state; wait for it to end
			continue
		} else if f != nil {
			delete(reg.frozen, t.id)
		}
		m := reg.mgrs[key]
		reg.mu.Unlock()
		if m == nil {
			cc := findConsumer(t, consumer)
			if cc == nil {
				return nil, nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topicName, consumer)
			}
			if !cc.Shared {
				return nil, nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrNotShared, topicName, consumer)
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
			if f := reg.frozen[t.id]; (f != nil && f.t == t) || !s.isInstalled(t) {
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
					return nil, nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topicName, consumer)
				}
				return nil, nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrNotShared, topicName, consumer)
			}
			m.t, m.core.Cfg = t, sharedcore.NewConfig(cc)
			m.core.Tree = newShTree(t)
			for len(m.core.Parts) < len(t.parts) {
				m.core.Parts = append(m.core.Parts, &sharedcore.Part{})
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
func (s *PebbleStore) loadShared(t *topic, cc *topicstore.ConsumerConfig) (*shMgr, error) {
	m := &shMgr{id: t.id, consumer: cc.Name, t: t,
		core: sharedcore.Core{Cfg: sharedcore.NewConfig(cc), Window: s.sharedWindow(), Parts: make([]*sharedcore.Part, len(t.parts))}}
	for i := range m.core.Parts {
		m.core.Parts[i] = &sharedcore.Part{}
	}
	m.core.Tree = newShTree(t)
	pre := keys.SharedPrefix(t.id, cc.Name)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: append(pre[:len(pre):len(pre)], 0xff)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if err := sharedrec.Load(it, pre, m.core.Parts); err != nil {
		return nil, err
	}
	// A consumer added with read_from starts where its position says.
	s.coreMu.Lock()
	if ct := s.core.Topics[t.id]; ct != nil {
		if pos := ct.Consumers[cc.Name]; pos != nil {
			m.posSent = make([]int64, len(m.core.Parts))
			for pi, p := range m.core.Parts {
				if pi < len(pos) {
					m.posSent[pi] = ct.Committed(pos, int32(pi))
					p.DropBelow(m.posSent[pi])
				}
			}
		}
	}
	s.coreMu.Unlock()
	return m, nil
}

// fill drops what retention deleted from each window and loads message
// metadata up to start + window (and the visible end), keeping a copy of
// each unfinished message it loads in the body cache as far as it fits.
// A message loaded with a durable delivery count may get the dead-letter
// policy at once (sharedcore.Core.Loaded): its effects land in eff.
//
// With lazy, a partition whose window is at least half loaded is left as
// it is, so that a partition is read in runs of half a window rather than
// once per acquisition (each read seeks and verifies a record batch);
// more then reports whether such a partition had messages left to load,
// for the caller to fill fully when what is loaded does not serve it.
func (s *PebbleStore) sharedFill(t *topic, m *shMgr, eff *sharedcore.Effects, lazy bool) (more bool, err error) {
	c := &m.core
	for pi, p := range c.Parts {
		tp := t.parts[pi]
		tp.mu.Lock()
		pstart := tp.start
		tp.mu.Unlock()
		p.DropBelow(pstart)
		p.Advance()
		m.bodies.trim(pi, p.Start)
		end := min(p.Start+int64(c.Window), tp.visibleEnd.Load())
		from := p.LoadedEnd()
		if from >= end {
			continue
		}
		if lazy && 2*(from-p.Start) >= int64(c.Window) {
			more = true
			continue
		}
		next := from
		err := s.Scan(bgCtx, t.cfg.Name, topicstore.ScanRange{Partition: int32(pi), Start: from, End: end}, func(msg *topicstore.Message) bool {
			for next < msg.Offset { // a gap (should not happen): count it as finished
				p.Append(sharedcore.Entry{State: sharedcore.Archived})
				next++
			}
			e := sharedcore.Entry{Written: msg.WrittenAt.UnixNano(), Delay: int64(msg.Delay), Group: msg.MessageGroupID}
			if rec, ok := p.Done[msg.Offset]; ok {
				e.State, e.Deliveries, e.Stored = rec.State, rec.Deliv, true
				delete(p.Done, msg.Offset)
			}
			if !e.Finished() {
				m.bodies.keep(pi, msg, c.Window)
			}
			p.Append(e)
			next++
			return true
		})
		if err != nil {
			return more, err
		}
		for off := from; off < next; off++ {
			if e := p.At(off); e != nil && e.Deliveries > 0 {
				c.Loaded(int32(pi), off, e, eff)
			}
		}
		p.Advance()
	}
	return more, nil
}
