package retain

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"topicgate/topicstore"
	"topicgate/topicstore/jetstream/fold"
	"topicgate/topicstore/jetstream/jsext"
)

// Host is what retention needs of the store.
type Host interface {
	// Lock and Unlock are the store's lock: the fold's state (Config.Fold)
	// is read only under it.
	sync.Locker
	// PublishBatch publishes msgs as one atomic batch, conditional as
	// their headers say.
	PublishBatch(ctx context.Context, msgs []*nats.Msg) (*jsext.BatchAck, error)
	// WaitApplied blocks until the fold has applied seq; it fails with
	// topicstore.ErrUnavailable when that takes longer than the store's
	// timeout.
	WaitApplied(ctx context.Context, seq uint64) error
	// Purge deletes the messages on subject below sequence below.
	Purge(ctx context.Context, subject string, below uint64) error
	// DeleteMsg deletes message seq; one already gone is no error.
	DeleteMsg(ctx context.Context, seq uint64) error
	// Unavailable wraps a cluster error so that the caller can tell it
	// apart (topicstore.ErrUnavailable).
	Unavailable(err error) error
}

// Config is what retention knows of its gateway.
type Config struct {
	Gateway  string        // this gateway's id (its guards' subjects)
	Subjects fold.Subjects // the stream's subjects
	Fold     *fold.State   // the fold's state, read under the host's lock
	Timeout  time.Duration // bounds each request to the cluster
}

// Retention moves partitions' starts and purges what is below them.
type Retention struct {
	cfg Config
	h   Host
}

// New returns the retention of a store.
func New(cfg Config, h Host) *Retention { return &Retention{cfg: cfg, h: h} }

// cut is one partition's new start, as decided under the lock.
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

// Run applies retention at now. For each partition it finds the first
// batch to keep (written within the retention period, and within
// retention_storage_mb; never past an important consumer's position),
// publishes the partition's new start and then purges the batches before
// it from the stream. The last batch of a partition is never purged (its
// subject's sequence keeps appends contiguous); a start at the end makes
// it invisible. Any gateway may run it: a start only moves forward, and
// purging what is below it twice is harmless. It returns how many
// offsets the starts moved past.
func (r *Retention) Run(ctx context.Context, now time.Time) (int64, error) {
	var cuts []cut
	r.h.Lock()
	for _, t := range r.cfg.Fold.ByName {
		for p, ps := range t.Parts {
			if c, ok := r.cutOf(t, int32(p), ps, now); ok {
				cuts = append(cuts, c)
			}
		}
	}
	r.h.Unlock()
	var deleted int64
	for _, c := range cuts {
		moved, err := r.apply(ctx, c)
		if err != nil {
			return deleted, err
		}
		if moved {
			deleted += c.start - c.old
		}
	}
	return deleted, nil
}

// cutOf decides partition p of t's new start at now: ok is false when it
// stays. It runs under the host's lock.
func (r *Retention) cutOf(t *fold.Topic, p int32, ps *fold.Part, now time.Time) (cut, bool) {
	period := t.Rec.Config.RetentionPeriod
	if period <= 0 {
		period = topicstore.DefaultRetention
	}
	expire := now.Add(-period).UnixMicro()
	limit := t.Rec.Config.RetentionStorageMB << 20
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
			if st := t.Pos[c.Name][p]; st != nil {
				seq = st.Seq
			}
			checks[r.cfg.Subjects.Position(t.Rec.ID, c.Name, p)] = seq
		}
		switch {
		case c.Important:
			start = min(start, t.Position(c.Name, p))
		case c.AvailabilityPeriod > 0:
			// What the consumer has not committed stays for the
			// availability period, and no longer.
			young := ps.End
			avail := now.Add(-c.AvailabilityPeriod).UnixMicro()
			if i := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].WrittenAt >= avail }); i < len(ps.Recs) {
				young = ps.Recs[i].Base
			}
			start = min(start, max(t.Position(c.Name, p), young))
		}
	}
	if start <= ps.Start {
		return cut{}, false
	}
	j := sort.Search(len(ps.Recs), func(i int) bool { return ps.Recs[i].Base+ps.Recs[i].Count() > start })
	j = min(j, len(ps.Recs)-1) // the last batch stays
	c := cut{id: t.Rec.ID, part: p, start: start, purge: ps.Recs[j].Seq, old: ps.Start,
		prev: ps.StartSeq, checks: checks}
	for _, rec := range ps.Recs[:j] {
		if ref := ps.Refs[rec.Seq]; ref != 0 {
			c.refs = append(c.refs, ref)
		}
	}
	return c, true
}

// apply publishes c's start and purges what is below it; moved is false
// when a position c was decided from moved meanwhile.
func (r *Retention) apply(ctx context.Context, c cut) (moved bool, err error) {
	// The start moves only if no position it was decided from moved
	// since: an important consumer that rewinds meanwhile wins, and
	// the next run decides again.
	m := nats.NewMsg(r.cfg.Subjects.Start(c.id, c.part))
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
		g := nats.NewMsg(r.cfg.Subjects.Guard(c.id, r.cfg.Gateway))
		g.Header.Set(natsjs.MsgRollup, natsjs.MsgRollupSubject)
		g.Header.Set(natsjs.ExpectedLastSubjSeqHeader, strconv.FormatUint(c.checks[subj], 10))
		g.Header.Set(natsjs.ExpectedLastSubjSeqSubjHeader, subj)
		batch = append(batch, g)
	}
	rctx, cancel := r.request(ctx)
	ack, err := r.h.PublishBatch(rctx, batch)
	cancel()
	if err != nil {
		if jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequence || jsext.ErrorCode(err) == jsext.ErrCodeWrongLastSequenceConstant {
			return false, nil // a position moved: decided again at the next run
		}
		return false, r.h.Unavailable(err)
	}
	if err := r.h.WaitApplied(ctx, ack.Sequence); err != nil {
		return false, err
	}
	rctx, cancel = r.request(ctx)
	err = r.h.Purge(rctx, r.cfg.Subjects.Data(c.id, c.part), c.purge)
	cancel()
	if err != nil {
		return false, r.h.Unavailable(err)
	}
	for _, seq := range c.refs {
		rctx, cancel = r.request(ctx)
		err := r.h.DeleteMsg(rctx, seq)
		cancel()
		if err != nil {
			return false, r.h.Unavailable(err)
		}
	}
	return true, nil
}

// request returns a context bounded by the store's timeout.
func (r *Retention) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.cfg.Timeout)
}

// Drained lists t's inactive, emptied, fully read partitions not yet
// marked deleted. It runs under the host's lock.
func Drained(t *fold.Topic) []int32 {
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
			if st := pos[int32(i)]; st != nil && !st.Reset && st.Off != fold.NoOffset && st.Off < ps.End {
				done = false
			}
		}
		if done {
			out = append(out, int32(i))
		}
	}
	return out
}
