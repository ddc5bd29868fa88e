package pebblestore

import (
	"topicgate/topicstore"
	"topicgate/topicstore/pebblestore/internal/sequencer"
)

// Change notification for long-polling readers. A topic has at most one
// channel, created lazily by Changed and closed (and forgotten) by the
// syncer's publish step after the fsync of a group that appended to the
// topic, or by DropTopic. With nobody waiting, publish costs one atomic load.

// Changed returns a channel closed the next time new messages of the topic
// become visible, or when the topic is dropped or the store closed. Check for data after
// calling it, then wait: nothing published in between is missed.
func (s *PebbleStore) Changed(topic string) (<-chan struct{}, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	t, err := s.lookup(topic)
	if err != nil {
		return nil, err
	}
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	if ch := s.notify[t.id]; ch != nil {
		return ch, nil
	}
	if err := s.err(); err != nil { // Close fails the store, then wakes all
		return nil, err
	}
	// DropTopic removes the topic from byID before it wakes waiters: if it
	// is still there, the drop's wake has not run and will close ch.
	s.mu.RLock()
	alive := s.byID[t.id] != nil
	s.mu.RUnlock()
	if !alive {
		return nil, topicstore.ErrTopicNotFound
	}
	if s.notify == nil {
		s.notify = map[uint64]chan struct{}{}
	}
	ch := make(chan struct{})
	s.notify[t.id] = ch
	s.waiters.Add(1)
	return ch, nil
}

// notifyTopics wakes the waiters of the topics of a published group.
func (s *PebbleStore) notifyTopics(ps []sequencer.Published) {
	if s.waiters.Load() == 0 {
		return
	}
	var last uint64
	for _, pb := range ps {
		if pb.TopicID != last {
			s.wake(pb.TopicID)
			last = pb.TopicID
		}
	}
}

// wake closes and forgets the topic's channel, if any.
func (s *PebbleStore) wake(id uint64) {
	s.notifyMu.Lock()
	if ch := s.notify[id]; ch != nil {
		close(ch)
		delete(s.notify, id)
		s.waiters.Add(-1)
	}
	s.notifyMu.Unlock()
}

// wakeAll closes every channel (at Close).
func (s *PebbleStore) wakeAll() {
	s.notifyMu.Lock()
	for id, ch := range s.notify {
		close(ch)
		delete(s.notify, id)
		s.waiters.Add(-1)
	}
	s.notifyMu.Unlock()
}
