package sysview

import (
	"context"
	"slices"
	"sync"
	"time"

	"topicgate/topicstore"
)

// ConsumerState is one (topic, consumer, partition)'s position and lag,
// as sys.consumers shows it and /metrics exports it. Shared is set for a
// shared consumer (its committed offset is the first unfinished message).
type ConsumerState struct {
	Topic, Consumer string
	Important       bool
	Partition       int32
	Committed, End  int64
	LagTime         time.Duration // age of the oldest uncommitted (unfinished) message; 0 if none
	LagKnown        bool          // false: the message at the committed offset could not be read
	Holder          uint32        // read session of this process holding the partition (streaming), 0 if none
	Shared          *topicstore.SharedPartitionStats
}

// ConsumerStates computes every consumer partition's state of topics as
// of now (the views' clock): one position read per consumer and, per
// partition that lags, one seek to read its oldest uncommitted message's
// write time (lagSeeks of them at once). It runs when sys.consumers is read or /metrics is scraped,
// never on a statement's path.
func (v *Views) ConsumerStates(topics []topicstore.TopicInfo) []ConsumerState {
	now := v.clock()
	var out []ConsumerState
	var seeks []int // the states whose lag in time needs a read
	for _, t := range topics {
		end := map[int32]int64{}
		for _, p := range t.Partitions {
			end[p.ID] = p.EndOffset
		}
		for _, c := range t.Config.Consumers {
			if c.Shared {
				stats, err := v.store.SharedStats(t.Config.Name, c.Name)
				if err != nil {
					continue
				}
				for i := range stats {
					st := &stats[i]
					cs := ConsumerState{Topic: t.Config.Name, Consumer: c.Name, Important: c.Important, Partition: st.Partition,
						Committed: st.StartOffset, End: end[st.Partition], LagKnown: true, Shared: st}
					if !st.OldestUnacked.IsZero() {
						cs.LagTime = max(now.Sub(st.OldestUnacked), 0)
					}
					out = append(out, cs)
				}
				continue
			}
			pos, err := v.store.Positions(t.Config.Name, c.Name)
			if err != nil {
				continue
			}
			for _, p := range t.Partitions {
				cs := ConsumerState{Topic: t.Config.Name, Consumer: c.Name, Important: c.Important, Partition: p.ID,
					Committed: pos[p.ID], End: p.EndOffset, LagKnown: true, Holder: v.local.Holder(t.Config.Name, c.Name, p.ID)}
				if cs.End > cs.Committed {
					seeks = append(seeks, len(out))
				}
				out = append(out, cs)
			}
		}
	}
	v.lagTimes(out, seeks, now)
	return out
}

// lagSeeks bounds how many partitions' oldest uncommitted messages
// lagTimes reads at once: on a cluster each is a read from the stream
// (a round trip), and a topic of 64 lagging partitions read one after
// the other cost ~40 ms.
const lagSeeks = 8

// lagTimes fills in the lag in time of the states at the indexes seeks
// of out: the age of each one's oldest uncommitted message, read
// lagSeeks at a time.
func (v *Views) lagTimes(out []ConsumerState, seeks []int, now time.Time) {
	sem := make(chan struct{}, lagSeeks)
	var wg sync.WaitGroup
	for _, i := range seeks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			cs := &out[i]
			wt, ok := v.writtenAt(cs.Topic, cs.Partition, cs.Committed)
			cs.LagKnown = ok
			if ok {
				cs.LagTime = max(now.Sub(wt), 0)
			}
		})
	}
	wg.Wait()
}

// consumerRows builds sys.consumers: one row per (topic, consumer,
// partition) with the committed offset, the lag, the SQL read session
// holding the partition and the Kafka group member (of the group named
// as the consumer, on this gateway) assigned it; a shared consumer's
// rows describe its acquisition window and count what did not end in an
// ack.
func (v *Views) consumerRows(topics []topicstore.TopicInfo) [][]any {
	var rows [][]any
	var remote map[heldKey]remoteHolder // asked for once a partition held by no session here shows up
	asked := false
	members := v.kafkaMembers()
	for _, cs := range v.ConsumerStates(topics) {
		var lagTime any
		if cs.LagKnown {
			lagTime = cs.LagTime
		}
		if st := cs.Shared; st != nil {
			var oldest, dlqErr any
			if !st.OldestUnacked.IsZero() {
				oldest = cs.LagTime
			}
			if st.DeadLetterError != "" {
				dlqErr = st.DeadLetterError
			}
			rows = append(rows, []any{cs.Topic, cs.Consumer, "shared", cs.Important, int64(cs.Partition), cs.Committed,
				cs.End, cs.End - cs.Committed, lagTime, nil, st.Available, st.Acquired, st.Delayed, st.Archived, oldest,
				st.ArchivedTotal, st.DeadLettered, st.DeadLetterFailures, dlqErr, nil, nil})
			continue
		}
		var holder, gateway any
		switch {
		case cs.Holder != 0:
			holder = int64(cs.Holder)
			gateway = nullText(v.gatewayID)
		case v.gather != nil:
			if !asked {
				remote, asked = v.remoteHolders(), true
			}
			if h, ok := remote[heldKey{cs.Topic, cs.Consumer, cs.Partition}]; ok {
				holder, gateway = h.pid, h.gateway
			}
		}
		member := nullText(members[heldKey{cs.Topic, cs.Consumer, cs.Partition}])
		rows = append(rows, []any{cs.Topic, cs.Consumer, "streaming", cs.Important, int64(cs.Partition), cs.Committed,
			cs.End, cs.End - cs.Committed, lagTime, holder, nil, nil, nil, nil, nil, nil, nil, nil, nil, gateway, member})
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
func (v *Views) writtenAt(topic string, part int32, offset int64) (time.Time, bool) {
	if wa, ok := v.store.(topicstore.WrittenAter); ok {
		return wa.WrittenAt(topic, part, offset)
	}
	var t time.Time
	found := false
	_ = v.store.Scan(context.Background(), topic, topicstore.ScanRange{Partition: part, Start: offset, End: -1}, func(m *topicstore.Message) bool {
		t, found = m.WrittenAt, true
		return false
	})
	return t, found
}

// deliveryRows builds sys.consumer_deliveries: each shared consumer's
// partitions' unfinished messages by delivery count, in order.
func (v *Views) deliveryRows(topics []topicstore.TopicInfo) [][]any {
	var rows [][]any
	for _, t := range topics {
		for _, c := range t.Config.Consumers {
			if !c.Shared {
				continue
			}
			stats, err := v.store.SharedStats(t.Config.Name, c.Name)
			if err != nil {
				continue
			}
			for _, st := range stats {
				counts := make([]int32, 0, len(st.Deliveries))
				for d := range st.Deliveries {
					counts = append(counts, d)
				}
				slices.Sort(counts)
				for _, d := range counts {
					rows = append(rows, []any{t.Config.Name, c.Name, int64(st.Partition), int64(d), st.Deliveries[d]})
				}
			}
		}
	}
	return rows
}
