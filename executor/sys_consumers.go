package executor

import (
	"context"
	"sort"
	"strings"
	"time"

	"topicgate/planner"
	"topicgate/topicstore"
)

// consumerRows builds sys.consumers: one row per (topic, consumer,
// partition) with the committed offset, the lag and the read session
// holding the partition.
func (s *Session) consumerRows(topics []topicstore.TopicInfo) [][]any {
	now := s.eng.opts.Clock()
	var rows [][]any
	for _, t := range topics {
		for _, c := range t.Config.Consumers {
			if c.Shared {
				rows = append(rows, s.sharedConsumerRows(t, c.Name, now)...)
				continue
			}
			pos, err := s.eng.store.Positions(t.Config.Name, c.Name)
			if err != nil {
				continue
			}
			typ := "streaming"
			if c.Shared {
				typ = "shared"
			}
			g := s.eng.groups.get(t.Config.Name, c.Name)
			for _, p := range t.Partitions {
				committed := pos[p.ID]
				lag := p.EndOffset - committed
				var lagTime any
				if lag > 0 {
					if wt, ok := s.writtenAt(t.Config.Name, p.ID, committed); ok {
						lagTime = max(now.Sub(wt), 0)
					}
				} else {
					lagTime = time.Duration(0)
				}
				var holder any
				if h := g.holder(p.ID); h != 0 {
					holder = int64(h)
				}
				rows = append(rows, []any{t.Config.Name, c.Name, typ, c.Important, int64(p.ID), committed,
					p.EndOffset, lag, lagTime, holder, nil, nil, nil, nil, nil})
			}
		}
	}
	return rows
}

// writtenAt returns the write time of the message at offset.
func (s *Session) writtenAt(topic string, part int32, offset int64) (time.Time, bool) {
	var t time.Time
	found := false
	_ = s.eng.store.Scan(context.Background(), topic, topicstore.ScanRange{Partition: part, Start: offset, End: -1}, func(m *topicstore.Message) bool {
		t, found = m.WrittenAt, true
		return false
	})
	return t, found
}

// sessionRows builds sys.sessions from the engine's live sessions.
func (s *Session) sessionRows() [][]any {
	now := s.eng.opts.Clock()
	reading := map[uint32][]string{}
	s.eng.groups.mu.Lock()
	for k, g := range s.eng.groups.groups {
		g.mu.Lock()
		by := map[uint32][]int32{}
		for p, pid := range g.owner {
			by[pid] = append(by[pid], p)
		}
		g.mu.Unlock()
		for pid, ps := range by {
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			parts := make([]string, len(ps))
			for i, p := range ps {
				parts[i] = planner.FormatText(int64(p))
			}
			reading[pid] = append(reading[pid], k.topic+"/"+k.consumer+":"+strings.Join(parts, ","))
		}
	}
	s.eng.groups.mu.Unlock()
	var rows [][]any
	s.eng.sessions.Range(func(_, v any) bool {
		o := v.(*Session)
		state, txnID, age, msgs, bytes := "idle", any(nil), any(nil), any(nil), any(nil)
		if st := o.status.Load(); st != nil {
			state = "idle in transaction"
			if st.failed {
				state = "idle in failed transaction"
			}
			txnID, age, msgs, bytes = int64(st.id), max(now.Sub(st.started), 0), int64(st.messages), st.bytes
		}
		if o.active.Load() {
			state = "active"
		}
		app := ""
		if p := o.appName.Load(); p != nil {
			app = *p
		}
		r := reading[o.info.ProcessID]
		sort.Strings(r)
		rows = append(rows, []any{int64(o.info.ProcessID), o.info.User, o.info.Database, app, o.info.RemoteAddr,
			state, txnID, age, msgs, bytes, strings.Join(r, " ")})
		return true
	})
	sort.Slice(rows, func(i, j int) bool { return rows[i][0].(int64) < rows[j][0].(int64) })
	return rows
}

// transactionRows builds sys.transactions: the open transaction blocks of
// every session, from their published snapshots (the calling session's own
// transaction included, as of its previous statement).
func (s *Session) transactionRows() [][]any {
	now := s.eng.opts.Clock()
	var rows [][]any
	s.eng.sessions.Range(func(_, v any) bool {
		o := v.(*Session)
		st := o.status.Load()
		if st == nil {
			return true
		}
		state := "open"
		if st.failed {
			state = "failed"
		}
		rows = append(rows, []any{int64(st.id), int64(o.info.ProcessID), state, max(now.Sub(st.started), 0),
			int64(st.messages), st.bytes, strings.Join(st.topics, ","), strings.Join(st.reads, ",")})
		return true
	})
	sort.Slice(rows, func(i, j int) bool { return rows[i][0].(int64) < rows[j][0].(int64) })
	return rows
}

// sharedConsumerRows builds the sys.consumers rows of a shared consumer:
// the committed offset is the first unfinished message, and the counts
// describe the acquisition window.
func (s *Session) sharedConsumerRows(t topicstore.TopicInfo, consumer string, now time.Time) [][]any {
	stats, err := s.eng.store.SharedStats(t.Config.Name, consumer)
	if err != nil {
		return nil
	}
	end := map[int32]int64{}
	for _, p := range t.Partitions {
		end[p.ID] = p.EndOffset
	}
	var rows [][]any
	for _, st := range stats {
		var oldest, lagTime any
		if !st.OldestUnacked.IsZero() {
			oldest = max(now.Sub(st.OldestUnacked), 0)
			lagTime = oldest
		} else {
			lagTime = time.Duration(0)
		}
		rows = append(rows, []any{t.Config.Name, consumer, "shared", false, int64(st.Partition), st.StartOffset,
			end[st.Partition], end[st.Partition] - st.StartOffset, lagTime, nil,
			st.Available, st.Acquired, st.Delayed, st.Archived, oldest})
	}
	return rows
}
