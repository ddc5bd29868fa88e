package pebblestore

import (
	"sync/atomic"
	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sharedrec"
	"topicgate/topicstore/sharedcore"

	"github.com/cockroachdb/pebble"
)

// Making shared-consumer state durable: the state records, written
// with the commit that changed them or deferred to the next WAL sync,
// and the DDL that creates or drops a consumer's records.

// sharedPersist writes eff's delivery counts and finished states and the
// advanced starts of m into a batch applied in order (under m.mu) with
// Sync; the caller waits for the fsync with wait() after unlocking m.
// Pebble groups concurrent syncs. It also wakes m's waiters if the step
// may have made a message available (sharedcore.Core.Freed).
func (s *PebbleStore) sharedPersist(m *shMgr, eff *sharedcore.Effects) (wait func() error, err error) {
	b := s.sharedBatch(m, eff)
	if b == nil {
		return noWait, nil
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

// sharedPersistDeferred is sharedPersist with the sync left to wait: the
// batch is applied without one, and wait syncs the WAL unless a sync
// issued since has covered it (syncTo). Acknowledgements use it: the
// statements of a pipeline (and of concurrent sessions) then share one
// fsync at the durability barrier, where each synced batch would have
// waited for the fsync after the one its predecessor started.
func (s *PebbleStore) sharedPersistDeferred(m *shMgr, eff *sharedcore.Effects) (wait func() error, err error) {
	b := s.sharedBatch(m, eff)
	if b == nil {
		return noWait, nil
	}
	defer b.Close()
	if err := b.Commit(pebble.NoSync); err != nil {
		s.fail(err)
		return nil, s.err()
	}
	ticket := s.walT.applied.Add(1)
	return func() error { return s.syncTo(ticket) }, nil
}

// walTickets number the batches sharedPersistDeferred applied (applied)
// and record how far a finished sync is known to have covered them
// (synced).
type walTickets struct{ applied, synced atomic.Uint64 }

// syncTo returns once the deferred batch with ticket t (and every batch
// applied before it) is durable: at once if a sync issued after it was
// applied has finished, else after syncing the WAL with an empty synced
// record (the WAL is sequential: a sync covers everything written before
// it, also across a WAL switch, which syncs the old file first).
func (s *PebbleStore) syncTo(t uint64) error {
	if s.walT.synced.Load() >= t {
		return nil
	}
	if err := s.err(); err != nil {
		return err
	}
	cur := s.walT.applied.Load() // every ticket up to cur is in the WAL now
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.LogData(nil, nil)
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		s.fail(err)
		return s.err()
	}
	if err := b.SyncWait(); err != nil {
		s.fail(err)
		return s.err()
	}
	for {
		old := s.walT.synced.Load()
		if old >= cur || s.walT.synced.CompareAndSwap(old, cur) {
			return nil
		}
	}
}

// sharedBatch builds the batch of sharedPersist (nil if there is nothing
// to write) and wakes m's waiters if the step freed a message.
func (s *PebbleStore) sharedBatch(m *shMgr, eff *sharedcore.Effects) *pebble.Batch {
	m.counts.noteFinished(eff)
	var b *pebble.Batch
	batch := func() *pebble.Batch {
		if b == nil {
			b = s.db.NewBatch()
		}
		return b
	}
	for pi, p := range m.core.Parts {
		full, start := len(p.Ents) >= m.core.Window, p.Start
		p.Advance()
		if full && p.Start > start {
			m.core.Freed = true // the window moves on: messages beyond it may load
		}
		sharedrec.WritePart(batch, m.id, m.consumer, pi, p)
	}
	sharedrec.WriteCounts(batch, m.id, m.consumer, &m.core, eff.Counts)
	if m.core.Freed {
		m.core.Freed = false
		m.signal()
	}
	sharedrec.WriteFinished(batch, m.id, m.consumer, &m.core, eff.Finished)
	return b
}

// sharedDDL is called by AlterTopic (cfg = the new config) and DropTopic
// (cfg = nil) on the committer goroutine, before the DDL batch b is synced:
// it adds to b the deletion of the shared state of every shared consumer
// the change drops (or turns into a streaming one), marks their managers
// dead and holds new loads of old's consumers back until the new topic
// version is installed (so no load reads the state being deleted). The
// caller must call thaw once the DDL has ended (the new version installed,
// or the DDL failed): it lets the held loads go on and wakes the readers
// waiting on the topic's managers (the config they wait under may have
// changed, a dropped consumer's readers get their error).
func (s *PebbleStore) sharedDDL(b *pebble.Batch, old *topic, cfg *topicstore.TopicConfig) (thaw func()) {
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
		_ = b.DeleteRange(keys.Topic(keys.PrefixShared, old.id), keys.Topic(keys.PrefixShared, old.id+1), nil)
	}
	reg := &s.shared
	wakeAll := func() {
		reg.mu.Lock()
		var ms []*shMgr
		for k, m := range reg.mgrs {
			if k.id == old.id {
				ms = append(ms, m)
			}
		}
		reg.mu.Unlock()
		for _, m := range ms {
			m.signal()
		}
	}
	if len(dropped) == 0 && cfg != nil {
		return wakeAll
	}
	var dead []*shMgr
	reg.mu.Lock()
	if reg.frozen == nil {
		reg.frozen = map[uint64]*frozenTopic{}
	}
	f := &frozenTopic{t: old, done: make(chan struct{})}
	reg.frozen[old.id] = f
	for _, name := range dropped {
		pre := keys.SharedPrefix(old.id, name)
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
	return func() {
		close(f.done)
		for _, m := range dead {
			m.signal()
		}
		wakeAll()
	}
}

func findConsumerCfg(cfg *topicstore.TopicConfig, name string) *topicstore.ConsumerConfig {
	for i := range cfg.Consumers {
		if cfg.Consumers[i].Name == name {
			return &cfg.Consumers[i]
		}
	}
	return nil
}
