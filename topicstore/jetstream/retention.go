package jetstream

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// RunRetention implements topicstore.Store. For each partition it finds
// the first batch to keep (written within the retention period, and
// within retention_storage_mb; never past an important consumer's
// position), publishes the partition's new start and then purges the
// batches before it from the stream. The last batch of a partition is
// never purged (its subject's sequence keeps appends contiguous); a start
// at the end makes it invisible. Any gateway may run it: a start only
// moves forward, and purging what is below it twice is harmless. Then it
// removes the producers expired at now (producers.go).
func (s *Store) RunRetention(ctx context.Context, now time.Time) (int64, error) {
	type cut struct {
		id    uint64
		part  int32
		start int64
		purge uint64 // purge messages of the subject below this sequence
		old   int64
		refs  []uint64 // staged chunks only the purged batches reference
		// prev is the start subject's last sequence; checks the
		// positions the cut was decided from (important consumers,
		// availability periods), each with its subject's last sequence.
		prev   uint64
		checks map[string]uint64
	}
	var cuts []cut
	s.mu.Lock()
	for _, t := range s.fold.ByName {
		period := t.Rec.Config.RetentionPeriod
		if period <= 0 {
			period = topicstore.DefaultRetention
		}
		expire := now.Add(-period).UnixMicro()
		limit := t.Rec.Config.RetentionStorageMB << 20
		for p, ps := range t.Parts {
			keep := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].WrittenAt >= expire })
			if limit > 0 {
				var size int64
				i := len(ps.Recs)
				for i > 0 && size+ps.Recs[i-1].Bytes() <= limit {
					size += ps.Recs[i-1].Bytes()
					i--
				}
				keep = max(keep, i)
			}
			start := ps.End
			if keep < len(ps.Recs) {
				start = ps.Recs[keep].Base
			}
			checks := map[string]uint64{}
			for _, c := range t.Rec.Config.Consumers {
				if c.Important || c.AvailabilityPeriod > 0 {
					var seq uint64
					if st := t.Pos[c.Name][int32(p)]; st != nil {
						seq = st.Seq
					}
					checks[s.subj.Position(t.Rec.ID, c.Name, int32(p))] = seq
				}
				switch {
				case c.Important:
					start = min(start, t.Position(c.Name, int32(p)))
				case c.AvailabilityPeriod > 0:
					// What the consumer has not committed stays for the
					// availability period, and no longer.
					young := ps.End
					avail := now.Add(-c.AvailabilityPeriod).UnixMicro()
					if i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].WrittenAt >= avail }); i < len(ps.Recs) {
						young = ps.Recs[i].Base
					}
					start = min(start, max(t.Position(c.Name, int32(p)), young))
				}
			}
			if start <= ps.Start {
				continue
			}
			j := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].Base+ps.Recs[i].Count() > start })
			j = min(j, len(ps.Recs)-1) // the last batch stays
			c := cut{id: t.Rec.ID, part: int32(p), start: start, purge: ps.Recs[j].Seq, old: ps.Start,
				prev: ps.StartSeq, checks: checks}
			for _, r := range ps.Recs[:j] {
				if ref := ps.Refs[r.Seq]; ref != 0 {
					c.refs = append(c.refs, ref)
				}
			}
			cuts = append(cuts, c)
		}
	}
	s.mu.Unlock()
	var deleted int64
	for _, c := range cuts {
		// The start moves only if no position it was decided from moved
		// since: an important consumer that rewinds meanwhile wins, and
		// the next run decides again.
		m := nats.NewMsg(s.subj.Start(c.id, c.part))
		m.Header.Set(fold.HStart, strconv.FormatInt(c.start, 10))
		m.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject) // a partition's start is its last message
		jsext.Expect(m, c.prev)
		batch := []*nats.Msg{m}
		subjects := make([]string, 0, len(c.checks))
		for subj := range c.checks {
			subjects = append(subjects, subj)
		}
		sort.Strings(subjects)
		for _, subj := range subjects {
			g := nats.NewMsg(s.subj.Guard(c.id, s.stage.gw))
			g.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
			g.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(c.checks[subj], 10))
			g.Header.Set(natsjs.ExpectedLastSubjSeqSubjHeader, subj)
			batch = append(batch, g)
		}
		rctx, cancel := s.request(ctx)
		ack, err := s.io.publishBatch(rctx, batch)
		cancel()
		if err != nil {
			if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence || jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequenceConstant {
				continue // a position moved: decided again at the next run
			}
			return deleted, s.unavailable(err)
		}
		if err := s.waitApplied(ctx, ack.Sequence); err != nil {
			return deleted, err
		}
		rctx, cancel = s.request(ctx)
		err = s.stream.Purge(rctx, natsjs.WithPurgeSubject(s.subj.Data(c.id, c.part)), natsjs.WithPurgeSequence(c.purge))
		cancel()
		if err != nil {
			return deleted, s.unavailable(err)
		}
		for _, seq := range c.refs {
			rctx, cancel = s.request(ctx)
			err := s.stream.DeleteMsg(rctx, seq)
			cancel()
			if err != nil && !errors.Is(err, natsjs.ErrMsgNotFound) {
				return deleted, s.unavailable(err)
			}
		}
		deleted += c.start - c.old
	}
	if err := s.retireDrained(ctx); err != nil {
		return deleted, err
	}
	if err := s.purgeLeftovers(ctx, now); err != nil {
		return deleted, err
	}
	if _, err := s.compactProducers(ctx, now); err != nil {
		return deleted, err
	}
	_, err := s.expireProducers(ctx, now)
	return deleted, err
}

// retireDrained marks deleted the inactive partitions that retention
// emptied and that every consumer with a stored position has read to
// their end (a layout change, as in the embedded store).
func (s *Store) retireDrained(ctx context.Context) error {
	s.mu.Lock()
	var names []string
	for name, t := range s.fold.ByName {
		if drained(t) != nil {
			names = append(names, name)
		}
	}
	s.mu.Unlock()
	for _, name := range names {
		err := s.catalogChange(ctx, name, func(old *fold.Topic) (*fold.CatalogRec, error) {
			if old == nil {
				return nil, errNothing // dropped meanwhile; nil would be a drop
			}
			d := drained(old)
			if d == nil {
				return nil, errNothing
			}
			rec := old.Rec
			rec.Layout = old.Rec.Layout.Clone()
			for _, p := range d {
				rec.Layout.Parts[p].Deleted = true
			}
			return &rec, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

var errNothing = errors.New("nothing to change")

// drained lists t's inactive, emptied, fully read partitions not yet
// marked deleted. It runs under s.mu.
func drained(t *fold.Topic) []int32 {
	var out []int32
	for i, pl := range t.Rec.Layout.Parts {
		if !pl.Inactive || pl.Deleted || i >= len(t.Parts) {
			continue
		}
		ps := t.Parts[i]
		if ps.Start < ps.End {
			continue
		}
		done := true
		for _, pos := range t.Pos {
			if st := pos[int32(i)]; st != nil && !st.Reset && st.Off < ps.End {
				done = false
			}
		}
		if done {
			out = append(out, int32(i))
		}
	}
	return out
}
