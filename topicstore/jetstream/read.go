package jetstream

import (
	"topicgate/topicstore/decide"
	"topicgate/topicstore/jetstream/fold"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/jsext"
)

// Scan implements topicstore.Store: it finds the batches of the range in
// the fold's index and fetches each from the stream (a direct get, served
// by any replica that is current).
func (s *Store) Scan(ctx context.Context, topic string, r topicstore.ScanRange, fn func(m *topicstore.Message) bool) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return topicstore.ErrClosed
	}
	t := s.fold.ByName[topic]
	if t == nil {
		s.mu.Unlock()
		return fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Parts) {
		s.mu.Unlock()
		return fmt.Errorf("%w: topic %q partition %d", topicstore.ErrPartitionNotFound, topic, r.Partition)
	}
	ps := t.Parts[r.Partition]
	start, end := max(r.Start, ps.Start), ps.End
	if r.End >= 0 && r.End < end {
		end = r.End
	}
	// The index is copied a slice at a time, from where the scan is: a
	// read of a few messages at the head of a long backlog copies what it
	// reads, not the backlog.
	recs := s.recsFrom(ps, start, nil)
	s.mu.Unlock()
	minAt := int64(0)
	if !r.MinWrittenAt.IsZero() {
		minAt = r.MinWrittenAt.UnixMicro()
	}
	var dec topicstore.MsgDecoder
	for k := 0; ; k++ {
		if k == len(recs) {
			if len(recs) < scanSlice {
				return nil
			}
			last := recs[len(recs)-1]
			s.mu.Lock()
			recs = s.recsFrom(ps, last.Base+last.Count(), recs)
			s.mu.Unlock()
			if len(recs) == 0 {
				return nil
			}
			k = 0
		}
		rec := recs[k]
		if rec.Base >= end {
			return nil
		}
		if rec.WrittenAt < minAt {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := s.recordBatch(ctx, rec.Seq)
		if err != nil {
			return s.unavailable(err)
		}
		h, payload, err := topicstore.DecodeBatchHeader(data)
		if err != nil {
			return err
		}
		if h.Ref { // a transaction's staged chunk, joined by reference
			staged, err := s.recordBatch(ctx, h.Seq)
			if err != nil {
				return s.unavailable(err)
			}
			payload = staged
		}
		if err := topicstore.CheckCRC(h, payload); err != nil {
			return err
		}
		written := fold.TimeMicros(h.WrittenAt)
		for off := h.Base; len(payload) > 0 && off < end; off++ {
			entry, rest, err := topicstore.NextEntry(payload)
			if err != nil {
				return err
			}
			payload = rest
			if off < start {
				continue
			}
			m, err := dec.Decode(entry)
			if err != nil {
				return err
			}
			m.Partition, m.Offset, m.WrittenAt = r.Partition, off, written
			if !fn(m) {
				return nil
			}
		}
	}
}

// scanSlice is how many index entries Scan copies at a time.
const scanSlice = 256

// recsFrom copies into buf (reused) up to scanSlice of ps's batches, from
// the one holding offset from. It runs under s.mu.
func (s *Store) recsFrom(ps *fold.Part, from int64, buf []fold.Rec) []fold.Rec {
	i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].Base+ps.Recs[i].Count() > from })
	return append(buf[:0], ps.Recs[i:min(i+scanSlice, len(ps.Recs))]...)
}

// recordBatch fetches the record batch message at seq: by a direct get,
// which any replica that counts itself current answers, and, if that one
// has not stored seq yet (it lags the node this gateway's fold read it
// from by a moment, or is catching up after a restart: "message not
// found"), from the stream's leader, which has every committed message.
// Both can miss it for a moment: a leader elected a moment ago answers
// before it has applied its whole log (seen once in TestClusterCrash,
// under load on two cores, with no node down). So a miss is asked again,
// backing off from a millisecond, until the store's timeout; a message
// still missing then is reported with the stream's state, so a real loss
// is told apart from a lag.
func (s *Store) recordBatch(ctx context.Context, seq uint64) ([]byte, error) {
	if data, ok := s.cache.get(seq); ok {
		return data, nil
	}
	data, err := s.io.getRecord(ctx, seq)
	if err == nil {
		s.cache.put(seq, data)
	}
	return data, err
}

// fetchRecordBatch is recordBatch past the cache. What a stream without a
// leader cannot answer (an election: no replica serves direct gets, and
// there is no leader to ask) is asked again, like a miss, for as long as a
// commit would ride it out (Options.CommitTimeout, cut short by ctx): a
// read during an election is a delay, not an error.
func (s *Store) fetchRecordBatch(ctx context.Context, seq uint64) ([]byte, error) {
	deadline := time.Now().Add(s.opts.CommitTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	missed := time.Now().Add(s.opts.Timeout) // a message missing this long is reported
	var last error
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		rctx, cancel := s.request(ctx)
		raw, err := s.stream.GetMsg(rctx, seq)
		if err == nil {
			cancel()
			return raw.Data, nil
		}
		if !errors.Is(err, natsjs.ErrMsgNotFound) && !transientRead(err) {
			cancel()
			return nil, err
		}
		data, lerr := s.leaderGet(rctx, seq)
		cancel()
		if lerr == nil {
			return data, nil
		}
		if !errors.Is(lerr, natsjs.ErrMsgNotFound) && !transientRead(lerr) {
			return nil, lerr
		}
		last = lerr
		now := time.Now()
		if ctx.Err() != nil || !now.Before(deadline) || errors.Is(lerr, natsjs.ErrMsgNotFound) && !now.Before(missed) {
			return nil, s.missing(ctx, seq, last)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, s.missing(ctx, seq, last)
		case <-t.C:
		}
	}
}

// transientRead reports whether a read failed because the stream could
// not answer this moment (no leader, no replica serving, no answer in
// time, a connection moving to another node), not because of what it
// asked.
func transientRead(err error) bool {
	return noLeader(err) || jsext.ErrorCode(err) == errCodeTemporarilyUnavailable || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.Is(err, nats.ErrDisconnected)
}

// missing describes a message the fold holds that no node returned: the
// stream's first and last sequences and its count of interior deletes.
func (s *Store) missing(ctx context.Context, seq uint64, err error) error {
	ictx, cancel := s.request(ctx)
	defer cancel()
	if info, ierr := s.stream.Info(ictx); ierr == nil {
		st := info.State
		return fmt.Errorf("%w (stream first %d, last %d, %d deleted; leader %s)", err, st.FirstSeq, st.LastSeq, st.NumDeleted, info.Cluster.Leader)
	}
	return err
}

// leaderGet fetches the data of the message at seq from the stream's
// leader ($JS.API.STREAM.MSG.GET, which only the leader answers).
func (s *Store) leaderGet(ctx context.Context, seq uint64) ([]byte, error) {
	req, err := json.Marshal(map[string]uint64{"seq": seq})
	if err != nil {
		return nil, err
	}
	resp, err := s.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+s.opts.Stream, req)
	if err != nil {
		return nil, err
	}
	var r struct {
		Error   *natsjs.APIError `json:"error"`
		Message *struct {
			Data []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, fmt.Errorf("stream %s message %d: %w", s.opts.Stream, seq, err)
	}
	if r.Error != nil || r.Message == nil {
		err := error(natsjs.ErrMsgNotFound)
		if r.Error != nil && r.Error.ErrorCode != natsjs.JSErrCodeMessageNotFound {
			err = r.Error
		}
		return nil, fmt.Errorf("stream %s message %d, which the fold holds, is gone from the leader too: %w", s.opts.Stream, seq, err)
	}
	return r.Message.Data, nil
}

// Producers implements topicstore.Store.
func (s *Store) Producers(topic string) ([]topicstore.ProducerInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	now := s.opts.Clock()
	var out []topicstore.ProducerInfo
	for id, ps := range t.Prods {
		if now.Sub(ps.At) > s.expiry(t) {
			continue
		}
		out = append(out, producerInfo(t, id, ps))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out, nil
}

// Producer implements topicstore.Store.
func (s *Store) Producer(topic, producer string) (topicstore.ProducerInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[topic]
	if t == nil {
		return topicstore.ProducerInfo{}, false
	}
	ps := t.Prods[producer]
	if ps == nil || s.opts.Clock().Sub(ps.At) > s.expiry(t) {
		return topicstore.ProducerInfo{}, false
	}
	return producerInfo(t, producer, ps), true
}

// expiry is how long t's producers live without writes.
func (s *Store) expiry(t *fold.Topic) time.Duration {
	return topicstore.ProducerExpiry(&t.Rec.Config, s.opts.ProducerExpiry)
}

// producerInfo describes a producer; one bound to a partition that split
// is unbound (-1) until its next write binds it again.
func producerInfo(t *fold.Topic, id string, ps *fold.Producer) topicstore.ProducerInfo {
	part := ps.Part
	if decide.Inactive(&t.Rec.Layout, part) {
		part = -1
	}
	return topicstore.ProducerInfo{ProducerID: id, Partition: part, MaxSeqNo: ps.MaxNo, LastWrite: ps.At}
}

// Positions implements topicstore.Store.
func (s *Store) Positions(topic, consumer string) (map[int32]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	if !t.HasConsumer(consumer) {
		return nil, fmt.Errorf("%w: topic %q consumer %q", topicstore.ErrConsumerNotFound, topic, consumer)
	}
	out := make(map[int32]int64, len(t.Parts))
	for p := range t.Parts {
		out[int32(p)] = t.Position(consumer, int32(p))
	}
	return out, nil
}

// SetPosition implements topicstore.Store: an unconditional position
// commit.
func (s *Store) SetPosition(ctx context.Context, topic, consumer string, partition int32, offset int64) error {
	_, err := s.commit(ctx, &topicstore.CommitRequest{Positions: []topicstore.PositionUpdate{
		{Topic: topic, Consumer: consumer, Partition: partition, Offset: offset, Expect: -1}}}, true)
	return err
}

// OffsetForTime implements topicstore.Store.
func (s *Store) OffsetForTime(topic string, at time.Time) (map[int32]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	out := make(map[int32]int64, len(t.Parts))
	for p, ps := range t.Parts {
		out[int32(p)] = ps.OffsetAt(at)
	}
	return out, nil
}

// Changed implements topicstore.Store: the channel is closed when the
// fold applies the topic's next record batch (from any gateway) or its
// drop or alteration.
func (s *Store) Changed(topic string) (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.fold.ByName[topic]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", topicstore.ErrTopicNotFound, topic)
	}
	return t.Changed, nil
}

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
