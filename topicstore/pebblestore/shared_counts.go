package pebblestore

import (
	"topicgate/topicstore"
	"topicgate/topicstore/sharedcore"
)

// Shared consumers: what happened to the messages that did not end in an
// ack, for operators (sys.consumers, /metrics). A manager (shMgr) owns one
// shCounters, read and written only under the manager's mutex; the counts
// live in memory and start at zero when the manager is loaded (the first
// use of the consumer after Open), like Prometheus counters after a
// restart.
//
//   - archived: finished without an ack, counted when its archived record
//     is written (sharedPersist): a reject, a message out of attempts under
//     dead_letter_policy 'delete', or one moved to the dead_letter_queue;
//   - dead-lettered: published to the dead_letter_queue (then archived);
//   - failures: dead-letter moves whose publish failed (the message went
//     back to the queue), with the last failure's error. Each message whose
//     move failed is logged once (Options.Logger, warning level) until it
//     finishes, however often its move is retried.

// shPartCounts are one partition's counters.
type shPartCounts struct {
	archived, moved, failures int64
	lastErr                   string
}

// shCounters are one (topic, shared consumer)'s counters, per partition.
type shCounters struct {
	parts  []shPartCounts
	logged map[topicstore.MsgRef]struct{} // messages whose failed move was logged, until they finish
}

func (c *shCounters) part(p int32) *shPartCounts {
	for len(c.parts) <= int(p) {
		c.parts = append(c.parts, shPartCounts{})
	}
	return &c.parts[p]
}

// noteFinished counts the archived records eff persists and forgets the
// logged failures of every message eff finishes.
func (c *shCounters) noteFinished(eff *sharedcore.Effects) {
	for _, r := range eff.Finished {
		if r.State == sharedcore.Archived {
			c.part(r.Part).archived++
		}
		if c.logged != nil {
			delete(c.logged, topicstore.MsgRef{Partition: r.Part, Offset: r.Off})
		}
	}
}

// noteMove counts a dead-letter move's outcome and reports whether its
// failure is the message's first to be logged.
func (c *shCounters) noteMove(mv sharedcore.Ref, err error, parts []*sharedcore.Part) (logIt bool) {
	pc := c.part(mv.Part)
	if err == nil {
		pc.moved++
		return false
	}
	pc.failures++
	pc.lastErr = err.Error()
	ref := topicstore.MsgRef{Partition: mv.Part, Offset: mv.Off}
	if _, ok := c.logged[ref]; ok {
		return false
	}
	if c.logged == nil {
		c.logged = map[topicstore.MsgRef]struct{}{}
	}
	if len(c.logged) >= 4*sharedcore.DefaultWindow { // bound: forget what retention removed
		for r := range c.logged {
			if int(r.Partition) >= len(parts) || r.Offset < parts[r.Partition].Start {
				delete(c.logged, r)
			}
		}
	}
	c.logged[ref] = struct{}{}
	return true
}

// fill copies partition st.Partition's counters into st.
func (c *shCounters) fill(st *topicstore.SharedPartitionStats) {
	if int(st.Partition) >= len(c.parts) {
		return
	}
	pc := &c.parts[st.Partition]
	st.ArchivedTotal, st.DeadLettered, st.DeadLetterFailures, st.DeadLetterError = pc.archived, pc.moved, pc.failures, pc.lastErr
}

// logMoveFailure logs a message's first failed dead-letter move.
func (s *PebbleStore) logMoveFailure(topic, consumer, dlq string, mv sharedcore.Ref, err error) {
	s.opts.Logger.Warn("dead-letter move failed; the message stays in the queue and the move is retried after its next failed delivery",
		"topic", topic, "consumer", consumer, "partition", mv.Part, "offset", mv.Off,
		"dead_letter_queue", dlq, "error", err)
}
