package queue

import (
	"context"
	"sort"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/plan"
)

// fill loads the metadata of each partition's window (from its start up
// to Host.Window messages, within the visible end, to the end of the
// record batch that holds the window's last message, so that a window
// moving on by a few messages does not read that batch again) into the
// consumer's cache: Scan outside the host's lock, for what the cache
// lacks.
func (q *Queue) fill(ctx context.Context, topic, consumer string) error {
	type job struct {
		p        int32
		from, to int64
	}
	var jobs []job
	q.h.Lock()
	t, _, c, err := q.cfg.Caches.Lookup(q.cfg.Fold, topic, consumer)
	if err != nil {
		q.h.Unlock()
		return err
	}
	for i := range t.Parts {
		p := int32(i)
		_, start := plan.SharedState(t, consumer, c, p)
		m := c.Meta[p]
		switch {
		case m == nil || m.Base > start || m.End() < start:
			if m != nil {
				c.Prune(m, m.End())
			}
			m = &plan.Meta{Base: start}
			c.Meta[p] = m
		case m.Base < start:
			c.Prune(m, start)
		}
		if to := min(start+q.h.Window(), t.Parts[p].End); m.End() < to {
			recs := t.Parts[p].Recs
			if i := sort.Search(len(recs), func(i int) bool { return recs[i].Base+recs[i].Count() >= to }); i < len(recs) {
				to = recs[i].Base + recs[i].Count()
			}
			jobs = append(jobs, job{p, m.End(), to})
		}
	}
	room := plan.BodyCache - q.cfg.Caches.Bodies
	q.h.Unlock()
	for _, j := range jobs {
		var got []plan.MetaEnt
		first := int64(-1)
		err := q.h.Scan(ctx, topic, topicstore.ScanRange{Partition: j.p, Start: j.from, End: j.to}, func(m *topicstore.Message) bool {
			if first < 0 {
				first = m.Offset
			}
			e := plan.MetaEnt{Written: m.WrittenAt.UnixNano(), Delay: int64(m.Delay), Size: int64(len(m.Body)), Group: m.MessageGroupID}
			if room >= e.Size {
				room -= e.Size
				c := m.Clone()
				e.Msg = &c
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
		q.h.Lock()
		if _, _, c2, err := q.cfg.Caches.Lookup(q.cfg.Fold, topic, consumer); err == nil && c2 == c {
			m := c.Meta[j.p]
			switch {
			case m.End() == first:
			case m.End() < first && len(m.Ents) == 0: // retention moved the start meanwhile
				m.Base = first
			default:
				got = nil
			}
			for _, e := range got {
				if e.Msg != nil {
					c.Drop(-e.Size)
				}
			}
			m.Ents = append(m.Ents, got...)
		}
		q.h.Unlock()
	}
	return nil
}
