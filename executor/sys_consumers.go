package executor

import (
	"context"
	"time"

	"topicgate/topicstore"
)

// consumerState is one (topic, consumer, partition)'s position and lag,
// as sys.consumers shows it and /metrics exports it. Shared is set for a
// shared consumer (its committed offset is the first unfinished message).
type consumerState struct {
	topic, consumer string
	important       bool
	partition       int32
	committed, end  int64
	lagTime         time.Duration // age of the oldest uncommitted (unfinished) message; 0 if none
	lagKnown        bool          // false: the message at the committed offset could not be read
	holder          uint32        // read session holding the partition (streaming), 0 if none
	shared          *topicstore.SharedPartitionStats
}

// consumerStates computes every consumer partition's state of topics as
// of now: one position read per consumer and, per partition that lags,
// one seek to read its oldest uncommitted message's write time. It runs
// when sys.consumers is read or /metrics is scraped, never on a
// statement's path.
func (e *Engine) consumerStates(topics []topicstore.TopicInfo, now time.Time) []consumerState {
	var out []consumerState
	for _, t := range topics {
		end := map[int32]int64{}
		for _, p := range t.Partitions {
			end[p.ID] = p.EndOffset
		}
		for _, c := range t.Config.Consumers {
			if c.Shared {
				stats, err := e.store.SharedStats(t.Config.Name, c.Name)
				if err != nil {
					continue
				}
				for i := range stats {
					st := &stats[i]
					cs := consumerState{topic: t.Config.Name, consumer: c.Name, important: c.Important, partition: st.Partition,
						committed: st.StartOffset, end: end[st.Partition], lagKnown: true, shared: st}
					if !st.OldestUnacked.IsZero() {
						cs.lagTime = max(now.Sub(st.OldestUnacked), 0)
					}
					out = append(out, cs)
				}
				continue
			}
			pos, err := e.store.Positions(t.Config.Name, c.Name)
			if err != nil {
				continue
			}
			g := e.groups.Get(t.Config.Name, c.Name)
			for _, p := range t.Partitions {
				cs := consumerState{topic: t.Config.Name, consumer: c.Name, important: c.Important, partition: p.ID,
					committed: pos[p.ID], end: p.EndOffset, lagKnown: true, holder: g.Holder(p.ID)}
				if cs.end > cs.committed {
					wt, ok := e.writtenAt(t.Config.Name, p.ID, cs.committed)
					cs.lagKnown = ok
					if ok {
						cs.lagTime = max(now.Sub(wt), 0)
					}
				}
				out = append(out, cs)
			}
		}
	}
	return out
}

// consumerRows builds sys.consumers: one row per (topic, consumer,
// partition) with the committed offset, the lag and the read session
// holding the partition; a shared consumer's rows describe its
// acquisition window and count what did not end in an ack.
func (s *Session) consumerRows(topics []topicstore.TopicInfo) [][]any {
	var rows [][]any
	var remote map[heldKey]remoteHolder // asked for once a partition held by no session here shows up
	asked := false
	for _, cs := range s.eng.consumerStates(topics, s.eng.opts.Clock()) {
		var lagTime any
		if cs.lagKnown {
			lagTime = cs.lagTime
		}
		if st := cs.shared; st != nil {
			var oldest, dlqErr any
			if !st.OldestUnacked.IsZero() {
				oldest = cs.lagTime
			}
			if st.DeadLetterError != "" {
				dlqErr = st.DeadLetterError
			}
			rows = append(rows, []any{cs.topic, cs.consumer, "shared", cs.important, int64(cs.partition), cs.committed,
				cs.end, cs.end - cs.committed, lagTime, nil, st.Available, st.Acquired, st.Delayed, st.Archived, oldest,
				st.ArchivedTotal, st.DeadLettered, st.DeadLetterFailures, dlqErr, nil})
			continue
		}
		var holder, gateway any
		switch {
		case cs.holder != 0:
			holder = int64(cs.holder)
			gateway = nullText(s.eng.gatewayID)
		case s.eng.gather != nil:
			if !asked {
				remote, asked = s.remoteHolders(), true
			}
			if h, ok := remote[heldKey{cs.topic, cs.consumer, cs.partition}]; ok {
				holder, gateway = h.pid, h.gateway
			}
		}
		rows = append(rows, []any{cs.topic, cs.consumer, "streaming", cs.important, int64(cs.partition), cs.committed,
			cs.end, cs.end - cs.committed, lagTime, holder, nil, nil, nil, nil, nil, nil, nil, nil, nil, gateway})
	}
	return rows
}

// consumerOptionRows builds sys.consumer_options: every consumer option
// in effect, one row per consumer.
func consumerOptionRows(topics []topicstore.TopicInfo) [][]any {
	exists := map[string]bool{}
	for _, t := range topics {
		exists[t.Config.Name] = true
	}
	var rows [][]any
	for _, t := range topics {
		for _, c := range t.Config.Consumers {
			row := []any{t.Config.Name, c.Name, "streaming", c.Important, nullTime(c.ReadFrom), c.AvailabilityPeriod,
				codecNames(c.SupportedCodecs), nil, nil, nil, nil, nil, nil, nil}
			if c.Shared {
				timeout := c.ProcessingTimeout
				if timeout <= 0 {
					timeout = topicstore.DefaultProcessingTimeout
				}
				policy := c.DeadLetterPolicy
				if policy == "" {
					policy = "none"
				}
				var dlq, dlqExists any
				if c.DeadLetterQueue != "" {
					dlq, dlqExists = c.DeadLetterQueue, exists[c.DeadLetterQueue]
				}
				row[2] = "shared"
				row[7], row[8], row[9], row[10], row[11] = timeout, int64(c.MaxProcessingAttempts), policy, dlq, dlqExists
				row[12], row[13] = c.KeepMessagesOrder, c.ReceiveMessageDelay
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// writtenAt returns the write time of the message at offset.
func (e *Engine) writtenAt(topic string, part int32, offset int64) (time.Time, bool) {
	var t time.Time
	found := false
	_ = e.store.Scan(context.Background(), topic, topicstore.ScanRange{Partition: part, Start: offset, End: -1}, func(m *topicstore.Message) bool {
		t, found = m.WrittenAt, true
		return false
	})
	return t, found
}
