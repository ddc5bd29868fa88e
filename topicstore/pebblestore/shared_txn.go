package pebblestore

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"

	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/keys"
	"topicgate/topicstore/pebblestore/internal/sharedrec"
	"topicgate/topicstore/sharedcore"
)

// sharedCommitAcks is for the committer (CommitRequest.Acks, acks inside a
// transaction). It checks that every ref is held by its session with a
// lock unexpired at now, pins those messages (no expiry, no other action
// while pinned), writes their ack records into b and returns apply, which
// the committer must call exactly once: apply(true) after b is applied and
// synced (the messages become acknowledged in memory), apply(false) if the
// commit fails (they are held again, as before). On error nothing is
// written or pinned; the error wraps ErrLockExpired (or ErrTopicNotFound,
// ErrConsumerNotFound, ErrNotShared).
//
// Wiring: call it on the committer goroutine while building a request's
// batch (after its other checks), fail the request with its error, and
// call apply from the syncer once the group's fsync is done. The start
// record is not advanced here; the next SharedAction's batch does it
// (ordered after b, since it only sees the acks after apply).
func (s *PebbleStore) sharedCommitAcks(b *pebble.Batch, acks []topicstore.SharedAck, now time.Time) (apply func(committed bool), err error) {
	type pin struct {
		m    *shMgr
		r    topicstore.MsgRef
		prev int64 // the lock deadline, restored on abort
	}
	var pins []pin
	undo := func(committed bool) {
		for _, p := range pins {
			p.m.mu.Lock()
			if e := p.m.core.Parts[p.r.Partition].At(p.r.Offset); e != nil && e.State == sharedcore.Pending && !p.m.dead {
				if committed {
					e.State, e.Holder, e.Deadline, e.Stored = sharedcore.Acked, sharedcore.Holder{}, 0, true
				} else {
					e.State, e.Deadline = sharedcore.Acquired, p.prev
					p.m.core.NoteDeadline(p.prev)
				}
			}
			p.m.mu.Unlock()
			if committed {
				p.m.signal() // an ordered group or the window may move on
			}
		}
	}
	var doneKeys [][]byte
	for _, a := range acks {
		_, m, err := s.sharedMgr(a.Topic, a.Consumer)
		if err != nil {
			undo(false)
			return nil, err
		}
		for _, r := range a.Refs {
			var e *sharedcore.Entry
			if r.Partition >= 0 && int(r.Partition) < len(m.core.Parts) {
				e = m.core.Parts[r.Partition].At(r.Offset)
			}
			if e == nil || !m.core.Held(now.UnixNano(), holder(a.Session), r) {
				m.mu.Unlock()
				undo(false)
				return nil, fmt.Errorf("%w: topic %q consumer %q partition %d offset %d session %d",
					topicstore.ErrLockExpired, a.Topic, a.Consumer, r.Partition, r.Offset, a.Session)
			}
			pins = append(pins, pin{m, r, e.Deadline})
			e.State = sharedcore.Pending
			doneKeys = append(doneKeys, keys.SharedDone(m.id, m.consumer, r.Partition, r.Offset))
		}
		m.mu.Unlock()
	}
	for _, k := range doneKeys {
		_ = b.Set(k, sharedrec.Acked(), nil)
	}
	return undo, nil
}
